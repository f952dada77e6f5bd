import { useStore, type ReactFlowState } from "@xyflow/react";
import { createContext, useCallback, useRef } from "react";
import { lowDetail } from "./lod";

/** Whether the canvas around its nodes and edges draws low detail (see lod.ts). */
export const LowDetailContext = createContext(false);

/**
 * Low detail or not at the current zoom of the enclosing React Flow. The selector returns a
 * boolean, so panning and zooming re-render the caller only when the detail level flips: no work
 * per frame that grows with the graph.
 */
export function useLowDetail(): boolean {
  const low = useRef(false);
  const select = useCallback((s: ReactFlowState) => {
    low.current = lowDetail(s.transform[2], low.current);
    return low.current;
  }, []);
  return useStore(select);
}
