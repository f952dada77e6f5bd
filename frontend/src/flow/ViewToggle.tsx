/** The toolbar's switch between the Flow view and the Nodes view (V toggles it). */
import type { CanvasView } from "./viewPref";

export function ViewToggle({ view, onView }: { view: CanvasView; onView: (view: CanvasView) => void }) {
  return (
    <div className="view-toggle" role="group" aria-label="Canvas view">
      <button type="button" className="btn btn-tool" aria-pressed={view === "flow"} onClick={() => onView("flow")} title="Flow view: one box per model, arrows for the data (V)">
        Flow
      </button>
      <button type="button" className="btn btn-tool" aria-pressed={view === "nodes"} onClick={() => onView("nodes")} title="Nodes view: router cards with their steps, as in the InferenceGraph (V)">
        Nodes
      </button>
    </div>
  );
}
