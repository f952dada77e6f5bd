import { Position as Side, type NodeHandle } from "@xyflow/react";
import { estimatedSize } from "../canvas/measured";
import type { FlowDirection } from "./layout";

/** The side of a box's handles (FlowBoxNode.tsx: 9 px squares, `.react-flow__handle`). */
const HANDLE = 9;

/**
 * Where React Flow will measure a box's two handles (in on the left, out on the right, half-way
 * down: FlowBoxNode.tsx; top to bottom, in at the top and out at the bottom), from its fixed size.
 */
export function boxHandles(width: number, height: number, direction: FlowDirection = "LR"): NodeHandle[] {
  if (direction === "TB") {
    const x = width / 2 - HANDLE / 2;
    return [
      { type: "target", position: Side.Top, x, y: -HANDLE / 2, width: HANDLE, height: HANDLE },
      { type: "source", position: Side.Bottom, x, y: height - HANDLE / 2, width: HANDLE, height: HANDLE },
    ];
  }
  const y = height / 2 - HANDLE / 2;
  return [
    { type: "target", position: Side.Left, x: -HANDLE / 2, y, width: HANDLE, height: HANDLE },
    { type: "source", position: Side.Right, x: width - HANDLE / 2, y, width: HANDLE, height: HANDLE },
  ];
}

interface SizedNode {
  type?: string;
  width?: number;
  height?: number;
  measured?: { width?: number; height?: number };
  handles?: NodeHandle[];
}

/**
 * The boxes React Flow has not measured yet, with their handles given. React Flow renders every
 * node whose handles it does not know, even out of view with `onlyRenderVisibleElements`, to
 * measure them: a large flow would mount all its boxes on opening and unmount most of them at
 * once. With the handles given only the boxes in view are mounted (and measured then). A frame
 * (group) has no handle: it is given none. A measured box keeps the handles React Flow measured.
 * An estimated `measured` size too (canvas/measured.ts): React Flow's fitView waits until every
 * node shown has one.
 */
export function withBoxHandles<T extends SizedNode>(nodes: T[], direction: FlowDirection = "LR"): T[] {
  return nodes.map((n) => {
    if (n.handles || n.measured?.width || !n.width || !n.height) return n;
    return { ...n, handles: n.type === "flowGroup" ? [] : boxHandles(n.width, n.height, direction), measured: estimatedSize(n.width, n.height) };
  });
}
