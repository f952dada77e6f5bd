import { Position as Side, type NodeHandle } from "@xyflow/react";
import type { Size } from "../graph/placement";

/** The cards' sizes as React Flow measured them; placement estimates the cards not measured yet. */
export function measuredSizes(nodes: { id: string; measured?: { width?: number; height?: number } }[]): Map<string, Size> {
  const out = new Map<string, Size>();
  for (const n of nodes) if (n.measured?.width && n.measured.height) out.set(n.id, { width: n.measured.width, height: n.measured.height });
  return out;
}

/**
 * The new copies of the nodes (derived anew from the graph after an edit, a selection or new
 * issues) with the size React Flow measured for the same node before. A node handed to React Flow
 * without `measured` has its handles forgotten and is rendered again to be measured, even with
 * `onlyRenderVisibleElements`: every box of a large graph would be mounted once more.
 */
export function keepMeasured<T extends { id: string; measured?: { width?: number; height?: number } }>(next: T[], prev: readonly T[]): T[] {
  const measured = new Map<string, NonNullable<T["measured"]>>();
  for (const n of prev) if (n.measured?.width && n.measured.height) measured.set(n.id, n.measured);
  if (!measured.size) return next;
  return next.map((n) => {
    const m = measured.get(n.id);
    return m && !n.measured ? { ...n, measured: m } : n;
  });
}

/**
 * A size for a node React Flow has not measured yet, from its estimate: half a pixel over it, never
 * what the browser measures (whole pixels), so that React Flow always reports the real size (a
 * dimensions change) when the node is mounted, and the node then loses its estimates.
 */
export function estimatedSize(width: number, height: number): { width: number; height: number } {
  return { width: width + 0.5, height: height + 0.5 };
}

/** Where a card's handles sit (RouterNode.tsx and its CSS: as measured at 100 %), for estimates. */
const CARD = { in: { x: -11, width: 10, height: 14 }, out: { x: 259.5, size: 9 }, firstRow: 61, row: 43, foot: 22 };

interface CardNode {
  initialWidth?: number;
  initialHeight?: number;
  measured?: { width?: number; height?: number };
  handles?: NodeHandle[];
  data: { node: { steps: { id: string }[] }; readOnly: boolean };
}

/**
 * The handles of a card React Flow has not measured yet, estimated (its height is its
 * `initialHeight`): React Flow renders every node whose handles it does not know, even out of view
 * with `onlyRenderVisibleElements`, to measure them, so a large graph would mount all its cards on
 * opening and unmount most of them at once. With estimates only the cards in view are mounted; an
 * arrow to a card out of view ends near where it will (exactly once the card has been in view
 * and React Flow measured it). A measured card keeps the handles React Flow measured.
 *
 * The card also gets an estimated `measured` size (see `estimatedSize`): React Flow's fitView
 * waits until every node shown has one.
 */
export function withCardHandles<T extends CardNode>(nodes: T[]): (T & { handles?: NodeHandle[]; measured?: { width?: number; height?: number } })[] {
  return nodes.map((n) => {
    if (n.handles || n.measured?.width || !n.initialWidth || !n.initialHeight) return n;
    const height = n.initialHeight;
    const out = (id: string, y: number): NodeHandle => ({ id, type: "source", position: Side.Right, x: CARD.out.x, y, width: CARD.out.size, height: CARD.out.size });
    const handles: NodeHandle[] = [
      { id: "in", type: "target", position: Side.Left, x: CARD.in.x, y: height / 2 - CARD.in.height / 2, width: CARD.in.width, height: CARD.in.height },
      ...n.data.node.steps.map((step, i) => out(step.id, CARD.firstRow + CARD.row * i)),
    ];
    if (!n.data.readOnly) handles.push(out("__new", height - CARD.foot));
    return { ...n, handles, measured: estimatedSize(n.initialWidth, height) };
  });
}
