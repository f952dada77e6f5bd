/**
 * Typed edits and the pure function that applies them. Every change the editor makes to a
 * graph is one of these objects; undo/redo and the rebase after a save conflict replay them.
 *
 * `applyEdit` never mutates its input. An edit that does not apply (unknown node, index out
 * of range, a rename onto an existing name…) returns the very same state object, so callers
 * can tell "nothing happened" with `===`.
 */
import { clone, fromManifest, isObject, placeMissing, toManifest } from "./manifest";
import type {
  ClipboardPayload,
  GraphState,
  Json,
  JsonObject,
  NodeState,
  Position,
  RouterType,
  StepState,
  TargetKind,
} from "./types";
import { TARGET_KINDS } from "./types";

export type Edit =
  | { type: "addNode"; routerType: RouterType; position: Position; name?: string; steps?: JsonObject[] }
  | { type: "removeNodes"; names: string[] }
  | { type: "renameNode"; from: string; to: string }
  | { type: "setNodeField"; node: string; field: string; value: Json | undefined }
  | { type: "addStep"; node: string; step: JsonObject; index?: number }
  | { type: "removeStep"; node: string; index: number }
  | { type: "moveStep"; node: string; from: number; to: number }
  | { type: "transferStep"; from: { node: string; index: number }; to: { node: string; index?: number } }
  | { type: "setStepField"; node: string; index: number; field: string; value: Json | undefined }
  | { type: "setStepTarget"; node: string; index: number; kind: TargetKind | null; value?: string }
  | { type: "connect"; node: string; index: number; target: string }
  | { type: "connectNew"; node: string; target: string }
  | { type: "setGraphField"; path: string[]; value: Json | undefined }
  | { type: "moveNodes"; positions: Record<string, Position> }
  /**
   * Positions of boxes in the Flow view, by box layout key: kept in the layout under `flow`.
   * `reset` first forgets every stored position (the automatic layout again).
   */
  | { type: "moveFlowBoxes"; positions: Record<string, Position>; reset?: boolean }
  | { type: "paste"; payload: ClipboardPayload; offset: Position }
  | { type: "replaceManifest"; manifest: JsonObject }
  | { type: "batch"; edits: Edit[] };

/** `base`, `base-2`, `base-3`… : the first name not in `taken`. */
export function uniqueName(base: string, taken: Iterable<string>): string {
  const set = new Set(taken);
  if (!set.has(base)) return base;
  for (let i = 2; ; i++) {
    const candidate = `${base}-${i}`;
    if (!set.has(candidate)) return candidate;
  }
}

/** Sets `key` to `value` keeping the key's place; a new key goes last; undefined deletes. */
export function setKey(obj: JsonObject, key: string, value: Json | undefined): JsonObject {
  if (value === undefined) {
    if (!(key in obj)) return obj;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(obj)) if (k !== key) out[k] = v;
    return out;
  }
  return { ...obj, [key]: value };
}

function findNode(state: GraphState, name: string): number {
  return state.nodes.findIndex((n) => n.name === name);
}

function withNode(state: GraphState, name: string, change: (node: NodeState) => NodeState | null): GraphState {
  const i = findNode(state, name);
  if (i < 0) return state;
  const updated = change(state.nodes[i]);
  if (updated === null || updated === state.nodes[i]) return state;
  const nodes = state.nodes.slice();
  nodes[i] = updated;
  return { ...state, nodes };
}

function withSteps(node: NodeState, steps: StepState[]): NodeState {
  const raw = "steps" in node.raw ? node.raw : { ...node.raw, steps: null };
  return { ...node, raw, steps };
}

function newStep(state: GraphState, fields: JsonObject): [StepState, GraphState] {
  return [{ id: `s${state.nextId}`, fields: clone(fields) }, { ...state, nextId: state.nextId + 1 }];
}

