/**
 * The editor's state: the edit history of the working copy, the selection, the version the
 * working copy is based on (for If-Match) and what was last saved (for the unsaved marker).
 * A plain reducer over the pure graph model.
 */
import { inExportOrder } from "../graph/keyOrder";
import type { Version } from "../api";
import type { Edit } from "../graph/edits";
import { createHistory, pushEdit, redo, seal, undo, type History } from "../graph/history";
import { fromManifest, toLayout, toManifest } from "../graph/manifest";
import { fixSelection, type Selection } from "../graph/selection";
import type { GraphState, Viewport } from "../graph/types";

export interface EditorState {
  history: History;
  selection: Selection;
  /** The version the working copy was loaded from or last saved as; sent as If-Match. */
  base: number | null;
  /** `snapshot()` of the working copy when it was loaded or saved. */
  savedSnapshot: string;
  /** `history.past.length` at that point; edits after it are the ones a rebase replays. */
  saveMark: number;
}

export type Action =
  | { type: "edit"; edit: Edit; key?: string; select?: Selection }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "select"; selection: Selection }
  | { type: "viewport"; viewport: Viewport }
  | { type: "load"; version: Version }
  /** After a save: the working copy is now `version`, kept as it is (positions and ids). */
  | { type: "saved"; version: Version; snapshot: string }
  /**
   * A kept draft becomes the working copy on top of what is loaded (one undo step back to it);
   * it stays unsaved.
   */
  | { type: "restoreDraft"; state: GraphState }
  /** Rebase: `state` (latest + replayed edits) becomes the working copy on base `base`. */
  | { type: "rebased"; base: number; baseState: GraphState; edits: Edit[] };

/** What decides "unsaved": the manifest and the positions of both views (not the viewport). */
export function snapshot(state: GraphState): string {
  const layout = toLayout(state);
  return JSON.stringify([toManifest(state), layout.nodes, layout.flow ?? null]);
}

/** A saved version as a graph state, its keys in export order (the server sends them sorted). */
export function stateOfVersion(version: Version): GraphState {
  return fromManifest(inExportOrder(version.manifest ?? {}), version.layout ?? null);
}

export function initialEditorState(version: Version | null): EditorState {
  const state = version ? stateOfVersion(version) : fromManifest({}, null);
  return {
    history: createHistory(state),
    selection: { kind: "none" },
    base: version?.number ?? null,
    savedSnapshot: snapshot(state),
    saveMark: 0,
  };
}

export function editorReducer(s: EditorState, action: Action): EditorState {
  switch (action.type) {
    case "edit": {
      const history = pushEdit(s.history, action.edit, { key: action.key });
      if (history === s.history) return action.select ? { ...s, selection: fixSelection(s.history.state, action.select) } : s;
      let selection = action.select ?? s.selection;
      if (!action.select) {
        // Nodes an edit adds (drop from the palette, paste) become the selection.
        const before = new Set(s.history.state.nodes.map((n) => n.name));
        const added = history.state.nodes.filter((n) => !before.has(n.name)).map((n) => n.name);
        if (added.length) selection = { kind: "nodes", names: added };
      }
      return { ...s, history, selection: fixSelection(history.state, selection) };
    }
    case "undo": {
      const history = undo(s.history);
      if (history === s.history) return s;
      return { ...s, history, selection: fixSelection(history.state, s.selection) };
    }
    case "redo": {
      const history = redo(s.history);
      if (history === s.history) return s;
      return { ...s, history, selection: fixSelection(history.state, s.selection) };
    }
    case "select":
      return { ...s, selection: fixSelection(s.history.state, action.selection) };
    case "viewport": {
      // The viewport is saved with the layout but is not an edit (no undo step, not "unsaved").
      const state = { ...s.history.state, viewport: action.viewport };
      return { ...s, history: { ...s.history, state } };
    }
    case "load":
      return initialEditorState(action.version);
    case "saved":
      return { ...s, history: seal(s.history), base: action.version.number, savedSnapshot: action.snapshot, saveMark: s.history.past.length };
    case "restoreDraft": {
      const entry = { edit: { type: "replaceManifest" as const, manifest: toManifest(action.state) }, before: s.history.state, at: 0 };
      const history = { state: action.state, past: [...s.history.past, entry], future: [] };
      return { ...s, history, selection: fixSelection(action.state, s.selection) };
    }
    case "rebased": {
      let history = createHistory(action.baseState);
      for (const edit of action.edits) history = pushEdit(history, edit);
      return {
        history,
        selection: fixSelection(history.state, s.selection),
        base: action.base,
        savedSnapshot: snapshot(action.baseState),
        saveMark: 0,
      };
    }
  }
}

