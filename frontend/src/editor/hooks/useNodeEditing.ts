import { useCallback, type Dispatch } from "react";
import { paletteStep } from "../../canvas/Canvas";
import { useLatest } from "../../common/useLatest";
import type { Edit } from "../../graph/edits";
import { freeSpot, type Size } from "../../graph/placement";
import { ROOT } from "../../graph/queries";
import type { GraphState, RouterType, TargetKind } from "../../graph/types";
import type { Selection } from "../../graph/selection";
import type { Action } from "../store";
import type { Confirm } from "../types";

export type EditOptions = { key?: string; select?: Selection } | Selection;

interface NodeEditingOptions {
  dispatch: Dispatch<Action>;
  readOnly: boolean;
  working: GraphState;
  selection: Selection;
  setConfirm: (confirm: Confirm) => void;
  viewCenter: () => { x: number; y: number };
  measuredSizes: () => Map<string, Size>;
}

/**
 * Edits of the working copy from the canvas, the palette, the panels and the keyboard. Every
 * edit goes through `onEdit` (nothing changes while the page is read-only); deleting the root
 * node asks first, wherever the delete comes from.
 */
export function useNodeEditing({ dispatch, readOnly, working, selection: sel, setConfirm, viewCenter, measuredSizes }: NodeEditingOptions) {
  const onEdit = useCallback(
    (edit: Edit, options?: EditOptions) => {
      if (readOnly) return;
      const opts = options && "kind" in options ? { select: options } : (options ?? {});
      dispatch({ type: "edit", edit, key: opts.key, select: opts.select });
    },
    [readOnly, dispatch],
  );
  const onCanvasEdit = useCallback((edit: Edit, select?: Selection, key?: string) => onEdit(edit, { select, key }), [onEdit]);

  const addNode = (routerType: RouterType) => onEdit({ type: "addNode", routerType, position: freeSpot(working, viewCenter(), [], measuredSizes()) });

  const selectedNodeName = sel.kind === "step" ? sel.node : sel.kind === "nodes" && sel.names.length === 1 ? sel.names[0] : null;
  const selectedNames = sel.kind === "nodes" ? sel.names : sel.kind === "step" ? [sel.node] : [];
  const addStep = (target: TargetKind, service?: string) => {
    const node = working.nodes.find((n) => n.name === selectedNodeName);
    if (!node) return;
    const index = sel.kind === "step" ? sel.index + 1 : node.steps.length;
    onEdit({ type: "addStep", node: node.name, index, step: paletteStep(working, node.name, target, service) }, { select: { kind: "step", node: node.name, index } });
  };

  /** Removes nodes; removing the root (the graph's entry point) asks first, since the graph cannot run without it. */
  const removeNodes = (names: string[]) => {
    const remove = () => onEdit({ type: "removeNodes", names }, { select: { kind: "none" } });
    if (!names.includes(ROOT)) {
      remove();
      return;
    }
    const others = names.length - 1;
    setConfirm({
      title: "Delete the root node?",
      body: `"root" is where every request enters the graph; without it the graph cannot run until another node is named root.${others ? ` ${others} other selected node${others > 1 ? "s" : ""} will be deleted too.` : ""} Undo (Ctrl+Z) brings it back.`,
      confirmLabel: "Delete root",
      danger: true,
      action: remove,
    });
  };

  // The Properties panel's "Delete node" goes through the same question as the Delete key.
  const removeNodesRef = useLatest(removeNodes);
  const onPanelEdit = useCallback(
    (edit: Edit, options?: EditOptions) => {
      if (edit.type === "removeNodes" && edit.names.includes(ROOT)) removeNodesRef.current(edit.names);
      else onEdit(edit, options);
    },
    [onEdit, removeNodesRef],
  );

  const deleteSelection = () => {
    if (sel.kind === "nodes") removeNodes(sel.names);
    if (sel.kind === "step") onEdit({ type: "removeStep", node: sel.node, index: sel.index }, { select: { kind: "nodes", names: [sel.node] } });
  };

  return { onEdit, onCanvasEdit, onPanelEdit, addNode, addStep, removeNodes, deleteSelection, selectedNodeName, selectedNames };
}
