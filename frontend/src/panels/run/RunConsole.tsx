/**
 * The live console of one run: a header (status, version, environment, Cancel run / Run again),
 * progress while in flight, one line per step call (status, position in the graph, latency;
 * expanding it shows the request sent and the response received), route decisions, and the final
 * response or the reason the run failed. Lines and canvas steps select each other.
 */
import { useEffect, useMemo, useState } from "react";
import type { Selection } from "../../graph/selection";
import { finishedFromRun, isTerminal } from "./console";
import { failureCause, softFailures, progress } from "./consoleViews";
import type { RunController } from "./useRunController";
import { runCurl } from "../../common/curl";
import { SaveAsCaseDialog } from "../../suites/SaveAsCaseDialog";
import type { Api, TestCaseRow } from "../../api";
import { ConsoleViewPanel } from "./ConsoleViewPanel";
import { ActionError, ConsoleHead, ConsoleSub, LoadingProgress, RequestImages, RunEnd, RunProgress, elapsedMs, runStatus, type ConsoleView } from "./RunConsoleParts";

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 200);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

/** What "Save as test case" needs: the API and where the saved case goes next. */
export interface SaveAsCase {
  api: Api;
  onSaved: (row: TestCaseRow) => void;
}

export function RunConsole({ ctl, selection, onSelectStep, saveAsCase }: { ctl: RunController; selection: Selection; onSelectStep: (node: string, index: number) => void; saveAsCase?: SaveAsCase }) {
  const c = ctl.console;
  const run = ctl.run && ctl.run.id === c.runId ? ctl.run : null;
  const status = runStatus(c, run);
  const curl = useMemo(() => (run ? runCurl(window.location.origin, run) : null), [run]);
  const inFlight = !!c.runId && status !== null && !isTerminal(status);
  const now = useNow(inFlight);
  const [savingCase, setSavingCase] = useState(false);
  const [view, setView] = useState<ConsoleView>("lines");

  const p = useMemo(() => progress(c), [c]);
  const cause = useMemo(() => failureCause(c), [c]);
  const soft = useMemo(() => softFailures(c), [c]);

  if (!c.runId) {
    return (
      <section className="run-console empty" aria-label="Run console">
        <p className="empty-note">Run the graph to see each step here: what it was sent, what it answered and how long it took.</p>
        <ActionError error={ctl.actionError} />
      </section>
    );
  }

  // How it ended: its `run.finished`, or while the events are still being read, its detail.
  const finished = c.finished ?? finishedFromRun(run);
  const elapsed = elapsedMs(c, run, finished, now);

  return (
    <section className={`run-console run-${status ?? "unknown"}`} aria-label="Run console" data-run-id={c.runId}>
      <ConsoleHead ctl={ctl} run={run} runId={c.runId} status={status} inFlight={inFlight} onSaveAsCase={saveAsCase ? () => setSavingCase(true) : null} />
      {run && <ConsoleSub run={run} replay={ctl.replay} curl={curl} />}
      <RequestImages run={run} c={c} finished={finished} />
      {(ctl.loading || status === null) && <LoadingProgress loading={ctl.loading} />}
      {inFlight && <RunProgress status={status} cancelRequested={c.cancelRequested} elapsed={elapsed} p={p} reconnecting={ctl.connection === "reconnecting"} />}
      <ActionError error={ctl.actionError} />
      <ConsoleViewPanel c={c} now={now} view={view} onView={setView} selection={selection} soft={soft} onSelectStep={onSelectStep} />
      {!inFlight && <RunEnd c={c} run={run} finished={finished} elapsed={elapsed} p={p} cause={cause} soft={soft} />}
      {saveAsCase && (
        <SaveAsCaseDialog
          api={saveAsCase.api}
          runId={c.runId}
          open={savingCase}
          onClose={() => setSavingCase(false)}
          onSaved={(row) => {
            setSavingCase(false);
            saveAsCase.onSaved(row);
          }}
        />
      )}
    </section>
  );
}
