/** An arrow of the Flow view: its orthogonal route from the layout when it has one, its label and its "+" button. */
import { BaseEdge, EdgeLabelRenderer, getSmoothStepPath, type Edge, type EdgeProps } from "@xyflow/react";
import { memo, useContext, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { filterServices } from "../canvas/paletteServices";
import { shorten } from "../canvas/labels";
import type { Position } from "../graph/types";
import { FlowActionsContext } from "./FlowBoxNode";
import { LABEL_CHARS } from "./layout";
import type { ArrowKind, InsertPoint } from "./project";

export interface FlowArrowData extends Record<string, unknown> {
  kind: ArrowKind;
  label: string | null;
  points: Position[] | null;
  /** Where the layout put the label (with the "+"), when it routed the arrow. */
  labelAt: Position | null;
  /** Where "+" inserts a model; null: no "+" on this arrow. */
  insert: InsertPoint | null;
  /** Words for the "+" button: "between A and B". */
  between: string;
  run: string | null;
}

export type FlowArrow = Edge<FlowArrowData, "flowArrow">;

/** An SVG path through `points` and the middle of its middle segment (where the label goes). */
export function polyline(points: readonly Position[]): { path: string; x: number; y: number } {
  const path = points.map((p, i) => `${i === 0 ? "M" : "L"} ${p.x} ${p.y}`).join(" ");
  // The label goes on the last segment that runs left to right (the one entering the box), else
  // on the middle one.
  let i = points.length - 1;
  while (i > 0 && points[i].y !== points[i - 1].y) i--;
  if (i === 0) i = Math.max(1, Math.ceil(points.length / 2));
  const a = points[i - 1];
  const b = points[i];
  return { path, x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

/** More services than this and the menu filters them by name (as the palette does). */
const FILTER_FROM = 8;

/**
 * What "+" on an arrow inserts: one of the palette's services, or a blank model to fill in. A menu
 * under the button (in the page's top layer, above the boxes); Esc or a click elsewhere closes it.
 */
function InsertMenu({ anchor, services, onPick, onClose }: { anchor: HTMLElement; services: readonly string[]; onPick: (service?: string) => void; onClose: () => void }) {
  const [filter, setFilter] = useState("");
  const shown = filterServices(services, filter);
  const r = anchor.getBoundingClientRect();
  const close = () => {
    onClose();
    anchor.focus();
  };
  return createPortal(
    <div className="flow-insert-layer" onPointerDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        className="flow-insert-menu"
        style={{ left: Math.max(8, Math.min(r.left, window.innerWidth - 248)), top: r.bottom + 4 }}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            close();
          } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            const items = [...e.currentTarget.querySelectorAll<HTMLElement>('[role="menuitem"]')];
            const at = items.indexOf(document.activeElement as HTMLElement);
            items[(at + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length]?.focus();
          }
        }}
      >
        {services.length > FILTER_FROM && (
          <input type="search" className="palette-filter" placeholder="Filter services" aria-label="Filter services" value={filter} onChange={(e) => setFilter(e.target.value)} autoFocus />
        )}
        <div className="flow-insert-items" role="menu" aria-label="Insert a model">
          <button type="button" role="menuitem" className="flow-insert-blank" onClick={() => onPick()} autoFocus={services.length <= FILTER_FROM}>
            Blank model (fill in later)
          </button>
          {shown.map((name) => (
            <button type="button" role="menuitem" key={name} className="mono" onClick={() => onPick(name)} title={name}>
              {name}
            </button>
          ))}
        </div>
        {shown.length === 0 && <p className="palette-hint">No service matches “{filter.trim()}”.</p>}
      </div>
    </div>,
    document.body,
  );
}

function FlowArrowView({ id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, data, markerEnd, selected }: EdgeProps<FlowArrow>) {
  const actions = useContext(FlowActionsContext);
  let path: string;
  let lx: number;
  let ly: number;
  if (data?.points && data.points.length >= 2) {
    ({ path, x: lx, y: ly } = polyline(data.points));
    if (data.labelAt) ({ x: lx, y: ly } = data.labelAt);
  } else {
    [path, lx, ly] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 6 });
  }
  const kind = data?.kind ?? "data";
  const insert = data?.insert ?? null;
  const plusRef = useRef<HTMLButtonElement>(null);
  const [menu, setMenu] = useState(false);
  const offer = actions.services.length > 0;
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} className={`flow-arrow flow-arrow-${kind}${data?.run ? ` flow-arrow-run-${data.run}` : ""}${selected ? " selected" : ""}`} />
      {(data?.label || insert) && (
        <EdgeLabelRenderer>
          <div className="flow-arrow-label nodrag nopan" style={{ transform: `translate(-50%, -50%) translate(${lx}px, ${ly}px)` }} data-arrow={id}>
            {data?.label && (
              <span className={`flow-label flow-label-${kind}`} title={data.label}>
                {shorten(data.label, LABEL_CHARS)}
              </span>
            )}
            {insert && (
              <button
                ref={plusRef}
                type="button"
                className="flow-plus"
                onClick={() => (offer ? setMenu((m) => !m) : actions.insert(insert))}
                aria-haspopup={offer ? "menu" : undefined}
                aria-expanded={offer ? menu : undefined}
                aria-label={`Insert a model ${data?.between ?? "here"}`}
                title={`Insert a model ${data?.between ?? "here"}${offer ? ": pick a service" : ""}`}
              >
                +
              </button>
            )}
            {insert && menu && plusRef.current && (
              <InsertMenu
                anchor={plusRef.current}
                services={actions.services}
                onClose={() => setMenu(false)}
                onPick={(service) => {
                  setMenu(false);
                  actions.insert(insert, service);
                }}
              />
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const FlowArrowEdge = memo(FlowArrowView);
