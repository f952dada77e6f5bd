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

/** Which way the Flow view runs: chosen by the view for each graph ("auto"), or the user's choice. */
export type DirectionPref = "auto" | "LR" | "TB";

export const DIRECTION_KEY = "inference-graph-studio:flow-direction";

export function loadDirection(store: Store | null): DirectionPref {
  try {
    const value = store?.getItem(DIRECTION_KEY);
    return value === "LR" || value === "TB" ? value : "auto";
  } catch {
    return "auto";
  }
}

export function saveDirection(store: (Store & Pick<Storage, "removeItem">) | null, pref: DirectionPref): void {
  try {
    if (pref === "auto") store?.removeItem(DIRECTION_KEY);
    else store?.setItem(DIRECTION_KEY, pref);
  } catch {
    /* as above: the choice then lasts for this page only */
  }
}
