/**
 * Automatic layout with elkjs (layered, left to right). Each step is an east port in step
 * order, so edges leave the cards in the order the steps run. Returns positions for a
 * `moveNodes` edit; it does not touch the graph state itself.
 */
import ELK, { type ELK as ElkApi, type ElkNode } from "elkjs/lib/elk-api";
// The layout engine (about 1.5 MB) runs in a web worker, loaded on first use of "Auto layout";
// the worker file is self-contained and copied to dist/assets/ under its own name.
import workerUrl from "elkjs/lib/elk-worker.min.js?url";
import { estimateHeight, NODE_WIDTH } from "../graph/manifest";
import type { GraphState, Position } from "../graph/types";

let elk: ElkApi | null = null;

export function getElk(): ElkApi {
  elk ??= new ELK({ workerUrl });
  return elk;
}

export async function computeAutoLayout(state: GraphState, sizes: Map<string, { width: number; height: number }>): Promise<Record<string, Position>> {
  const engine = getElk();
  const names = new Set(state.nodes.map((n) => n.name));
  const children: ElkNode[] = state.nodes.map((node) => {
    const size = sizes.get(node.name);
    return {
      id: node.name,
      width: size?.width ?? NODE_WIDTH,
      height: size?.height ?? estimateHeight(node.steps.length),
      layoutOptions: { "elk.portConstraints": "FIXED_ORDER" },
      ports: [
        { id: `${node.name}\u0000in`, width: 1, height: 1, layoutOptions: { "elk.port.side": "WEST" } },
        ...node.steps.map((step) => ({ id: `${node.name}\u0000${step.id}`, width: 1, height: 1, layoutOptions: { "elk.port.side": "EAST" } })),
      ],
    };
  });
  const edges = state.nodes.flatMap((node) =>
    node.steps
      .filter((s) => typeof s.fields.nodeName === "string" && names.has(s.fields.nodeName))
      .map((s) => ({ id: `${node.name}\u0000${s.id}\u0000e`, sources: [`${node.name}\u0000${s.id}`], targets: [`${s.fields.nodeName as string}\u0000in`] })),
  );
  // Root first so that it lands in the first layer even in a cyclic graph.
  children.sort((a, b) => (a.id === "root" ? -1 : b.id === "root" ? 1 : 0));
  const result = await engine.layout({
    id: "graph",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.spacing.nodeNode": "40",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
      "elk.separateConnectedComponents": "true",
    },
    children,
    edges,
  });
  const positions: Record<string, Position> = {};
  for (const child of result.children ?? []) positions[child.id] = { x: Math.round(child.x ?? 0), y: Math.round(child.y ?? 0) };
  return positions;
}
