/**
 * manifest ⇄ GraphState. `toManifest(fromManifest(m, layout))` returns a document equal to
 * `m`, with the same key order, for any manifest whose `spec.nodes` is a mapping of mappings
 * and whose `steps` are lists of mappings (see `shapeProblems`).
 */
import type {
  GraphState,
  JsonObject,
  Layout,
  NodeState,
  Position,
  StepState,
  Viewport,
} from "./types";

export const NODE_WIDTH = 260;
export const COLUMN_GAP = 110;
export const ROW_GAP = 40;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Rough card height used before the canvas has measured anything. */
export function estimateHeight(stepCount: number): number {
  return 64 + Math.max(1, stepCount) * 30 + 28;
}

/** Problems that stop a document from being shown on the canvas (not KServe validity). */
export function shapeProblems(manifest: unknown): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  if (!isObject(manifest)) {
    return [{ path: [], message: "The document must be a mapping (an InferenceGraph object)." }];
  }
  const spec = manifest.spec;
  if (spec === undefined || spec === null) return problems;
  if (!isObject(spec)) return [{ path: ["spec"], message: "spec must be a mapping." }];
  const nodes = spec.nodes;
  if (nodes === undefined || nodes === null) return problems;
  if (!isObject(nodes)) return [{ path: ["spec", "nodes"], message: "spec.nodes must be a mapping of node name to node." }];
  for (const [name, node] of Object.entries(nodes)) {
    if (node === null) continue;
    if (!isObject(node)) {
      problems.push({ path: ["spec", "nodes", name], message: `Node "${name}" must be a mapping.` });
      continue;
    }
    const steps = node.steps;
    if (steps === undefined || steps === null) continue;
    if (!Array.isArray(steps)) {
      problems.push({ path: ["spec", "nodes", name, "steps"], message: `steps of node "${name}" must be a list.` });
      continue;
    }
    steps.forEach((step, i) => {
      if (!isObject(step)) {
        problems.push({ path: ["spec", "nodes", name, "steps", i], message: `Step ${i} of node "${name}" must be a mapping.` });
      }
    });
  }
  return problems;
}

function readLayout(layout: unknown): { positions: Record<string, Position>; viewport: Viewport | null; extra: Record<string, unknown> } {
  const positions: Record<string, Position> = {};
  let viewport: Viewport | null = null;
  const extra: Record<string, unknown> = {};
  if (!isObject(layout)) return { positions, viewport, extra };
  for (const [key, value] of Object.entries(layout)) {
    if (key === "nodes" && isObject(value)) {
      for (const [name, pos] of Object.entries(value)) {
        if (isObject(pos) && typeof pos.x === "number" && typeof pos.y === "number") {
          positions[name] = { x: pos.x, y: pos.y };
        }
      }
    } else if (key === "viewport" && isObject(value)) {
      const { x, y, zoom } = value;
      if (typeof x === "number" && typeof y === "number" && typeof zoom === "number") viewport = { x, y, zoom };
    } else {
      extra[key] = value;
    }
  }
  return { positions, viewport, extra };
}

/** Targets of `nodeName` steps of a raw node list, in step order. */
function childNames(node: NodeState): string[] {
  const out: string[] = [];
  for (const step of node.steps) {
    const target = step.fields.nodeName;
    if (typeof target === "string" && target) out.push(target);
  }
  return out;
}

/**
 * Layered positions: column = distance from `root` (breadth first through nodeName steps),
 * row = order of discovery. Nodes not reachable from root go to a last column.
 */
export function autoPositions(nodes: NodeState[]): Record<string, Position> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const depth = new Map<string, number>();
  const order: string[] = [];
  const start = byName.has("root") ? "root" : nodes[0]?.name;
  if (start !== undefined) {
    depth.set(start, 0);
    const queue = [start];
    while (queue.length) {
      const name = queue.shift() as string;
      order.push(name);
      const node = byName.get(name);
      if (!node) continue;
      for (const child of childNames(node)) {
        if (byName.has(child) && !depth.has(child)) {
          depth.set(child, (depth.get(name) ?? 0) + 1);
          queue.push(child);
        }
      }
    }
  }
  const maxDepth = Math.max(-1, ...depth.values());
  for (const node of nodes) {
    if (!depth.has(node.name)) {
      depth.set(node.name, maxDepth + 1);
      order.push(node.name);
    }
  }
  const columnY = new Map<number, number>();
  const positions: Record<string, Position> = {};
  for (const name of order) {
    const d = depth.get(name) ?? 0;
    const y = columnY.get(d) ?? 0;
    positions[name] = { x: d * (NODE_WIDTH + COLUMN_GAP), y };
    columnY.set(d, y + estimateHeight(byName.get(name)?.steps.length ?? 0) + ROW_GAP);
  }
  return positions;
}

