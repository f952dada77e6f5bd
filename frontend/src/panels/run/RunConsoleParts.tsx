/**
 * The parts of the run console, one job each: its header and the line under it, the request's
 * images, the loading and run progress bars, the tabs between the step lines and the waterfall,
 * the step picked on the waterfall, how the run ended and the graph's final response.
 */
import type { Run } from "../../api";
import { Spinner, formatTime } from "../../common/ui";
import { CloseIcon } from "../../common/icons";
import { CopyCommandButton } from "../../common/CopyCommand";
import { formatMs } from "../../graph/format";
import { showValue, type ShownBody } from "./bodies";
import { isTerminal, type ConsoleState, type FinishInfo, type StepLine } from "./console";
import { releaseTitle, type Progress } from "./consoleViews";
import { stepPosition } from "./describe";
import type { RunController } from "./useRunController";
import { BodyBlock, StepDetails } from "./StepViews";
import { InputImage } from "./RunImages";
import { requestImages, runBoxes } from "./images";

type Loading = RunController["loading"];
export type ConsoleView = "lines" | "waterfall";

/**
 * A run that has ended is shown so at once, from its events or its detail, whichever says so
 * first: the end must not wait for the replay of thousands of stored events.
 */
export function runStatus(c: ConsoleState, run: Run | null) {
  if (isTerminal(c.status)) return c.status;
  if (isTerminal(run?.status)) return run!.status;
  return c.status ?? run?.status ?? null;
}

/** How long the run took, or while it runs, how long it has been going. */
export function elapsedMs(c: ConsoleState, run: Run | null, finished: FinishInfo | null, now: number): number | null {
  const startIso = c.startedAt ?? c.queuedAt ?? run?.started_at ?? run?.created_at ?? null;
  const started = startIso ? Date.parse(startIso) : NaN;
  return finished?.durationMs ?? run?.duration_ms ?? (Number.isNaN(started) ? null : Math.max(0, now - started));
}

/** What the loading bar says: events read so far, of how many. */
function loadingText(loading: Loading): string {
  if (!loading) return "Loading the run…";
  if (loading.total === null) return loading.loaded ? `Loading events · ${loading.loaded.toLocaleString("en")} read` : "Loading events…";
  return `Loading events · ${loading.loaded.toLocaleString("en")} of ${loading.total.toLocaleString("en")}`;
}

/** "9,849 ok, 1 http-error": a run's steps by outcome, the most common first. */
function summariseCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([outcome, n]) => `${n.toLocaleString("en")} ${outcome}`)
    .join(", ");
}

/** The run's short id, version, environment and KServe release (from its events, else its detail). */
function ConsoleTitle({ c, run, runId }: { c: ConsoleState; run: Run | null; runId: string }) {
  const version = c.version ?? run?.version;
  const environment = c.environment ?? run?.environment?.name;
  return (
    <span className="console-title" title={runId}>
      Run <span className="mono">{runId.slice(0, 8)}</span>
      {version !== null && version !== undefined && <> · v{version}</>}
      {environment && <> · {environment}</>}
      {releaseTitle(c, run)}
    </span>
  );
}

/** The header: status, run id, version and environment, and what can be done with the run. */
export function ConsoleHead({ ctl, run, runId, status, inFlight, onSaveAsCase }: { ctl: RunController; run: Run | null; runId: string; status: string | null; inFlight: boolean; onSaveAsCase: (() => void) | null }) {
  const c = ctl.console;
  const answered = (c.finished?.statusCode ?? run?.response?.status_code ?? null) !== null;
  return (
    <div className="console-head">
      <span className={`run-status run-status-${status ?? "unknown"}`} role="status" aria-live="polite">
        {status ?? "loading"}
      </span>
      <ConsoleTitle c={c} run={run} runId={runId} />
      <span className="spacer" />
      {inFlight && (
        <button type="button" className="btn btn-small btn-danger" onClick={() => void ctl.cancel()} disabled={ctl.cancelling || c.cancelRequested}>
          Cancel run
        </button>
      )}
      {!inFlight && onSaveAsCase && answered && (
        <button type="button" className="btn btn-small" onClick={onSaveAsCase} title="Save this run's request and what it answered as a test case of the graph">
          Save as test case…
        </button>
      )}
      {!inFlight && status !== null && (
        <button type="button" className="btn btn-small" onClick={() => void ctl.rerun(runId)} title="Start a new run with the same version, request, environment and seed">
          Run again
        </button>
      )}
      <button type="button" className="btn btn-ghost btn-tiny" onClick={ctl.detach} aria-label="Close the console" title="Close the console and clear the marks on the canvas">
        <CloseIcon />
      </button>
    </div>
  );
}

