/**
 * The palette: drag a router type onto the canvas (or click to add it in view), drag a step
 * kind into a card (or click to add it to the selected node).
 */
import { ROUTER_TYPES, type RouterType, type TargetKind } from "../graph/types";
import { PALETTE_MIME } from "./RouterNode";

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
}: {
  disabled: boolean;
  canAddStep: boolean;
  onAddNode: (routerType: RouterType) => void;
  onAddStep: (target: TargetKind) => void;
}) {
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
      <p className="palette-hint">Drag from the small square at a step's right edge to a card to call that node.</p>
    </aside>
  );
}
