/**
 * What the Flow view's buttons do, as edits of the graph model (graph/edits.ts): each one is the
 * smallest change to the InferenceGraph document that gives the picture the user asked for, so
 * undo/redo, the rebase after a save conflict and the YAML panel treat it like any other edit.
 * Pure: each function returns the edit and the step to select after it, or null when it does not
 * apply.
 */
import { uniqueName, type Edit } from "../graph/edits";
import { freeSpot } from "../graph/placement";
import { nodeByName, routerTypeOf, stepTarget } from "../graph/queries";
import type { GraphState, JsonObject, NodeState, RouterType, TargetKind } from "../graph/types";
import type { InsertPoint, StepRef } from "./project";

export interface FlowEdit {
  edit: Edit;
  /** The step to select afterwards (the one added, or where the moved step went). */
  select: StepRef | null;
}

/** The first free step name `base`, `base-2`… in `node`. */
function stepNameIn(node: NodeState | undefined, base: string): string {
  return uniqueName(base, (node?.steps ?? []).map((s) => s.fields.name).filter((n): n is string => typeof n === "string"));
}

/**
 * What a new box calls: a service picked in the palette (its name is the step's name too), or
 * nothing yet (BLANK: an empty serviceName for the user to fill in; validation says so).
 */
export interface NewModel {
  name: string;
  target: TargetKind;
  value: string;
}

export const BLANK: NewModel = { name: "model", target: "serviceName", value: "" };

/** The names the Flow view gives a new blank box: `model`, `model-2`… */
const BLANK_NAME = /^model(-\d+)?$/;

/** A new model step: its name (free in `node`), its target, then `extra`. */
function newModel(node: NodeState | undefined, extra: JsonObject = {}, model: NewModel = BLANK): JsonObject {
  return { name: stepNameIn(node, model.name), [model.target]: model.value, ...extra };
}

/** The new model as a branch of a new router beside a step named `taken`. */
function branchModel(taken: unknown, model: NewModel, extra: JsonObject = {}): JsonObject {
  return { name: uniqueName(model.name, typeof taken === "string" ? [taken] : []), [model.target]: model.value, ...extra };
}

/**
 * "+" on an arrow: a model inserted at `at` in a Sequence. It takes the previous step's answer
 * (`data: $response`) and, inserted first, hands its own answer to the step that was first.
 */
export function insertModel(state: GraphState, at: InsertPoint, model: NewModel = BLANK): FlowEdit | null {
  if (at.wrap) return insertInBranch(state, at, at.wrap, model);
  const node = nodeByName(state, at.node);
  if (!node || routerTypeOf(node) !== "Sequence" || at.index < 0 || at.index > node.steps.length) return null;
  const step = newModel(node, at.index > 0 ? { data: "$response" } : {}, model);
  const edits: Edit[] = [{ type: "addStep", node: at.node, index: at.index, step }];
  const next = node.steps[at.index];
  if (at.index === 0 && next && next.fields.data === undefined) {
    edits.push({ type: "setStepField", node: at.node, index: 1, field: "data", value: "$response" });
  }
  return { edit: edits.length === 1 ? edits[0] : { type: "batch", edits }, select: { node: at.node, index: at.index } };
}

/** The keys a branch moved into a new router keeps: its name and its target. */
function branchOf(fields: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(fields)) if (k === "name" || k === "serviceName" || k === "serviceUrl" || k === "nodeName") out[k] = v;
  return out;
}

/**
 * Puts the box `ref` and a new model side by side under a new router of `routerType`: the step
 * becomes a call of the new node (keeping its data, condition, dependency…), the new node holds
 * the step's target and the new model. In a Sequence, where a step's name is only a label, the
 * calling step takes the new node's name (as a KServe user writes `- name: ensemble, nodeName:
 * ensemble`); elsewhere it keeps its own (an Ensemble's step names are the keys of its answer).
 */
function wrap(state: GraphState, ref: StepRef, routerType: RouterType, branch: JsonObject, added: JsonObject, addedFirst = false): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  const step = node?.steps[ref.index];
  if (!node || !step || stepTarget(step.fields) === null) return null;
  const name = uniqueName(routerType.toLowerCase(), state.nodes.map((n) => n.name));
  const moved = { ...branchOf(step.fields), ...branch };
  const steps = addedFirst ? [added, moved] : [moved, added];
  const position = freeSpot(state, { x: node.position.x + 300, y: node.position.y }, steps);
  const edits: Edit[] = [
    { type: "addNode", routerType, name, position, steps },
    { type: "setStepTarget", node: ref.node, index: ref.index, kind: "nodeName", value: name },
  ];
  if (routerTypeOf(node) === "Sequence" && typeof step.fields.name === "string") {
    const others = node.steps.filter((_, i) => i !== ref.index).map((s) => s.fields.name);
    edits.push({ type: "setStepField", node: ref.node, index: ref.index, field: "name", value: uniqueName(name, others.filter((n): n is string => typeof n === "string")) });
  }
  return {
    edit: { type: "batch", edits },
    select: { node: name, index: addedFirst ? 0 : 1 },
  };
}

/**
 * "+" on a branch's arrow (into a Switch or Splitter branch, or out of an Ensemble branch): the
 * branch calls a new Sequence of the new model and what the branch called, in the arrow's order.
 */
function insertInBranch(state: GraphState, at: InsertPoint, where: "before" | "after", model: NewModel): FlowEdit | null {
  const node = nodeByName(state, at.node);
  const step = node?.steps[at.index];
  if (!node || !step || routerTypeOf(node) === "Sequence") return null;
  if (where === "before") return wrap(state, at, "Sequence", { data: "$response" }, branchModel(step.fields.name, model), true);
  return wrap(state, at, "Sequence", {}, branchModel(step.fields.name, model, { data: "$response" }));
}

