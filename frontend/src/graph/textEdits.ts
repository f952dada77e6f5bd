/**
 * Turns a whole new manifest (from the YAML view) into fine-grained edits where it can, so that
 * a rebase after a save conflict replays "set this step's condition", not "replace everything".
 * The result is checked: if the edits do not reproduce the manifest exactly (key order
 * included), a single `replaceManifest` is returned instead.
 */
import { applyEdit, type Edit } from "./edits";
import { fromManifest, isObject, nodeToJson, toManifest } from "./manifest";
import type { GraphState, Json, JsonObject } from "./types";

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function objectEdits(before: JsonObject, after: JsonObject, emit: (key: string, value: Json | undefined) => void): boolean {
  const keysBefore = Object.keys(before).filter((k) => k in after);
  const keysAfter = Object.keys(after).filter((k) => k in before);
  if (!same(keysBefore, keysAfter)) return false; // a reordering: not expressible
  for (const key of Object.keys(before)) if (!(key in after)) emit(key, undefined);
  for (const [key, value] of Object.entries(after)) if (!same(before[key], value)) emit(key, value);
  return true;
}

function fineEdits(state: GraphState, manifest: JsonObject): Edit[] | null {
  const current = toManifest(state);
  const edits: Edit[] = [];
  const curSpec = isObject(current.spec) ? current.spec : null;
  const newSpec = isObject(manifest.spec) ? manifest.spec : null;
  if (!curSpec || !newSpec || !isObject(curSpec.nodes) || !isObject(newSpec.nodes)) return null;
  // Top level, except spec.
  const top = (o: JsonObject) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== "spec")) as JsonObject;
  if (!same(Object.keys(current), Object.keys(manifest))) return null;
  const curTop = top(current);
  const newTop = top(manifest);
  for (const key of Object.keys(newTop)) {
    const a = curTop[key];
    const b = newTop[key];
    if (same(a, b)) continue;
    if (isObject(a) && isObject(b)) {
      if (!objectEdits(a, b, (k, v) => edits.push({ type: "setGraphField", path: [key, k], value: v }))) return null;
    } else {
      edits.push({ type: "setGraphField", path: [key], value: b });
    }
  }
  // spec, except nodes.
  const rest = (o: JsonObject) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== "nodes")) as JsonObject;
  if (!objectEdits(rest(curSpec), rest(newSpec), (k, v) => edits.push({ type: "setGraphField", path: ["spec", k], value: v }))) return null;
  // Nodes.
  const curNodes = curSpec.nodes;
  const newNodes = newSpec.nodes;
  const removed = Object.keys(curNodes).filter((n) => !(n in newNodes));
  // Where new nodes go: the same placement a whole-document replacement would give them.
  const placed = fromManifest(manifest, { nodes: Object.fromEntries(state.nodes.map((n) => [n.name, n.position])) });
  if (removed.length) edits.push({ type: "removeNodes", names: removed });
  for (const [name, value] of Object.entries(newNodes)) {
    if (!isObject(value)) return null;
    const node = state.nodes.find((n) => n.name === name);
    if (!node) {
      const position = placed.nodes.find((n) => n.name === name)?.position ?? { x: 0, y: 0 };
      edits.push({ type: "paste", payload: { kind: "inference-graph-studio/nodes", version: 1, nodes: [{ name, node: value, position }] }, offset: { x: 0, y: 0 } });
      continue;
    }
    const before = nodeToJson(node);
    if (same(before, value)) continue;
    const { steps: stepsBefore, ...fieldsBefore } = before;
    const { steps: stepsAfter, ...fieldsAfter } = value;
    if (!objectEdits(fieldsBefore, fieldsAfter, (k, v) => edits.push({ type: "setNodeField", node: name, field: k, value: v }))) return null;
    const a = Array.isArray(stepsBefore) ? stepsBefore : [];
    const b = Array.isArray(stepsAfter) ? stepsAfter : [];
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) {
      const sa = a[i];
      const sb = b[i];
      if (!isObject(sa) || !isObject(sb)) return null;
      if (!objectEdits(sa, sb, (k, v) => edits.push({ type: "setStepField", node: name, index: i, field: k, value: v }))) return null;
    }
    for (let i = a.length - 1; i >= common; i--) edits.push({ type: "removeStep", node: name, index: i });
    for (let i = common; i < b.length; i++) {
      const sb = b[i];
      if (!isObject(sb)) return null;
      edits.push({ type: "addStep", node: name, index: i, step: sb });
    }
  }
  return edits;
}

/** The edit that turns `state` into `manifest`: a batch of small edits, or a replaceManifest. */
export function editForManifest(state: GraphState, manifest: JsonObject): Edit {
  const whole: Edit = { type: "replaceManifest", manifest };
  const edits = fineEdits(state, manifest);
  if (!edits) return whole;
  if (edits.length === 0) return { type: "batch", edits: [] };
  const batch: Edit = edits.length === 1 ? edits[0] : { type: "batch", edits };
  const result = applyEdit(state, batch);
  // Exact, including key order and node order; otherwise the whole document.
  return same(toManifest(result), manifest) ? batch : whole;
}
