import { useCallback, useEffect, useRef, useState } from "react";
import { safeStorage } from "../panels/run/samples";
import { clampWidth, KEY_STEP, loadPanelOpen, loadWidth, MIN_WIDTH, savePanelOpen, saveWidth } from "./panelWidth";

/**
 * The side panel's width, remembered per user. A narrower window keeps the canvas its minimum
 * (the remembered width comes back when it widens).
 */
export function usePanelWidth(user: string) {
  const [width, setWidth] = useState(() => clampWidth(loadWidth(safeStorage("local"), user), window.innerWidth));
  useEffect(() => {
    const onResize = () => setWidth(clampWidth(loadWidth(safeStorage("local"), user), window.innerWidth));
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, [user]);
  return [width, setWidth] as const;
}

/**
 * Whether the side panel is shown, remembered per user. Going to a tab (Run with Ctrl+Enter, the
 * toolbar's History) shows it again: `tab` is the tab shown.
 */
export function usePanelOpen(user: string, tab: string) {
  const [open, setOpen] = useState(() => loadPanelOpen(safeStorage("local"), user));
  const set = useCallback(
    (next: boolean) => {
      setOpen(next);
      savePanelOpen(safeStorage("local"), user, next);
    },
    [user],
  );
  const shownTab = useRef(tab);
  useEffect(() => {
    if (shownTab.current === tab) return;
    shownTab.current = tab;
    set(true);
  }, [tab, set]);
  return [open, set] as const;
}

/** The splitter between canvas and side panel: drag it, or focus it and use the arrow keys. */
export function PanelResizer({ width, user, onWidth }: { width: number; user: string; onWidth: (width: number) => void }) {
  const resizeFrom = useRef<{ x: number; width: number } | null>(null);
  return (
    <div
      className="panel-resizer"
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the side panel"
      aria-valuenow={width}
      aria-valuemin={MIN_WIDTH}
      aria-valuemax={clampWidth(Number.POSITIVE_INFINITY, window.innerWidth)}
      tabIndex={0}
      title="Drag to resize the side panel (or focus it and use ← →, Home, End)"
      onPointerDown={(e) => {
        e.preventDefault();
        e.currentTarget.setPointerCapture(e.pointerId);
        resizeFrom.current = { x: e.clientX, width };
      }}
      onPointerMove={(e) => {
        const from = resizeFrom.current;
        if (from) onWidth(clampWidth(from.width + from.x - e.clientX, window.innerWidth));
      }}
      onPointerUp={() => {
        resizeFrom.current = null;
        saveWidth(safeStorage("local"), user, width);
      }}
      onKeyDown={(e) => {
        const delta = e.key === "ArrowLeft" ? KEY_STEP : e.key === "ArrowRight" ? -KEY_STEP : e.key === "Home" ? Number.POSITIVE_INFINITY : e.key === "End" ? -Number.POSITIVE_INFINITY : 0;
        if (!delta) return;
        e.preventDefault();
        const next = clampWidth(Number.isFinite(delta) ? width + delta : delta > 0 ? Number.MAX_SAFE_INTEGER : MIN_WIDTH, window.innerWidth);
        onWidth(next);
        saveWidth(safeStorage("local"), user, next);
      }}
    />
  );
}
