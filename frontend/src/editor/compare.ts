/** Turns a semantic diff between two versions into what the canvas highlights. */
import type { Diff, Version } from "../api";
import type { CompareMarks } from "../canvas/Canvas";
import { nodeToJson } from "../graph/manifest";
import { issueKey } from "../graph/queries";
import type { GraphState } from "../graph/types";
import { stateOfVersion } from "./store";

/** A node-level diff computed here, for when the server's diff lacks the `nodes` part. */
export function localNodeDiff(from: GraphState, to: GraphState): NonNullable<Diff["nodes"]> {
  const a = new Map(from.nodes.map((n) => [n.name, n]));
  const b = new Map(to.nodes.map((n) => [n.name, n]));
  const added = [...b.keys()].filter((k) => !a.has(k));
  const removed = [...a.keys()].filter((k) => !b.has(k));
  const changed: NonNullable<NonNullable<Diff["nodes"]>["changed"]> = [];
  for (const [name, nb] of b) {
    const na = a.get(name);
    if (!na || JSON.stringify(nodeToJson(na)) === JSON.stringify(nodeToJson(nb))) continue;
    const stepsChanged = nb.steps
      .map((s, i) => ({ index: i, name: typeof s.fields.name === "string" ? s.fields.name : null, same: JSON.stringify(s.fields) === JSON.stringify(na.steps[i]?.fields) }))
      .filter((s) => !s.same && s.index < na.steps.length);
    changed.push({
      node: name,
      fields: na.raw.routerType !== nb.raw.routerType ? [{ field: "routerType", before: na.raw.routerType, after: nb.raw.routerType }] : [],
      steps: {
        added: nb.steps.slice(na.steps.length).map((s, i) => ({ index: na.steps.length + i, name: typeof s.fields.name === "string" ? s.fields.name : null })),
        removed: na.steps.slice(nb.steps.length).map((s, i) => ({ index: nb.steps.length + i, name: typeof s.fields.name === "string" ? s.fields.name : null })),
        changed: stepsChanged.map((s) => ({ index: s.index, name: s.name, fields: [] })),
      },
    });
  }
  return { added, removed, changed };
}

/** The server's diff is read defensively: anything that is not a list counts as empty. */
function arr<T>(value: T[] | undefined | null): T[] {
  return Array.isArray(value) ? value : [];
}

export interface CompareView {
  from: Version;
  to: Version;
  diff: Diff;
  state: GraphState;
  marks: CompareMarks;
}

/** The `to` version with the nodes removed since `from` drawn as ghosts, plus marks. */
export function buildCompare(from: Version, to: Version, serverDiff: Diff | null): CompareView {
  const fromState = stateOfVersion(from);
  const toState = stateOfVersion(to);
  const diff: Diff = serverDiff && typeof serverDiff === "object" && !Array.isArray(serverDiff) ? serverDiff : {};
  const nodesDiff: NonNullable<Diff["nodes"]> = diff.nodes && typeof diff.nodes === "object" ? diff.nodes : localNodeDiff(fromState, toState);
  const marks: CompareMarks = { nodes: new Map(), steps: new Map(), removedSteps: new Map() };
  for (const name of arr(nodesDiff.added)) marks.nodes.set(name, "added");
  for (const name of arr(nodesDiff.removed)) marks.nodes.set(name, "removed");
  for (const c of arr(nodesDiff.changed)) {
    marks.nodes.set(c.node, "changed");
    const target = toState.nodes.find((n) => n.name === c.node);
    for (const s of arr(c.steps?.added)) marks.steps.set(issueKey(c.node, s.index), "added");
    for (const s of arr(c.steps?.changed)) marks.steps.set(issueKey(c.node, s.index), "changed");
    for (const s of arr(c.steps?.moved)) {
      const idx = target?.steps.findIndex((x) => s.name && x.fields.name === s.name) ?? -1;
      marks.steps.set(issueKey(c.node, idx >= 0 ? idx : s.to), "moved");
    }
    const removed = arr(c.steps?.removed).map((s) => ({ index: s.index, name: s.name ?? "" }));
    if (removed.length) marks.removedSteps.set(c.node, removed);
  }
  const ghosts = fromState.nodes.filter((n) => marks.nodes.get(n.name) === "removed" && !toState.nodes.some((m) => m.name === n.name));
  const state: GraphState = { ...toState, nodes: [...toState.nodes, ...ghosts] };
  return { from, to, diff: { ...diff, nodes: nodesDiff }, state, marks };
}
