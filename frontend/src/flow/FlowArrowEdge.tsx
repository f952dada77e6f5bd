/** An arrow of the Flow view: its orthogonal route from the layout when it has one, its label and its "+" button. */
import { BaseEdge, EdgeLabelRenderer, getSmoothStepPath, type Edge, type EdgeProps } from "@xyflow/react";
import { memo, useContext } from "react";
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
              <button type="button" className="flow-plus" onClick={() => actions.insert(insert)} aria-label={`Insert a model ${data?.between ?? "here"}`} title={`Insert a model ${data?.between ?? "here"}`}>
                +
              </button>
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const FlowArrowEdge = memo(FlowArrowView);
