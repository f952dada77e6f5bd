/**
 * The Nodes view's overview picture (lodScene.ts): one box per card, where React Flow would put
 * it and as big (its measured size, or the estimate React Flow starts from), one line per step
 * that calls a node, from the step's side of its card to the called card's input.
 */
import { getViewportForBounds } from "@xyflow/react";
import type { Size } from "../graph/placement";
import { edges as graphEdges, graphOrder, routerTypeOf } from "../graph/queries";
import type { GraphState } from "../graph/types";
import type { Selection } from "../graph/selection";
import type { LodBox, LodScene } from "./lodScene";

/** Card colours by router type (the minimap's, as outline; a light tint as fill). */
const COLORS: Record<string, [fill: string, stroke: string]> = {
  Sequence: ["#e8edff", "#5b7cfa"],
  Switch: ["#fdf1de", "#e8a33d"],
  Ensemble: ["#e3f4ea", "#38a169"],
  Splitter: ["#f5e7fa", "#b45cd6"],
};
const OTHER: [string, string] = ["#f1f1f1", "#999999"];
export const LINE = "#9aa5b8";
export const LINE_SELECTED = "#2563eb";

/** The size React Flow starts a card with before measuring it (the CSS width; head + rows). */
export function cardEstimate(steps: number): Size {
  return { width: 262, height: 90 + 50 * steps };
}

export function nodesScene(state: GraphState, selection: Selection, sizes: ReadonlyMap<string, Size>): LodScene {
  const selected = new Set(selection.kind === "nodes" ? selection.names : selection.kind === "step" ? [selection.node] : []);
  const byName = new Map(state.nodes.map((n) => [n.name, n]));
  const rects = new Map<string, LodBox>();
  // Root first, as a reader follows the graph (and as Tab goes through the cards).
  const order = graphOrder(state);
  const ordered = new Set(order);
  const rest = state.nodes.map((n) => n.name).filter((name) => !ordered.has(name));
  for (const name of [...order, ...rest]) {
    const node = byName.get(name);
    if (!node) continue;
    const size = sizes.get(name) ?? cardEstimate(node.steps.length);
    const [fill, stroke] = COLORS[routerTypeOf(node)] ?? OTHER;
    rects.set(name, { id: name, x: node.position.x, y: node.position.y, width: size.width, height: size.height, fill, stroke, label: name, selected: selected.has(name) });
  }
  const lines = graphEdges(state).flatMap((e) => {
    const from = rects.get(e.source);
    const to = rects.get(e.target);
    if (!from || !to) return [];
    const count = byName.get(e.source)?.steps.length ?? 1;
    const isSelected = selection.kind === "step" && selection.node === e.source && selection.index === e.stepIndex;
    return [
      {
        points: [
          { x: from.x + from.width, y: from.y + (from.height * (e.stepIndex + 1)) / (count + 1) },
          { x: to.x, y: to.y + to.height / 2 },
        ],
        color: isSelected ? LINE_SELECTED : LINE,
      },
    ];
  });
  return { boxes: [...rects.values()], lines };
}

/** React Flow's fit of the Canvas (fitViewOptions there): padding 0.2, zoom 0.1 to 1.2. */
export const FIT = { padding: 0.2, minZoom: 0.1, maxZoom: 1.2 };

/**
 * The viewport React Flow's fit would give the graph in a canvas of `width` x `height`, worked out
 * before any card is measured (sizes: the estimates React Flow starts from). Null for no nodes.
 */
export function fittedViewport(state: GraphState, width: number, height: number): { x: number; y: number; zoom: number } | null {
  if (!state.nodes.length || width <= 0 || height <= 0) return null;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const n of state.nodes) {
    const s = cardEstimate(n.steps.length);
    x0 = Math.min(x0, n.position.x);
    y0 = Math.min(y0, n.position.y);
    x1 = Math.max(x1, n.position.x + s.width);
    y1 = Math.max(y1, n.position.y + s.height);
  }
  return getViewportForBounds({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, width, height, FIT.minZoom, FIT.maxZoom, FIT.padding);
}
