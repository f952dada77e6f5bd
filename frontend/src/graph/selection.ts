/**
 * What is selected in the editor: nodes (cards or boxes) or one step. Both views draw it, the
 * panels show it and the editor's store keeps it, so it lives with the model they share.
 */
import type { GraphState } from "./types";

export type Selection =
  | { kind: "none" }
  | { kind: "nodes"; names: string[] }
  | { kind: "step"; node: string; index: number };

/** Drops selected elements that no longer exist. */
export function fixSelection(state: GraphState, selection: Selection): Selection {
  if (selection.kind === "nodes") {
    const names = selection.names.filter((n) => state.nodes.some((x) => x.name === n));
    if (names.length === selection.names.length) return selection;
    return names.length ? { kind: "nodes", names } : { kind: "none" };
  }
  if (selection.kind === "step") {
    const node = state.nodes.find((n) => n.name === selection.node);
    if (!node) return { kind: "none" };
    if (selection.index >= node.steps.length) return { kind: "nodes", names: [node.name] };
  }
  return selection;
}
