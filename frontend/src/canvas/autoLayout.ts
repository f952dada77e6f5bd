/**
 * Automatic layout with elkjs (layered, left to right). Each step is an east port in step
 * order, so edges leave the cards in the order the steps run. Returns positions for a
 * `moveNodes` edit; it does not touch the graph state itself.
 */
import type { ELK as ElkApi, ElkNode } from "elkjs/lib/elk-api";
import { estimateHeight, NODE_WIDTH } from "../graph/manifest";
import type { GraphState, Position } from "../graph/types";

let elk: Promise<ElkApi> | null = null;

/**
 * The layout engine, loaded on first use: elkjs's API is a lazily imported chunk (kept out of
 * the page's initial bundle, see docs/architecture.md), and the engine itself (about 1.5 MB)
 * runs in a web worker whose self-contained file is copied to dist/assets/ under its own name.
 */
export function getElk(): Promise<ElkApi> {
  elk ??= Promise.all([import("elkjs/lib/elk-api"), import("elkjs/lib/elk-worker.min.js?url")]).then(
    ([api, worker]) => new api.default({ workerUrl: worker.default }),
  );
  // A failed chunk load (network) is retried on the next call rather than cached.
  elk.catch(() => {
    elk = null;
  });
  return elk;
}

export async function computeAutoLayout(state: GraphState, sizes: Map<string, { width: number; height: number }>): Promise<Record<string, Position>> {
  const engine = await getElk();
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
