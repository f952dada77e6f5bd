/**
 * One-click fixes for server issues: the edit (of the edit model, so undo and redo work) that
 * mends an issue, when one simple edit does. Pure.
 */
import type { Edit } from "./edits";
import type { GraphState, Issue } from "./types";

export interface IssueFix {
  label: string;
  edit: Edit;
}

/**
 * `contract.predictions-to-instances`: the step is fed a v1 `{"predictions"}` answer; KServe
 * (v0.16+) rewrites it as `{"instances"}` when the step sets `mapPredictionsToInstances: true`.
 * Offered only while the step is still there, in a Sequence, without the field set.
 */
export function fixForIssue(state: Pick<GraphState, "nodes">, issue: Issue): IssueFix | null {
  if (issue.code !== "contract.predictions-to-instances" || !issue.node || typeof issue.step !== "number") return null;
  const node = state.nodes.find((n) => n.name === issue.node);
  const step = node?.steps[issue.step];
  if (!node || !step || node.raw.routerType !== "Sequence" || step.fields.mapPredictionsToInstances === true) return null;
  return {
    label: "Set mapPredictionsToInstances",
    edit: { type: "setStepField", node: node.name, index: issue.step, field: "mapPredictionsToInstances", value: true },
  };
}
