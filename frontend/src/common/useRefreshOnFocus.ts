/**
 * Loads now and again whenever the window regains focus: what another tab changed (an environment
 * edited, a graph saved) shows up on return. `load` gets `alive()`, false once the component is gone
 * or `load` has changed, so an answer that arrives late is dropped. Pass a stable `load`
 * (`useCallback`): a new one reloads.
 */
import { useEffect } from "react";

export function useRefreshOnFocus(load: (alive: () => boolean) => void): void {
  useEffect(() => {
    let cancelled = false;
    const alive = () => !cancelled;
    const refresh = () => load(alive);
    refresh();
    window.addEventListener("focus", refresh);
    return () => {
      cancelled = true;
      window.removeEventListener("focus", refresh);
    };
  }, [load]);
}
