import { useEffect, useRef } from "react";
import type { Run } from "../../api";
import { useLatest } from "../../common/useLatest";
import type { Notice, View } from "../types";

interface OpenedRunOptions {
  /** The run the console shows. */
  shownRun: Run | null;
  lockedVersion: number | null;
  base: number | null;
  dirty: boolean;
  view: View;
  showView: (view: View) => void;
  /** Shows a saved version read-only; false when it could not be loaded. */
  viewVersion: (n: number) => Promise<boolean>;
  setNotice: (notice: Notice) => void;
}

/**
 * A run opened from the runs list or a suite's results shows on the version it ran: read-only
 * when that is not the working copy (with the way back in the banner). `openRun` marks the run
 * being opened; once the console holds it, the canvas moves to its version.
 */
export function useOpenedRun({ shownRun, lockedVersion, base, dirty, view, showView, viewVersion, setNotice }: OpenedRunOptions) {
  const openedRun = useRef<string | null>(null);
  const openRun = (runId: string) => {
    openedRun.current = runId;
  };
  const showRunVersion = useLatest((version: number) => {
    if (lockedVersion !== null) return;
    if (version === base && !dirty) {
      if (view) showView(null);
      return;
    }
    if (view?.kind === "version" && view.version.number === version) return;
    void viewVersion(version).then((shown) => shown && setNotice({ kind: "info", text: `This run ran version ${version}: the canvas shows it read-only. “Back to editing” returns to your working copy${base !== null ? ` (v${base})` : ""}.` }));
  });
  useEffect(() => {
    if (!shownRun || shownRun.id !== openedRun.current || typeof shownRun.version !== "number") return;
    openedRun.current = null;
    showRunVersion.current(shownRun.version);
  }, [shownRun, showRunVersion]);
  return openRun;
}