/** Replaces the step's target (`nodeName`, `serviceName` or `serviceUrl`) with one of `kind`. */
export function retarget(fields: JsonObject, kind: TargetKind | null, value: string): JsonObject {
  const present = TARGET_KINDS.filter((k) => k in fields);
  if (kind === null) {
    let out = fields;
    for (const k of present) out = setKey(out, k, undefined);
    return out;
  }
  // Put the new target where the old one was, so that key order stays natural.
  const out: JsonObject = {};
  let placed = false;
  for (const [k, v] of Object.entries(fields)) {
    if ((TARGET_KINDS as readonly string[]).includes(k)) {
      if (!placed) {
        out[kind] = value;
        placed = true;
      }
      continue;
    }
    out[k] = v;
  }
  if (!placed) {
    // A target reads best right after the step name.
    if ("name" in out) {
      const ordered: JsonObject = {};
      for (const [k, v] of Object.entries(out)) {
        ordered[k] = v;
        if (k === "name") ordered[kind] = value;
      }
      return ordered;
    }
    return { [kind]: value, ...out };
  }
  return out;
}

function setPath(obj: JsonObject, path: string[], value: Json | undefined): JsonObject {
  const [head, ...rest] = path;
  if (rest.length === 0) return setKey(obj, head, value);
  const child = isObject(obj[head]) ? (obj[head] as JsonObject) : undefined;
  if (child === undefined && value === undefined) return obj;
  const updated = setPath(child ?? {}, rest, value);
  if (updated === child) return obj;
  // Clearing the last field of a nested object removes the object too.
  if (value === undefined && Object.keys(updated).length === 0) return setKey(obj, head, undefined);
  return setKey(obj, head, updated);
}

function renameRefs(steps: StepState[], from: string, to: string): StepState[] {
  let changed = false;
  const out = steps.map((s) => {
    if (s.fields.nodeName !== from) return s;
    changed = true;
    return { ...s, fields: { ...s.fields, nodeName: to } };
  });
  return changed ? out : steps;
}

function clampIndex(index: number | undefined, length: number): number {
  if (index === undefined || index < 0 || index > length) return length;
  return Math.floor(index);
}

