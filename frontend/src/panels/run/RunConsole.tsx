/**
 * The live console of one run: a header (status, version, environment, Cancel run / Run again),
 * progress while in flight, one line per step call (status, position in the graph, latency;
 * expanding it shows the request sent and the response received), route decisions, and the final
 * response or the reason the run failed. Lines and canvas steps select each other.
 */
import { Fragment, useEffect, useMemo, useRef, useState } from "react";
import type { Selection } from "../../editor/store";
import { Spinner, formatTime } from "../../common/ui";
import { CloseIcon, StatusIcon } from "../../common/icons";
import { describeSkip, failureCause, otherStepFields, SOFT_NOTE, softFailures, formatMs, formatSize, isTerminal, progress, showBody, showValue, stepPosition, type ConsoleLine, type ShownBody, type StepLine } from "./console";
import type { RunController } from "./useRunController";
import { JsonTree } from "../../tests/JsonTree";
import { SaveAsTestDialog } from "../../tests/SaveAsTestDialog";
import type { Api, TestCaseRow } from "../../api";


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

export function BodyBlock({ label, body, meta }: { label: string; body: ShownBody | null; meta?: string }) {
  if (!body) {
    return (
      <div className="body-block">
        <div className="body-head">
          <span className="body-label">{label}</span>
          <span className="muted">none</span>
        </div>
      </div>
    );
  }
  return (
    <div className="body-block">
      <div className="body-head">
        <span className="body-label">{label}</span>
        {meta && <span className="muted">{meta}</span>}
        <span className="muted">
          {body.binary ? "binary (base64), " : body.json ? "JSON, " : "text, "}
          {formatSize(body.size)}
          {body.truncated ? " (truncated)" : ""}
        </span>
      </div>
      {body.json && !body.truncated && body.value !== undefined ? (
        <JsonTree value={body.value} label={label} listClassName="body-text json" />
      ) : (
        <pre className={`code-block body-text${body.json ? " json" : ""}`}>{body.text || <span className="muted">(empty)</span>}</pre>
      )}
    </div>
  );
}

function StepDetails({ line }: { line: StepLine }) {
  return (
    <div className="step-details">
      <dl className="step-facts">
        <dt>Position</dt>
        <dd className="mono">
          {line.node} › step {line.stepIndex ?? "?"}
          {line.stepName ? ` "${line.stepName}"` : ""} <span className="muted">({line.callId})</span>
        </dd>
        {line.target && (
          <>
            <dt>{line.stepKind === "node" ? "Node" : "Target"}</dt>
            <dd className="mono break">
              {line.method ? `${line.method} ` : ""}
              {line.target}
            </dd>
          </>
        )}
        {line.condition && (
          <>
            <dt>Condition</dt>
            <dd className="mono break">
              {line.condition.condition}
              {line.condition.matches !== null && <> → {line.condition.matches ? "matched" : `no match${line.condition.reason ? ` (${line.condition.reason})` : ""}`}</>}
            </dd>
          </>
        )}
        {line.status === "skipped" && (
          <>
            <dt>Skipped</dt>
            <dd>{describeSkip(line.skipReason)}</dd>
          </>
        )}
        {line.error && (
          <>
            <dt>Error</dt>
            <dd className="text-error break">{line.error}</dd>
          </>
        )}
        {line.headers.length > 0 && (
          <>
            <dt>Headers</dt>
            <dd className="mono break">
              {line.headers.map(([k, v], i) => (
                <div key={i}>
                  {k}: {v}
                </div>
              ))}
            </dd>
          </>
        )}
        {otherStepFields(line).map(([name, value]) => (
          <Fragment key={name}>
            <dt className="mono">{name}</dt>
            <dd className="mono break" data-trace-field={name}>
              {typeof value === "string" ? value : JSON.stringify(value)}
            </dd>
          </Fragment>
        ))}
      </dl>
      {line.status !== "skipped" && (
        <>
          <BodyBlock label="Request sent" body={showBody(line.request)} />
          {line.status !== "running" && (
            <BodyBlock label="Response received" body={showBody(line.response)} meta={[line.statusCode !== null ? `HTTP ${line.statusCode}` : null, line.contentType].filter(Boolean).join(" · ")} />
          )}
        </>
      )}
    </div>
  );
}

