/**
 * The palette: drag a router type onto the canvas (or click to add it in view), drag a step
 * kind into a card (or click to add it to the selected node). Its services (paletteServices.ts)
 * are models picked by name: in the Flow view one dropped on an arrow is inserted there, on a box
 * runs beside it (or fills a blank box in), on the canvas is added at the end of the pipeline.
 * They come the most used first; when there are many, a box above them filters them by name.
 */
import { useState } from "react";
import { ROUTER_TYPES, type RouterType, type TargetKind } from "../graph/types";
import { filterServices } from "./paletteServices";
import { PALETTE_MIME, PALETTE_ROUTER_MIME } from "./RouterNode";

/** More services than this and the palette shows a box that filters them by name. */
export const SERVICE_FILTER_FROM = 8;

const NODE_HELP: Record<RouterType, string> = {
  Sequence: "Runs steps in order; $response passes the previous result on",
  Switch: "Runs the first step whose condition matches the input",
  Ensemble: "Runs all steps in parallel and merges their JSON",
  Splitter: "Picks one step at random by weight (sum 100)",
};

const STEPS: { target: TargetKind; label: string; help: string }[] = [
  { target: "serviceName", label: "Service step", help: "Calls an InferenceService in the same namespace (serviceName)" },
  { target: "serviceUrl", label: "URL step", help: "POSTs to any URL (serviceUrl)" },
  { target: "nodeName", label: "Node step", help: "Calls another node of this graph (nodeName); draw its handle to a card" },
];

export function Palette({
  disabled,
  canAddStep,
  onAddNode,
  onAddStep,
  services = [],
  flow = false,
}: {
  disabled: boolean;
  canAddStep: boolean;
  onAddNode: (routerType: RouterType) => void;
  onAddStep: (target: TargetKind, service?: string) => void;
  services?: readonly string[];
  /** The Flow view is shown (its own hint). */
  flow?: boolean;
}) {
  const [filter, setFilter] = useState("");
  const filtering = services.length > SERVICE_FILTER_FROM;
  const shown = filtering ? filterServices(services, filter) : services;
  return (
    <aside className="palette" aria-label="Palette">
      <div className="palette-title">Nodes</div>
      {ROUTER_TYPES.map((t) => (
        <button
          key={t}
          type="button"
          className={`palette-item palette-${t.toLowerCase()}`}
          draggable={!disabled}
          disabled={disabled}
          title={`${NODE_HELP[t]}. Drag onto the canvas or click to add.`}
          onDragStart={(e) => {
            e.dataTransfer.setData(PALETTE_MIME, JSON.stringify({ kind: "node", routerType: t }));
            e.dataTransfer.setData(`${PALETTE_ROUTER_MIME}${t.toLowerCase()}`, t);
            e.dataTransfer.effectAllowed = "copy";
          }}
          onClick={() => onAddNode(t)}
        >
          {t}
        </button>
      ))}
      <div className="palette-title">Steps</div>
      {STEPS.map((s) => (
        <button
          key={s.target}
          type="button"
          className={`palette-item palette-step palette-${s.target}`}
          draggable={!disabled}
          disabled={disabled}
          aria-disabled={!canAddStep || undefined}
          title={`${s.help}. Drag into a card${canAddStep ? " or click to add to the selected node" : ""}.`}
          onDragStart={(e) => {
            e.dataTransfer.setData(PALETTE_MIME, JSON.stringify({ kind: "step", target: s.target }));
            e.dataTransfer.effectAllowed = "copy";
          }}
          onClick={() => canAddStep && onAddStep(s.target)}
        >
          {s.label}
        </button>
      ))}
      <div className="palette-title" id="palette-services">
        Services
      </div>
      {filtering && (
        <input
          type="search"
          className="palette-filter"
          placeholder="Filter services"
          aria-label="Filter services"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      )}
      <div className="palette-services" role="group" aria-labelledby="palette-services">
        {shown.map((name) => (
          <button
            key={name}
            type="button"
            className="palette-item palette-step palette-service mono"
            draggable={!disabled}
            disabled={disabled}
            aria-disabled={!canAddStep || undefined}
            title={`${name}: a step that calls this InferenceService. Drag onto an arrow (insert), a box (in parallel) or the canvas (at the end) in the Flow view, or into a card${canAddStep ? "; click to add to the selected node" : ""}.`}
            onDragStart={(e) => {
              e.dataTransfer.setData(PALETTE_MIME, JSON.stringify({ kind: "step", target: "serviceName", service: name }));
              e.dataTransfer.effectAllowed = "copy";
            }}
            onClick={() => canAddStep && onAddStep("serviceName", name)}
          >
            <span className="palette-service-name">{name}</span>
          </button>
        ))}
        {services.length === 0 && <p className="palette-hint">The services your graphs call and your environments map show here.</p>}
        {services.length > 0 && shown.length === 0 && <p className="palette-hint">No service matches “{filter.trim()}”.</p>}
      </div>
      <p className="palette-hint">
        {flow ? "Drop a step on an arrow to insert it, on a box to run it in parallel." : "Drag from the small square at a step's right edge to a card to call that node."}
      </p>
    </aside>
  );
}