/** Applies one edit. Pure; see the module comment. */
export function applyEdit(state: GraphState, edit: Edit): GraphState {
  switch (edit.type) {
    case "addNode": {
      const taken = state.nodes.map((n) => n.name);
      const base = edit.name ?? (state.nodes.length === 0 ? "root" : edit.routerType.toLowerCase());
      const name = edit.name !== undefined && taken.includes(edit.name) ? null : uniqueName(base, taken);
      if (name === null || name === "") return state;
      let s = state;
      const steps: StepState[] = [];
      for (const fields of edit.steps ?? []) {
        const [step, next] = newStep(s, fields);
        steps.push(step);
        s = next;
      }
      const node: NodeState = {
        name,
        raw: { routerType: edit.routerType, steps: null },
        steps,
        position: { ...edit.position },
      };
      return { ...s, hasNodesKey: true, nodes: [...s.nodes, node] };
    }
    case "removeNodes": {
      const names = new Set(edit.names);
      const nodes = state.nodes.filter((n) => !names.has(n.name));
      return nodes.length === state.nodes.length ? state : { ...state, nodes };
    }
    case "renameNode": {
      const { from, to } = edit;
      if (!to || from === to || findNode(state, from) < 0 || findNode(state, to) >= 0) return state;
      const nodes = state.nodes.map((n) => {
        const steps = renameRefs(n.steps, from, to);
        if (n.name !== from && steps === n.steps) return n;
        return { ...n, name: n.name === from ? to : n.name, steps };
      });
      return { ...state, nodes };
    }
    case "setNodeField": {
      if (edit.field === "steps") return state;
      return withNode(state, edit.node, (n) => {
        const raw = setKey(n.raw, edit.field, edit.value === undefined ? undefined : clone(edit.value));
        return raw === n.raw ? null : { ...n, raw };
      });
    }
    case "addStep": {
      const i = findNode(state, edit.node);
      if (i < 0) return state;
      const [step, next] = newStep(state, edit.step);
      return withNode(next, edit.node, (n) => {
        const steps = n.steps.slice();
        steps.splice(clampIndex(edit.index, steps.length), 0, step);
        return withSteps(n, steps);
      });
    }
    case "removeStep":
      return withNode(state, edit.node, (n) => {
        if (edit.index < 0 || edit.index >= n.steps.length) return null;
        return withSteps(n, n.steps.filter((_, j) => j !== edit.index));
      });
    case "moveStep":
      return withNode(state, edit.node, (n) => {
        const { from, to } = edit;
        if (from === to || from < 0 || to < 0 || from >= n.steps.length || to >= n.steps.length) return null;
        const steps = n.steps.slice();
        const [moved] = steps.splice(from, 1);
        steps.splice(to, 0, moved);
        return withSteps(n, steps);
      });
    case "transferStep": {
      const { from, to } = edit;
      if (from.node === to.node) {
        const n = state.nodes[findNode(state, from.node)];
        if (!n) return state;
        const target = to.index === undefined ? n.steps.length - 1 : Math.min(to.index, n.steps.length - 1);
        return applyEdit(state, { type: "moveStep", node: from.node, from: from.index, to: target });
      }
      const src = state.nodes[findNode(state, from.node)];
      if (!src || findNode(state, to.node) < 0 || from.index < 0 || from.index >= src.steps.length) return state;
      const step = src.steps[from.index];
      let s = withNode(state, from.node, (n) => withSteps(n, n.steps.filter((_, j) => j !== from.index)));
      s = withNode(s, to.node, (n) => {
        const steps = n.steps.slice();
        steps.splice(clampIndex(to.index, steps.length), 0, step);
        return withSteps(n, steps);
      });
      return s;
    }
    case "setStepField":
      return withNode(state, edit.node, (n) => {
        const step = n.steps[edit.index];
        if (!step) return null;
        const fields = setKey(step.fields, edit.field, edit.value === undefined ? undefined : clone(edit.value));
        if (fields === step.fields) return null;
        const steps = n.steps.slice();
        steps[edit.index] = { ...step, fields };
        return { ...n, steps };
      });
    case "setStepTarget":
      return withNode(state, edit.node, (n) => {
        const step = n.steps[edit.index];
        if (!step) return null;
        const fields = retarget(step.fields, edit.kind, edit.value ?? "");
        if (JSON.stringify(fields) === JSON.stringify(step.fields)) return null;
        const steps = n.steps.slice();
        steps[edit.index] = { ...step, fields };
        return { ...n, steps };
      });
    case "connect":
      if (findNode(state, edit.target) < 0) return state;
      return applyEdit(state, { type: "setStepTarget", node: edit.node, index: edit.index, kind: "nodeName", value: edit.target });
    case "connectNew":
      if (findNode(state, edit.target) < 0) return state;
      return applyEdit(state, { type: "addStep", node: edit.node, step: { nodeName: edit.target } });
    case "setGraphField": {
      if (edit.path.length === 0) return state;
      if (edit.path[0] === "spec" && edit.path[1] === "nodes") return state;
      const doc = setPath(state.doc, edit.path, edit.value === undefined ? undefined : clone(edit.value));
      return doc === state.doc ? state : { ...state, doc };
    }
    case "moveNodes": {
      let changed = false;
      const nodes = state.nodes.map((n) => {
        const p = edit.positions[n.name];
        if (!p || (p.x === n.position.x && p.y === n.position.y)) return n;
        changed = true;
        return { ...n, position: { x: p.x, y: p.y } };
      });
      return changed ? { ...state, nodes } : state;
    }
    case "moveFlowBoxes": {
      const flow = isObject(state.layoutExtra.flow) ? (state.layoutExtra.flow as JsonObject) : {};
      const stored = isObject(flow.boxes) ? flow.boxes : {};
      const boxes: JsonObject = edit.reset ? {} : { ...stored };
      let changed = edit.reset === true && Object.keys(stored).length > 0;
      for (const [key, p] of Object.entries(edit.positions)) {
        const old = stored[key];
        if (isObject(old) && old.x === p.x && old.y === p.y) continue;
        boxes[key] = { x: p.x, y: p.y };
        changed = true;
      }
      return changed ? { ...state, layoutExtra: { ...state.layoutExtra, flow: { ...flow, boxes } } } : state;
    }
    case "paste":
      return paste(state, edit.payload, edit.offset);
    case "replaceManifest": {
      // Text that parses to the same document (a comment, a re-indent, an undone typo) is no edit.
      if (JSON.stringify(toManifest(state)) === JSON.stringify(edit.manifest)) return state;
      const layoutNodes: Record<string, Position> = {};
      for (const n of state.nodes) layoutNodes[n.name] = n.position;
      const next = fromManifest(edit.manifest, { nodes: layoutNodes });
      // Steps keep their ids where the node and index still exist, so selection survives.
      const oldIds = new Map(state.nodes.map((n) => [n.name, n.steps.map((s) => s.id)]));
      let nextId = state.nextId;
      const nodes = next.nodes.map((n) => ({
        ...n,
        steps: n.steps.map((s, j) => ({ ...s, id: oldIds.get(n.name)?.[j] ?? `s${nextId++}` })),
      }));
      return { ...next, nodes, viewport: state.viewport, layoutExtra: state.layoutExtra, nextId };
    }
    case "batch": {
      let s = state;
      for (const e of edit.edits) s = applyEdit(s, e);
      return s;
    }
  }
}

