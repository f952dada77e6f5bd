/** Which view of the graph the editor shows (Flow is the default), remembered in the browser. */

export type CanvasView = "flow" | "nodes";

export const VIEW_KEY = "inference-graph-studio:canvas-view";

type Store = Pick<Storage, "getItem" | "setItem">;

export function loadView(store: Store | null): CanvasView {
  try {
    return store?.getItem(VIEW_KEY) === "nodes" ? "nodes" : "flow";
  } catch {
    return "flow";
  }
}

export function saveView(store: Store | null, view: CanvasView): void {
  try {
    store?.setItem(VIEW_KEY, view);
  } catch {
    /* storage may be full or disabled: the choice then lasts for this page only */
  }
}
