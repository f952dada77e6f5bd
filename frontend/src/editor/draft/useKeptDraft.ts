import { useEffect, type Dispatch } from "react";
import type { Api, Version } from "../../api";
import { editsSince, replay } from "../../graph/history";
import { inExportOrder } from "../../graph/keyOrder";
import { fromManifest, toManifest } from "../../graph/manifest";
import { stateOfVersion, type Action, type EditorState } from "../store";
import type { Notice } from "../types";
import { useDraft } from "./useDraft";

interface KeptDraftOptions {
  api: Api;
  user: string;
  graphName: string;
  /** False on a read-only page: nothing is kept or offered. */
  enabled: boolean;
  loaded: boolean;
  dirty: boolean;
  editor: EditorState;
  base: number | null;
  dispatch: Dispatch<Action>;
  /** Makes a version from the server the working copy (the draft's base, when it is not the loaded one). */
  loadVersion: (version: Version) => void;
  /** The canvas shows a new working copy: it is drawn afresh. */
  remountCanvas: () => void;
  setNotice: (notice: Notice) => void;
}

/**
 * The unsaved draft kept in this browser (`useDraft`) and the answers to its offer after loading:
 * restore it (on the version it was drawn on when that still exists), keep it for later, or
 * discard it. Says so once when the browser cannot keep the draft.
 */
export function useKeptDraft({ api, user, graphName, enabled, loaded, dirty, editor, base, dispatch, loadVersion, remountCanvas, setNotice }: KeptDraftOptions) {
  const working = editor.history.state;
  const draft = useDraft({ user, graph: graphName, enabled, loaded, dirty, working, base, edits: () => editsSince(editor.history, editor.saveMark) });

  const draftUnkept = draft.unkept;
  useEffect(() => {
    if (draftUnkept) setNotice({ kind: "info", text: "This browser cannot keep a copy of your unsaved changes (too big, or its storage is full or blocked): save to keep them." });
  }, [draftUnkept, setNotice]);

  /** The kept draft becomes the working copy, on the version it was drawn on when that still exists. */
  const restore = async () => {
    const kept = draft.offer;
    if (!kept) return;
    draft.closeOffer(false);
    const state = fromManifest(inExportOrder(kept.manifest), kept.layout);
    let baseState = working;
    let baseNumber = base;
    if (kept.base !== null && kept.base > 0 && kept.base !== base) {
      try {
        // Saving then meets the newer version as a conflict: apply on top of it, or keep mine.
        const version = await api.getVersion(graphName, kept.base);
        loadVersion(version);
        baseState = stateOfVersion(version);
        baseNumber = version.number;
      } catch {
        // That version is gone: the draft goes on top of the latest.
      }
    }
    // As the edits that made it, when they still make it from its base (so a rebase replays them).
    const replayed = kept.edits?.length && baseNumber === kept.base && baseNumber !== null ? replay(baseState, kept.edits).state : null;
    if (replayed && baseNumber !== null && JSON.stringify(toManifest(replayed)) === JSON.stringify(kept.manifest)) {
      dispatch({ type: "rebased", base: baseNumber, baseState, edits: kept.edits ?? [] });
    } else {
      dispatch({ type: "restoreDraft", state });
    }
    remountCanvas();
    setNotice({ kind: "info", text: "Restored your unsaved changes. Review them, then Save." });
  };

  /** Not now: the kept draft stays for the next visit. */
  const later = () => {
    draft.closeOffer(false, true);
    setNotice({ kind: "info", text: "Your earlier unsaved changes stay kept in this browser; reload to restore them. Changes made now are not kept until then." });
  };

  return { offer: draft.offer, restore, later, discard: () => draft.closeOffer(true) };
}