/** The clipboard payload for the named nodes (full node objects with their steps). */
export function copyNodes(state: GraphState, names: string[]): ClipboardPayload {
  const wanted = new Set(names);
  return {
    kind: "inference-graph-studio/nodes",
    version: 1,
    nodes: state.nodes
      .filter((n) => wanted.has(n.name))
      .map((n) => {
        const node: JsonObject = {};
        for (const [k, v] of Object.entries(n.raw)) node[k] = k === "steps" ? n.steps.map((s) => clone(s.fields)) : clone(v);
        if (!("steps" in node) && n.steps.length) node.steps = n.steps.map((s) => clone(s.fields));
        return { name: n.name, node, position: { ...n.position } };
      }),
  };
}

/** Checks that an unknown value (from another tab's clipboard) is a payload we wrote. */
export function isClipboardPayload(value: unknown): value is ClipboardPayload {
  if (!isObject(value) || value.kind !== "inference-graph-studio/nodes" || !Array.isArray(value.nodes)) return false;
  return value.nodes.every(
    (n) => isObject(n) && typeof n.name === "string" && isObject(n.node) && isObject(n.position),
  );
}

function paste(state: GraphState, payload: ClipboardPayload, offset: Position): GraphState {
  if (!payload.nodes.length) return state;
  const taken = new Set(state.nodes.map((n) => n.name));
  const renamed = new Map<string, string>();
  for (const item of payload.nodes) {
    const name = taken.has(item.name) ? uniqueName(`${item.name}-copy`, taken) : item.name;
    taken.add(name);
    renamed.set(item.name, name);
  }
  let s: GraphState = { ...state, hasNodesKey: true };
  const added: NodeState[] = [];
  for (const item of payload.nodes) {
    const raw: JsonObject = {};
    for (const [k, v] of Object.entries(item.node)) raw[k] = k === "steps" ? null : clone(v);
    const steps: StepState[] = [];
    for (const fields of Array.isArray(item.node.steps) ? item.node.steps : []) {
      if (!isObject(fields)) continue;
      const target = fields.nodeName;
      const remapped = typeof target === "string" && renamed.has(target) ? { ...fields, nodeName: renamed.get(target) as string } : fields;
      const [step, next] = newStep(s, remapped);
      steps.push(step);
      s = next;
    }
    added.push({
      name: renamed.get(item.name) as string,
      raw,
      steps,
      position: { x: item.position.x + offset.x, y: item.position.y + offset.y },
    });
  }
  return { ...s, nodes: [...s.nodes, ...added] };
}

/** Re-exported for callers that place nodes added outside the canvas (YAML). */
export { placeMissing };
