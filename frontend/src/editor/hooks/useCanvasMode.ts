import { useCallback, useState } from "react";
import { safeStorage } from "../../panels/run/samples";
import { loadView, saveView, type CanvasView } from "../../flow/viewPref";

/** Which view the canvas shows (Flow by default), remembered in the browser. */
export function useCanvasMode(): [CanvasView, (view: CanvasView) => void, () => void] {
  const [mode, setMode] = useState<CanvasView>(() => loadView(safeStorage("local")));
  const choose = useCallback((view: CanvasView) => {
    setMode(view);
    saveView(safeStorage("local"), view);
  }, []);
  const toggle = useCallback(() => {
    setMode((m) => {
      const next = m === "flow" ? "nodes" : "flow";
      saveView(safeStorage("local"), next);
      return next;
    });
  }, []);
  return [mode, choose, toggle];
}