/** Under the header: who started the run and when, whether it is a replay, and its curl command. */
export function ConsoleSub({ run, replay, curl }: { run: Run; replay: boolean; curl: string | null }) {
  return (
    <div className="console-sub muted small">
      {run.created_by && <>by {run.created_by} · </>}
      {formatTime(run.created_at)}
      {replay && <> · replayed from its stored events</>}
      {curl && (
        <>
          {" "}
          <CopyCommandButton command={curl} label="Copy as curl" title="A curl command that starts this run again through the API (version, request, environment and seed)" />
        </>
      )}
    </div>
  );
}

/** The images the run was sent (the first four), with the boxes its answer or its steps found. */
export function RequestImages({ run, c, finished }: { run: Run | null; c: ConsoleState; finished: FinishInfo | null }) {
  const inputs = requestImages(run?.request?.body);
  if (inputs.length === 0) return null;
  const boxes = runBoxes(
    finished?.response?.body,
    c.lines.map((l) => (l.kind === "step" ? l.response?.body : undefined)),
  );
  return (
    <div className="input-images">
      {inputs.slice(0, 4).map((src, i) => (
        <InputImage key={i} src={src} boxes={boxes ? (boxes[i] ?? []) : null} />
      ))}
    </div>
  );
}

/** The bar shown while the run's stored events are read. */
export function LoadingProgress({ loading }: { loading: Loading }) {
  return (
    <div className="run-progress loading-events" role="progressbar" aria-label="Loading the run" aria-valuemin={0} aria-valuemax={loading?.total ?? undefined} aria-valuenow={loading?.loaded ?? 0} aria-valuetext={loadingText(loading)}>
      <div className="progress-track">
        <div className={`progress-bar${loading?.total ? "" : " indeterminate"}`} style={loading?.total ? { width: `${Math.min(100, (100 * loading.loaded) / loading.total)}%` } : undefined} />
      </div>
      <div className="progress-text small">
        <Spinner decorative /> {loadingText(loading)}
      </div>
    </div>
  );
}

/** The bar shown while the run is in flight: what it is doing, for how long, how many steps. */
export function RunProgress({ status, cancelRequested, elapsed, p, reconnecting }: { status: string | null; cancelRequested: boolean; elapsed: number | null; p: Progress; reconnecting: boolean }) {
  const doing = status === "queued" ? "Waiting for a worker" : cancelRequested ? "Cancelling" : "Running";
  return (
    <div className="run-progress" role="progressbar" aria-label="Run progress" aria-valuetext={`${p.done} steps done`}>
      <div className="progress-track">
        <div className="progress-bar indeterminate" />
      </div>
      <div className="progress-text small">
        <Spinner decorative /> {doing} · <span className="elapsed">{elapsed === null ? "" : `${(elapsed / 1000).toFixed(1)} s`}</span> · {p.done} step{p.done === 1 ? "" : "s"} done
        {p.running > 0 && <> · {p.running} running</>}
        {reconnecting && <span className="reconnecting"> · reconnecting…</span>}
      </div>
    </div>
  );
}

/** The tabs between the step lines and the waterfall. */
export function ConsoleViewTabs({ view, onView }: { view: ConsoleView; onView: (view: ConsoleView) => void }) {
  return (
    <div className="console-views" role="tablist" aria-label="How to show the run">
      <button type="button" role="tab" id="console-tab-lines" className="console-view-tab" aria-selected={view === "lines"} aria-controls="console-view" onClick={() => onView("lines")}>
        Steps
      </button>
      <button type="button" role="tab" id="console-tab-waterfall" className="console-view-tab" aria-selected={view === "waterfall"} aria-controls="console-view" onClick={() => onView("waterfall")} title="Each step call on one time axis: what ran in parallel, and what the run waited for">
        Waterfall
      </button>
    </div>
  );
}