/**
 * Positions for nodes that have none: next to a parent that has one, else below everything.
 * Returns a new node list (nodes that already had positions are returned as they were).
 */
export function placeMissing(nodes: NodeState[], known: Set<string>): NodeState[] {
  if (known.size === 0) {
    const auto = autoPositions(nodes);
    return nodes.map((n) => ({ ...n, position: auto[n.name] ?? { x: 0, y: 0 } }));
  }
  const placed = new Map<string, Position>();
  for (const n of nodes) if (known.has(n.name)) placed.set(n.name, n.position);
  let bottom = Math.max(0, ...nodes.filter((n) => known.has(n.name)).map((n) => n.position.y + estimateHeight(n.steps.length)));
  const result: NodeState[] = [];
  for (const node of nodes) {
    if (placed.has(node.name) && known.has(node.name)) {
      result.push(node);
      continue;
    }
    let position: Position | null = null;
    for (const parent of nodes) {
      const at = placed.get(parent.name);
      if (!at || parent.name === node.name) continue;
      const idx = parent.steps.findIndex((s) => s.fields.nodeName === node.name);
      if (idx >= 0) {
        position = { x: at.x + NODE_WIDTH + COLUMN_GAP, y: at.y + idx * 30 };
        break;
      }
    }
    if (!position) {
      position = { x: 0, y: bottom + ROW_GAP };
      bottom = position.y + estimateHeight(node.steps.length);
    }
    placed.set(node.name, position);
    result.push({ ...node, position });
  }
  return result;
}

/** Builds the state of a manifest. A missing or partial layout gets automatic positions. */
export function fromManifest(manifest: JsonObject, layout?: Layout | JsonObject | null): GraphState {
  const doc = clone(manifest);
  const { positions, viewport, extra } = readLayout(layout);
  const spec = isObject(doc.spec) ? doc.spec : null;
  const rawNodes = spec && isObject(spec.nodes) ? spec.nodes : null;
  const hasNodesKey = spec !== null && Object.prototype.hasOwnProperty.call(spec, "nodes");
  let nextId = 1;
  const nodes: NodeState[] = [];
  if (rawNodes) {
    for (const [name, value] of Object.entries(rawNodes)) {
      const raw: JsonObject = isObject(value) ? { ...value } : {};
      const steps: StepState[] = [];
      if (Array.isArray(raw.steps)) {
        for (const step of raw.steps) {
          steps.push({ id: `s${nextId++}`, fields: isObject(step) ? step : {} });
        }
        raw.steps = null;
      }
      nodes.push({ name, raw, steps, position: positions[name] ?? { x: 0, y: 0 } });
    }
  }
  if (spec && hasNodesKey) spec.nodes = null;
  const known = new Set(nodes.filter((n) => positions[n.name]).map((n) => n.name));
  return {
    doc,
    hasNodesKey,
    nodes: known.size === nodes.length ? nodes : placeMissing(nodes, known),
    viewport,
    layoutExtra: extra,
    nextId,
  };
}

/** The node object as written in the manifest. */
export function nodeToJson(node: NodeState): JsonObject {
  const out: JsonObject = {};
  let wroteSteps = false;
  for (const [key, value] of Object.entries(node.raw)) {
    if (key === "steps") {
      out.steps = node.steps.map((s) => clone(s.fields));
      wroteSteps = true;
    } else {
      out[key] = clone(value);
    }
  }
  if (!wroteSteps && node.steps.length > 0) out.steps = node.steps.map((s) => clone(s.fields));
  return out;
}

/** The manifest of a state: a fresh document, safe to mutate. */
export function toManifest(state: GraphState): JsonObject {
  const doc = clone(state.doc);
  const nodes: JsonObject = {};
  for (const node of state.nodes) nodes[node.name] = nodeToJson(node);
  if (state.hasNodesKey || state.nodes.length > 0) {
    if (!isObject(doc.spec)) doc.spec = {};
    (doc.spec as JsonObject).nodes = nodes;
  }
  return doc;
}

/** The layout of a state, in the stored format. */
export function toLayout(state: GraphState): Layout {
  const nodes: Record<string, Position> = {};
  for (const node of state.nodes) {
    nodes[node.name] = { x: Math.round(node.position.x), y: Math.round(node.position.y) };
  }
  const layout: Layout = { ...clone(state.layoutExtra), nodes };
  if (state.viewport) layout.viewport = { ...state.viewport };
  return layout;
}

/** A new, minimal manifest for a graph called `name`. */
export function emptyManifest(name: string, namespace?: string): JsonObject {
  const metadata: JsonObject = { name };
  if (namespace) metadata.namespace = namespace;
  return {
    apiVersion: "serving.kserve.io/v1alpha1",
    kind: "InferenceGraph",
    metadata,
    spec: { nodes: { root: { routerType: "Sequence", steps: [] } } },
  };
}
