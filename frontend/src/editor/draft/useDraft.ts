import { useCallback, useEffect, useRef, useState } from "react";
import { toLayout, toManifest } from "../../graph/manifest";
import type { Edit } from "../../graph/edits";
import type { GraphState } from "../../graph/types";
import { useLatest } from "../../common/useLatest";
import { snapshot } from "../store";
import { clearDraft, readDraft, writeDraft, type Draft } from "./draft";

/** How long after the last edit the draft is written (and on leaving the page at once). */
const WRITE_DELAY_MS = 400;

interface DraftOptions {
  user: string;
  graph: string;
  /** False on a read-only page: nothing is kept or offered. */
  enabled: boolean;
  /** The working copy is loaded (the offer is made once, after that). */
  loaded: boolean;
  dirty: boolean;
  working: GraphState;
  base: number | null;
  /** The edits since the base (kept with the draft, for a rebase after restoring it). */
  edits: () => Edit[] | null;
}

/**
 * Keeps the unsaved working copy as a draft while it differs from what was saved, drops it once
 * saved or undone, and after loading offers a kept draft that differs from what was loaded
 * (`offer`). While the offer is open nothing is written, so the kept draft stays as it was until
 * the user restores or discards it.
 */
export function useDraft({ user, graph, enabled, loaded, dirty, working, base, edits }: DraftOptions) {
  const [offer, setOffer] = useState<Draft | null>(null);
  const offerOpen = useRef(false);
  const checked = useRef(false);
  const [unkept, setUnkept] = useState(false);

  useEffect(() => {
    if (!enabled || !loaded || checked.current) return;
    checked.current = true;
    const kept = readDraft(user, graph);
    if (!kept) return;
    const same = JSON.stringify(toManifest(working)) === JSON.stringify(kept.manifest) && JSON.stringify(toLayout(working).nodes) === JSON.stringify(kept.layout.nodes);
    if (same && kept.base === base) {
      clearDraft(user, graph);
      return;
    }
    offerOpen.current = true;
    setOffer(kept);
    // Only once, after loading: `working` and `base` are read as they are then.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [enabled, loaded, user, graph]);

  const write = useLatest(() => {
    if (!enabled || !loaded || !checked.current || offerOpen.current) return;
    if (!dirty) {
      clearDraft(user, graph);
      return;
    }
    const draft: Draft = { base, manifest: toManifest(working), layout: toLayout(working), savedAt: new Date().toISOString() };
    const since = edits();
    if (since && since.length) draft.edits = since;
    // Too big with its edits (a large paste): the document alone still restores.
    const kept = writeDraft(user, graph, draft) || (draft.edits !== undefined && writeDraft(user, graph, { ...draft, edits: undefined }));
    setUnkept(!kept);
  });

  const workingSnapshot = enabled && loaded ? snapshot(working) : "";
  useEffect(() => {
    if (!enabled || !loaded) return;
    const timer = setTimeout(() => write.current(), dirty ? WRITE_DELAY_MS : 0);
    return () => clearTimeout(timer);
  }, [enabled, loaded, dirty, workingSnapshot, base, write]);

  // Leaving the page (reload, close, a redirect to the sign-in page) writes at once.
  useEffect(() => {
    const onHide = () => write.current();
    window.addEventListener("pagehide", onHide);
    return () => window.removeEventListener("pagehide", onHide);
  }, [write]);

  /**
   * The offer is answered: the caller restores the draft, or it is dropped (`discard`). Closed
   * without an answer (`later`), the kept draft stays as it is for the next visit, and this page
   * keeps no draft of its own meanwhile.
   */
  const closeOffer = useCallback(
    (discard: boolean, later = false) => {
      offerOpen.current = later;
      setOffer(null);
      if (discard) clearDraft(user, graph);
    },
    [user, graph],
  );

  return { offer, closeOffer, unkept };
}