/** A parallel branch beside the box: one more Ensemble step, or a new Ensemble around the box. */
export function addParallel(state: GraphState, ref: StepRef, model: NewModel = BLANK): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  if (!node || !node.steps[ref.index]) return null;
  if (routerTypeOf(node) === "Ensemble") {
    return { edit: { type: "addStep", node: ref.node, index: ref.index + 1, step: newModel(node, {}, model) }, select: { node: ref.node, index: ref.index + 1 } };
  }
  return wrap(state, ref, "Ensemble", {}, branchModel(node.steps[ref.index].fields.name, model));
}

/**
 * A model picked in the palette and dropped on a box: a box that calls nothing yet (a new blank
 * box) gets it as its target, and its name when it still has the name the view gave it; any other
 * box gets it beside itself, in parallel.
 */
export function dropOnBox(state: GraphState, ref: StepRef, model: NewModel): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  const step = node?.steps[ref.index];
  if (!node || !step) return null;
  const target = stepTarget(step.fields);
  if (target !== null && target.value !== "") return addParallel(state, ref, model);
  const edits: Edit[] = [{ type: "setStepTarget", node: ref.node, index: ref.index, kind: model.target, value: model.value }];
  const name = step.fields.name;
  if (typeof name !== "string" || BLANK_NAME.test(name)) {
    const others = node.steps.filter((_, i) => i !== ref.index).map((s) => s.fields.name);
    edits.push({ type: "setStepField", node: ref.node, index: ref.index, field: "name", value: uniqueName(model.name, others.filter((n): n is string => typeof n === "string")) });
  }
  return { edit: { type: "batch", edits }, select: ref };
}

/**
 * A model dropped on the canvas away from any box or arrow: the last step of the root Sequence
 * (a graph with no nodes gets one), or else a new Sequence node of its own.
 */
export function appendModel(state: GraphState, model: NewModel): FlowEdit | null {
  const root = nodeByName(state, "root");
  if (root && routerTypeOf(root) === "Sequence") return insertModel(state, { node: "root", index: root.steps.length }, model);
  const name = root ? uniqueName("sequence", state.nodes.map((n) => n.name)) : "root";
  const steps = [newModel(undefined, {}, model)];
  const position = freeSpot(state, { x: 0, y: 0 }, steps);
  return { edit: { type: "addNode", routerType: "Sequence", name, position, steps }, select: { node: name, index: 0 } };
}

/** A conditional branch: one more Switch step, or a new Switch around the box. */
export function addConditional(state: GraphState, ref: StepRef): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  if (!node || !node.steps[ref.index]) return null;
  if (routerTypeOf(node) === "Switch") {
    return { edit: { type: "addStep", node: ref.node, index: ref.index + 1, step: newModel(node, { condition: "" }) }, select: { node: ref.node, index: ref.index + 1 } };
  }
  const taken = node.steps[ref.index].fields.name;
  return wrap(state, ref, "Switch", { condition: "" }, { name: uniqueName("model", typeof taken === "string" ? [taken] : []), serviceName: "", condition: "" });
}

/**
 * A weighted split: one more Splitter step (weight 0, so the sum stays what it was), or a new
 * Splitter around the box that sends half the traffic to each.
 */
export function addSplit(state: GraphState, ref: StepRef): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  if (!node || !node.steps[ref.index]) return null;
  if (routerTypeOf(node) === "Splitter") {
    return { edit: { type: "addStep", node: ref.node, index: ref.index + 1, step: newModel(node, { weight: 0 }) }, select: { node: ref.node, index: ref.index + 1 } };
  }
  const taken = node.steps[ref.index].fields.name;
  return wrap(state, ref, "Splitter", { weight: 50 }, { name: uniqueName("model", typeof taken === "string" ? [taken] : []), serviceName: "", weight: 50 });
}

/** Deletes the box's step. */
export function deleteBox(state: GraphState, ref: StepRef): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  if (!node || !node.steps[ref.index]) return null;
  return { edit: { type: "removeStep", node: ref.node, index: ref.index }, select: null };
}

/** Moves the box's step `delta` places along its chain (earlier when negative). */
export function moveAlong(state: GraphState, ref: StepRef, delta: number): FlowEdit | null {
  const node = nodeByName(state, ref.node);
  const to = ref.index + delta;
  if (!node || !node.steps[ref.index] || to < 0 || to >= node.steps.length || delta === 0) return null;
  return { edit: { type: "moveStep", node: ref.node, from: ref.index, to }, select: { node: ref.node, index: to } };
}

/**
 * Where a box dropped at `at` goes along its chain: the index among its node's steps that the
 * drop point puts it at (by x in a Sequence, which runs left to right; by y among parallel
 * branches, drawn top to bottom; the other way round when the flow is `vertical`), or null when
 * it stays where it is. `centers` holds the centre
 * of every step of the node as drawn, by step index (its box, or the frame of the node it calls).
 */
export function dropIndex(routerType: string, index: number, at: { x: number; y: number }, centers: ReadonlyMap<number, { x: number; y: number }>, vertical = false): number | null {
  const axis = (routerType === "Sequence") !== vertical ? "x" : "y";
  let rank = 0;
  for (const [i, c] of centers) if (i !== index && c[axis] < at[axis]) rank++;
  return rank === index ? null : rank;
}