function LineView({ line, current, selected, expanded, soft, onToggle }: { line: ConsoleLine; current: boolean; selected: boolean; expanded: boolean; soft: boolean; onToggle: () => void }) {
  if (line.kind === "note") {
    return <li className={`console-line console-note note-${line.level}`}>{line.text}</li>;
  }
  if (line.kind === "route") {
    return (
      <li className={`console-line console-route${current ? "" : " stale"}`} data-node={line.node}>
        <span className="route-icon" aria-hidden="true">
          ↳
        </span>
        {line.text}
      </li>
    );
  }
  const latency = line.durationMs !== null ? formatMs(line.durationMs) : line.status === "running" ? "…" : "";
  return (
    <li
      className={`console-line console-step status-${soft ? "soft-failed" : line.status}${selected ? " selected" : ""}${current ? "" : " stale"}`}
      data-node={line.node}
      data-step={line.stepIndex ?? undefined}
      data-call-id={line.callId}
      style={{ paddingLeft: `${6 + line.depth * 14}px` }}
    >
      <button type="button" className="console-line-head" aria-expanded={expanded} onClick={onToggle} title={`${line.callId}: click to ${expanded ? "hide" : "show"} the request and response, and to select the step on the canvas`}>
        <span className={`step-status status-${soft ? "soft-failed" : line.status}`} aria-label={soft ? "failed, went on (Soft)" : line.status}>
          {line.status === "running" ? <span className="spinner spinner-tiny" aria-hidden="true" /> : <StatusIcon status={soft ? "soft-failed" : line.status} size={13} />}
        </span>
        <span className="step-pos">
          {stepPosition(line)}
          <span className="muted step-idx">#{line.stepIndex ?? "?"}</span>
        </span>
        {line.statusCode !== null && <span className={`http-code${line.statusCode >= 400 ? " bad" : ""}`}>{line.statusCode}</span>}
        {line.status === "skipped" && <span className="muted small">skipped</span>}
        {soft && (
          <span className="soft-tag small" title={SOFT_NOTE}>
            went on (Soft)
          </span>
        )}
        <span className="latency">{latency}</span>
      </button>
      {expanded && <StepDetails line={line} />}
    </li>
  );
}

/** What "Save as test case" needs: the API and where the saved case goes next. */
export interface SaveAsTest {
  api: Api;
  onSaved: (row: TestCaseRow) => void;
}

