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
