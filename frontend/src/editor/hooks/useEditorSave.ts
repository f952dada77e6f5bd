import { useEffect, useRef, useState, type Dispatch } from "react";
import type { Api, Version } from "../../api";
import { useLatest } from "../../common/useLatest";
import type { Issue } from "../../graph/types";
import type { YamlControl, YamlInvalid } from "../../panels/YamlPanel";
import type { Action, EditorState } from "../store";
import type { Busy, Notice } from "../types";
import { useSaveWithConflict } from "./useSaveWithConflict";

interface EditorSaveOptions {
  api: Api;
  graphName: string;
  /** The signed-in user: the one who signs in again when the session ended. */
  user: string;
  editor: EditorState;
  dispatch: Dispatch<Action>;
  canSave: boolean;
  base: number | null;
  setServerIssues: (issues: Issue[]) => void;
  setNotice: (notice: Notice | null) => void;
  setBusy: (busy: Busy) => void;
  onVersionsChanged: () => void;
  /** Text typed in the YAML tab does not parse: the tab is shown with it. */
  showYaml: () => void;
}

/**
 * The editor's Save: text typed in the YAML tab is applied first (and a save refused while it
 * does not parse), then the working copy is saved with optimistic locking (`saver`, with its
 * conflict). When the session ended, `signIn` holds the save's base until the user signs in again
 * (`signInWith`) or says they did on another tab (`retryAfterSignIn`), and the save goes on.
 */
export function useEditorSave({ api, graphName, user, editor, dispatch, canSave, base, setServerIssues, setNotice, setBusy, onVersionsChanged, showYaml }: EditorSaveOptions) {
  // The session ended on Save: the sign-in dialog holds the save's base until it goes on.
  const [signIn, setSignIn] = useState<{ baseOverride?: number } | null>(null);
  const saver = useSaveWithConflict({
    api,
    graphName,
    editor,
    dispatch,
    canSave,
    base,
    setServerIssues,
    setNotice,
    setBusy,
    onVersionsChanged,
    onSignInNeeded: (baseOverride) => setSignIn({ baseOverride }),
  });

  // Text typed in the YAML tab: Save applies it first, and refuses while it does not parse.
  const yamlControl = useRef<YamlControl | null>(null);
  const [yamlInvalid, setYamlInvalid] = useState<YamlInvalid | null>(null);
  const queuedSave = useRef<{ baseOverride?: number; resolve: (v: Version | null) => void } | null>(null);
  const [saveTick, setSaveTick] = useState(0);
  const save = (baseOverride?: number): Promise<Version | null> => {
    const flushed = yamlControl.current?.flush() ?? { status: "same" as const };
    if (flushed.status === "invalid") {
      showYaml();
      setNotice({ kind: "error", text: `Not saved: the YAML does not parse (line ${flushed.invalid.line}: ${flushed.invalid.message}). Fix the text or undo it, then save.` });
      return Promise.resolve(null);
    }
    if (flushed.status === "applied") {
      // The typed text is now an edit: save once the working copy holds it (the next render).
      return new Promise((resolve) => {
        queuedSave.current = { baseOverride, resolve };
        setSaveTick((t) => t + 1);
      });
    }
    return saver.save(baseOverride);
  };
  const saveNow = useLatest(saver.save);
  useEffect(() => {
    const queued = queuedSave.current;
    if (!queued) return;
    queuedSave.current = null;
    void saveNow.current(queued.baseOverride).then(queued.resolve);
  }, [saveTick, saveNow]);

  /** Signed in on another tab: take the new CSRF token and save again. */
  const retryAfterSignIn = () => {
    const pending = signIn;
    api.refreshCsrfToken();
    setSignIn(null);
    void save(pending?.baseOverride);
  };

  /** Signs in with the password and saves; resolves to why not (a sentence) or null. */
  const signInWith = async (password: string): Promise<string | null> => {
    const result = await api.signIn(user, password);
    if (!result.ok) return result.message;
    const pending = signIn;
    setSignIn(null);
    void save(pending?.baseOverride);
    return null;
  };

  return { saver, save, yamlControl, yamlInvalid, setYamlInvalid, signIn, closeSignIn: () => setSignIn(null), retryAfterSignIn, signInWith };
}
