import { useState, type Dispatch } from "react";
import { ApiError, type Api, type ConflictBody, type Version } from "../../api";
import { describeApiError, errorText } from "../../common/ui";
import { editsSince, replay } from "../../graph/history";
import { toLayout, toManifest } from "../../graph/manifest";
import type { Issue } from "../../graph/types";
import { snapshot, stateOfVersion, type Action, type EditorState } from "../store";
import type { Busy, Notice } from "../types";

interface SaveOptions {
  api: Api;
  graphName: string;
  editor: EditorState;
  dispatch: Dispatch<Action>;
  /** False while the page is read-only, loading or failed to load. */
  canSave: boolean;
  /** The version the working copy is based on (sent as If-Match), null before the first save. */
  base: number | null;
  setServerIssues: (issues: Issue[]) => void;
  setNotice: (notice: Notice | null) => void;
  setBusy: (busy: Busy) => void;
  /** A new version exists: the History panel reloads. */
  onVersionsChanged: () => void;
  /** The session ended (401): the editor asks to sign in again, then saves with the same base. */
  onSignInNeeded?: (baseOverride?: number) => void;
}

/**
 * Saving with optimistic locking: a save names its base version; when someone saved a newer one
 * the server answers 409 and `conflict` holds its answer until the user picks "apply my edits on
 * top" (`rebase`), "overwrite with mine" (`save(conflict.latest_version)`) or keeps editing.
 */
export function useSaveWithConflict({ api, graphName, editor, dispatch, canSave, base, setServerIssues, setNotice, setBusy, onVersionsChanged, onSignInNeeded }: SaveOptions) {
  const [saving, setSaving] = useState(false);
  const [message, setMessage] = useState("");
  const [conflict, setConflict] = useState<ConflictBody | null>(null);
  const working = editor.history.state;

  /** Saves the working copy; resolves to the saved version, or null when nothing was saved. */
  const save = async (baseOverride?: number): Promise<Version | null> => {
    if (!canSave || saving) return null;
    setSaving(true);
    setNotice(null);
    const state = working;
    const layout = toLayout(state);
    try {
      const result = await api.saveVersion(graphName, { manifest: toManifest(state), layout, message: message.trim() }, baseOverride ?? base);
      dispatch({ type: "saved", version: result.version, snapshot: snapshot(state) });
      if (Array.isArray(result.version.issues)) setServerIssues(result.version.issues);
      setMessage("");
      setConflict(null);
      onVersionsChanged();
      const invalid = result.version.valid === false ? " It has errors: export and runs stay blocked until they are fixed." : "";
      setNotice(
        result.status === 201
          ? { kind: result.version.valid === false ? "info" : "ok", text: `Saved version ${result.version.number}.${invalid}` }
          : { kind: "info", text: `Nothing new to save: version ${result.version.number} is identical.` },
      );
      return result.version;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body) {
        setConflict(err.body as unknown as ConflictBody);
      } else if (err instanceof ApiError && err.status === 401 && onSignInNeeded) {
        onSignInNeeded(baseOverride);
      } else {
        setNotice({ kind: "error", text: `Save failed: ${describeApiError(err)}` });
      }
      return null;
    } finally {
      setSaving(false);
    }
  };

  /** Rebase: the latest version becomes the base and the local edits are replayed on it. */
  const rebase = async () => {
    if (!conflict) return;
    setBusy("rebase");
    try {
      const latest = conflict.latest && typeof conflict.latest.number === "number" ? conflict.latest : await api.getVersion(graphName, conflict.latest_version);
      const baseState = stateOfVersion(latest);
      let edits = editsSince(editor.history, editor.saveMark);
      if (!edits || edits.length === 0) edits = [{ type: "replaceManifest", manifest: toManifest(working) }];
      const { skipped } = replay(baseState, edits);
      dispatch({ type: "rebased", base: latest.number, baseState, edits });
      setConflict(null);
      onVersionsChanged();
      setNotice({
        kind: "info",
        text: `Your ${edits.length === 1 ? "edit now sits" : `${edits.length} edits now sit`} on top of version ${latest.number}${skipped ? ` (${skipped} no longer applied)` : ""}. Review, then Save.`,
      });
    } catch (err) {
      setNotice({ kind: "error", text: `Could not load the latest version: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  return { save, rebase, saving, message, setMessage, conflict, setConflict };
}
