import { useReactFlow } from "@xyflow/react";
import { useCallback } from "react";
import { measuredSizes } from "../../canvas/measured";

/** Where the canvas looks and what React Flow measured: for placing new cards and moving the view. */
export function useCanvasView() {
  const flow = useReactFlow();

  /** The flow position at the middle of the visible canvas (a third from the top). */
  const viewCenter = useCallback(() => {
    const rect = document.querySelector(".canvas")?.getBoundingClientRect();
    if (!rect) return { x: 0, y: 0 };
    const p = flow.screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 3 });
    return { x: Math.round(p.x - 130), y: Math.round(p.y - 40) };
  }, [flow]);

  /** The cards' sizes as React Flow measured them (placement estimates the others). */
  // Only the Nodes view's cards: the Flow view's boxes are no cards (and may share a name).
  const sizes = useCallback(() => measuredSizes(flow.getNodes().filter((n) => n.type === "router")), [flow]);

  const fitView = useCallback((duration = 250) => void flow.fitView({ padding: 0.2, duration, maxZoom: 1.2, includeHiddenNodes: true }), [flow]);
  const focusNode = useCallback((name: string) => void flow.fitView({ nodes: [{ id: name }], padding: 0.6, duration: 300, maxZoom: 1.2, includeHiddenNodes: true }), [flow]);

  return { viewCenter, measuredSizes: sizes, fitView, focusNode };
}