/** The step picked on the waterfall: its position, latency and details. */
export function PickedStep({ line }: { line: StepLine }) {
  return (
    <section className="wf-picked" aria-label={`Step ${stepPosition(line)}`}>
      <div className="small">
        <strong>{stepPosition(line)}</strong> {line.durationMs !== null && <span className="muted">· {formatMs(line.durationMs)}</span>}
      </div>
      <StepDetails line={line} />
    </section>
  );
}

/** How many steps ran: until every event is read, the counts from the run's detail (all of its steps). */
function StepsSummary({ p, pendingTotal, counts }: { p: Progress; pendingTotal: number | null; counts: Record<string, number> | null }) {
  if (pendingTotal !== null) {
    return (
      <span className="step-summary">
        {pendingTotal.toLocaleString("en")} step{pendingTotal === 1 ? "" : "s"}
        {counts && Object.keys(counts).length > 0 && <> ({summariseCounts(counts)})</>}
      </span>
    );
  }
  return (
    <>
      {p.done} step{p.done === 1 ? "" : "s"} ran
      {p.skipped > 0 && <>, {p.skipped} skipped</>}
      {p.failed > 0 && <>, {p.failed} failed</>}
    </>
  );
}

const OUTCOME_WORD: Record<string, string> = { succeeded: "Succeeded", cancelled: "Cancelled" };

/**
 * How the run ended: its outcome, time and steps; why it failed (from its events once read, else
 * from its detail); and the calls that failed while the graph went on.
 */
export function RunOutcome({ finished, fromEvents, elapsed, p, pendingTotal, counts, cause, soft }: { finished: FinishInfo; fromEvents: boolean; elapsed: number | null; p: Progress; pendingTotal: number | null; counts: Record<string, number> | null; cause: string | null; soft: StepLine[] }) {
  const reason = fromEvents ? cause : finished.error;
  return (
    <div className={`run-outcome run-outcome-${finished.status}`}>
      <div className="outcome-line">
        <strong>{OUTCOME_WORD[finished.status] ?? "Failed"}</strong>
        {elapsed !== null && <> in {formatMs(elapsed)}</>} · <StepsSummary p={p} pendingTotal={pendingTotal} counts={counts} />
      </div>
      {reason && (
        <div className="run-error" role="alert">
          {reason}
        </div>
      )}
      {soft.length > 0 && (
        <div className="run-soft-note">
          {soft.length} call{soft.length === 1 ? "" : "s"} failed, but the graph went on: {soft.map((l) => stepPosition(l)).join(", ")}. Their steps are Soft dependencies (the default), so
          their node answered anyway; make a step <code>dependency: Hard</code> to stop there instead.
        </div>
      )}
    </div>
  );
}

/** The graph's final response: its HTTP code, content type and body. */
export function RunFinal({ code, contentType, body }: { code: number | null; contentType: string | null; body: ShownBody | null }) {
  return (
    <div className="run-final">
      <div className="final-head">
        Response <span className={`http-code${code !== null && code >= 400 ? " bad" : ""}`}>{code ?? "—"}</span>
        {contentType && <span className="mono small">{contentType}</span>}
      </div>
      {body && <BodyBlock label="Body" body={body} />}
    </div>
  );
}

/** Once the run is over: how it ended, and the graph's final response if it gave one. */
export function RunEnd({ c, run, finished, elapsed, p, cause, soft }: { c: ConsoleState; run: Run | null; finished: FinishInfo | null; elapsed: number | null; p: Progress; cause: string | null; soft: StepLine[] }) {
  const answer = finished?.response ?? null;
  const final = answer ? showValue(answer.body, answer.size, answer.truncated) : null;
  const finalCode = finished?.statusCode ?? null;
  // Until every event is read, the counts come from the run's detail (all of its steps).
  const stepsPending = !c.finished && !!run && isTerminal(run.status);
  const pendingTotal = stepsPending ? (run?.steps_total ?? null) : null;
  return (
    <>
      {finished && <RunOutcome finished={finished} fromEvents={!!c.finished} elapsed={elapsed} p={p} pendingTotal={pendingTotal} counts={run?.step_counts ?? null} cause={cause} soft={soft} />}
      {(finalCode !== null || final) && <RunFinal code={finalCode} contentType={finished?.contentType ?? null} body={final} />}
    </>
  );
}

/** An action on the run (start, cancel, run again) that failed, if one did. */
export function ActionError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="field-error" role="alert">
      {error}
    </p>
  );
}
