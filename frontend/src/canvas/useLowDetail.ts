import { useStore, type ReactFlowState } from "@xyflow/react";
import { useCallback, useRef } from "react";
import { lowDetail } from "./lod";

/**
 * Low detail or not at the current zoom of the enclosing React Flow. The selector returns a
 * boolean, so panning and zooming re-render the caller only when the detail level flips: no work
 * per frame that grows with the graph. `initialZoom`: the zoom React Flow will open at, which
 * counts until React Flow has set up its viewport, so that a graph opened fitted far out mounts no
 * card for its first frame.
 */
export function useLowDetail(initialZoom?: number): boolean {
  const low = useRef(false);
  const select = useCallback(
    (s: ReactFlowState) => {
      low.current = lowDetail(s.panZoom === null && initialZoom !== undefined ? initialZoom : s.transform[2], low.current);
      return low.current;
    },
    [initialZoom],
  );
  return useStore(select);
}