export function RunConsole({ ctl, selection, onSelectStep, saveAsTest }: { ctl: RunController; selection: Selection; onSelectStep: (node: string, index: number) => void; saveAsTest?: SaveAsTest }) {
  const c = ctl.console;
  const run = ctl.run;
  const status = c.status ?? run?.status ?? null;
  const inFlight = !!c.runId && !isTerminal(status);
  const now = useNow(inFlight);
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [savingTest, setSavingTest] = useState(false);
  const listRef = useRef<HTMLOListElement>(null);

  useEffect(() => setExpanded(new Set()), [c.runId]);

  // A step selected on the canvas reveals its console line.
  const selKey = selection.kind === "step" ? `${selection.node}#${selection.index}` : null;
  useEffect(() => {
    if (!selKey || !listRef.current) return;
    const [node, index] = [selKey.slice(0, selKey.lastIndexOf("#")), selKey.slice(selKey.lastIndexOf("#") + 1)];
    const el = [...listRef.current.querySelectorAll<HTMLElement>(".console-step:not(.stale)")].find((li) => li.dataset.node === node && li.dataset.step === index);
    el?.scrollIntoView({ block: "nearest" });
  }, [selKey]);

  const p = useMemo(() => progress(c), [c]);
  const cause = useMemo(() => failureCause(c), [c]);
  const soft = useMemo(() => softFailures(c), [c]);

  if (!c.runId) {
    return (
      <section className="run-console empty" aria-label="Run console">
        <p className="empty-note">Run the graph to see each step here: what it was sent, what it answered and how long it took.</p>
        {ctl.actionError && (
          <p className="field-error" role="alert">
            {ctl.actionError}
          </p>
        )}
      </section>
    );
  }

  const startIso = c.startedAt ?? c.queuedAt ?? run?.started_at ?? run?.created_at ?? null;
  const started = startIso ? Date.parse(startIso) : NaN;
  const elapsed = c.finished?.durationMs ?? run?.duration_ms ?? (Number.isNaN(started) ? null : Math.max(0, now - started));
  const answer = c.finished?.response ?? null;
  const final = answer ? showValue(answer.body, answer.size, answer.truncated) : null;
  const finalCode = c.finished?.statusCode ?? null;
  const finalType = c.finished?.contentType ?? null;

  const toggle = (line: StepLine) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(line.key)) next.delete(line.key);
      else next.add(line.key);
      return next;
    });
    if (line.stepIndex !== null) onSelectStep(line.node, line.stepIndex);
  };

  return (
    <section className={`run-console run-${status ?? "unknown"}`} aria-label="Run console" data-run-id={c.runId}>
      <div className="console-head">
        <span className={`run-status run-status-${status ?? "unknown"}`} role="status" aria-live="polite">
          {status ?? "loading"}
        </span>
        <span className="console-title" title={c.runId}>
          Run <span className="mono">{c.runId.slice(0, 8)}</span>
          {(c.version ?? run?.version) !== null && (c.version ?? run?.version) !== undefined && <> · v{c.version ?? run?.version}</>}
          {(c.environment ?? run?.environment?.name) && <> · {c.environment ?? run?.environment?.name}</>}
        </span>
        <span className="spacer" />
        {inFlight && (
          <button type="button" className="btn btn-small btn-danger" onClick={() => void ctl.cancel()} disabled={ctl.cancelling || c.cancelRequested}>
            Cancel run
          </button>
        )}
        {!inFlight && saveAsTest && (c.finished?.statusCode ?? run?.response?.status_code ?? null) !== null && (
          <button type="button" className="btn btn-small" onClick={() => setSavingTest(true)} title="Save this run's request and what it answered as a test case of the graph">
            Save as test case…
          </button>
        )}
        {!inFlight && (
          <button type="button" className="btn btn-small" onClick={() => void ctl.rerun(c.runId!)} title="Start a new run with the same version, request, environment and seed">
            Run again
          </button>
        )}
        <button type="button" className="btn btn-ghost btn-tiny" onClick={ctl.detach} aria-label="Close the console" title="Close the console and clear the marks on the canvas">
          <CloseIcon />
        </button>
      </div>
      {run && (
        <div className="console-sub muted small">
          {run.created_by && <>by {run.created_by} · </>}
          {formatTime(run.created_at)}
          {ctl.replay && <> · replayed from its stored events</>}
        </div>
      )}
      {inFlight && (
        <div className="run-progress" role="progressbar" aria-label="Run progress" aria-valuetext={`${p.done} steps done`}>
          <div className="progress-track">
            <div className="progress-bar indeterminate" />
          </div>
          <div className="progress-text small">
            <Spinner decorative /> {status === "queued" ? "Waiting for a worker" : c.cancelRequested ? "Cancelling" : "Running"} · <span className="elapsed">{elapsed === null ? "" : `${(elapsed / 1000).toFixed(1)} s`}</span> · {p.done} step{p.done === 1 ? "" : "s"} done
            {p.running > 0 && <> · {p.running} running</>}
            {ctl.connection === "reconnecting" && <span className="reconnecting"> · reconnecting…</span>}
          </div>
        </div>
      )}
      {ctl.actionError && (
        <p className="field-error" role="alert">
          {ctl.actionError}
        </p>
      )}
      <ol className="console-lines" ref={listRef} aria-label="Steps">
        {c.lines.map((line) => (
          <LineView
            key={line.key}
            line={line}
            current={line.kind === "note" || line.attempt === c.attempt}
            selected={line.kind === "step" && selection.kind === "step" && selection.node === line.node && selection.index === line.stepIndex && line.attempt === c.attempt}
            expanded={expanded.has(line.key)}
            soft={line.kind === "step" && soft.includes(line)}
            onToggle={() => line.kind === "step" && toggle(line)}
          />
        ))}
      </ol>
      {!inFlight && c.finished && (
        <div className={`run-outcome run-outcome-${c.finished.status}`}>
          <div className="outcome-line">
            <strong>{c.finished.status === "succeeded" ? "Succeeded" : c.finished.status === "cancelled" ? "Cancelled" : "Failed"}</strong>
            {elapsed !== null && <> in {formatMs(elapsed)}</>} · {p.done} step{p.done === 1 ? "" : "s"} ran
            {p.skipped > 0 && <>, {p.skipped} skipped</>}
            {p.failed > 0 && <>, {p.failed} failed</>}
          </div>
          {cause && (
            <div className="run-error" role="alert">
              {cause}
            </div>
          )}
          {soft.length > 0 && (
            <div className="run-soft-note">
              {soft.length} call{soft.length === 1 ? "" : "s"} failed, but the graph went on: {soft.map((l) => stepPosition(l)).join(", ")}. Their steps are Soft dependencies (the default), so
              their node answered anyway; make a step <code>dependency: Hard</code> to stop there instead.
            </div>
          )}
        </div>
      )}
      {!inFlight && (finalCode !== null || final) && (
        <div className="run-final">
          <div className="final-head">
            Response <span className={`http-code${finalCode !== null && finalCode >= 400 ? " bad" : ""}`}>{finalCode ?? "—"}</span>
            {finalType && <span className="mono small">{finalType}</span>}
          </div>
          {final && <BodyBlock label="Body" body={final} />}
        </div>
      )}
      {saveAsTest && (
        <SaveAsTestDialog
          api={saveAsTest.api}
          runId={c.runId}
          open={savingTest}
          onClose={() => setSavingTest(false)}
          onSaved={(row) => {
            setSavingTest(false);
            saveAsTest.onSaved(row);
          }}
        />
      )}
    </section>
  );
}
