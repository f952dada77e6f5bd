import type { Size } from "../graph/placement";

/** The cards' sizes as React Flow measured them; placement estimates the cards not measured yet. */
export function measuredSizes(nodes: { id: string; measured?: { width?: number; height?: number } }[]): Map<string, Size> {
  const out = new Map<string, Size>();
  for (const n of nodes) if (n.measured?.width && n.measured.height) out.set(n.id, { width: n.measured.width, height: n.measured.height });
  return out;
}
