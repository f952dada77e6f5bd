/**
 * Past runs of a graph (the "Runs" toolbar button): a filterable list (version, environment,
 * status, time, duration); open one to replay its console and canvas marks, run one again, or pick
 * two and compare them side by side (status, per-step outcomes, latencies and outputs, and the
 * version diff when they ran different versions).
 */
import { useCallback, useEffect, useState } from "react";
import type { Api, Diff, Run, RunStatus, RunSummary } from "../../api";
import { Modal, Spinner, describeApiError, formatTime } from "../../common/ui";
import { DiffView } from "../DiffView";
import { formatMs } from "../../graph/format";
import { showValue } from "./bodies";
import { compareRuns, sameResponse } from "./compareRuns";
import { BodyBlock } from "./StepViews";

const STATUSES: RunStatus[] = ["queued", "running", "succeeded", "failed", "cancelled"];

export function RunsDialog({
  api,
  graph,
  open,
  currentRunId,
  onClose,
  onOpen,
  onRunAgain,
}: {
  api: Api;
  graph: string;
  open: boolean;
  currentRunId: string | null;
  onClose: () => void;
  onOpen: (run: RunSummary) => void;
  onRunAgain: (run: RunSummary) => void;
}) {
  const [runs, setRuns] = useState<RunSummary[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [count, setCount] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<RunStatus | "">("");
  const [version, setVersion] = useState("");
  const [picked, setPicked] = useState<string[]>([]);
  const [comparing, setComparing] = useState<[string, string] | null>(null);

  const load = useCallback(async () => {
    setLoading(true);
    setError(null);
    try {
      const v = Number.parseInt(version, 10);
      const page = await api.listRuns(graph, { status, version: Number.isFinite(v) && v > 0 ? v : undefined });
      setRuns(page.results ?? []);
      setNext(page.next ?? null);
      setCount(page.count ?? null);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setLoading(false);
    }
  }, [api, graph, status, version]);

  useEffect(() => {
    if (open && !comparing) void load();
  }, [open, load, comparing]);

  useEffect(() => {
    if (!open) {
      setComparing(null);
      setPicked([]);
    }
  }, [open]);

  const more = async () => {
    if (!next) return;
    setLoading(true);
    try {
      const page = await api.nextPage<RunSummary>(next);
      setRuns((r) => [...r, ...(page.results ?? [])]);
      setNext(page.next ?? null);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setLoading(false);
    }
  };

  const togglePick = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p.slice(-1), id]));

  return (
    <Modal open={open} title={comparing ? "Compare runs" : `Runs of ${graph}`} onClose={onClose} wide>
      {comparing ? (
        <RunCompare api={api} graph={graph} ids={comparing} onBack={() => setComparing(null)} />
      ) : (
        <div className="runs-list">
          <div className="runs-filters">
            <label className="label" htmlFor="runs-status">
              Status
            </label>
            <select id="runs-status" className="input input-small" value={status} onChange={(e) => setStatus(e.target.value as RunStatus | "")}>
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
            <label className="label" htmlFor="runs-version">
              Version
            </label>
            <input id="runs-version" className="input input-small runs-version" inputMode="numeric" placeholder="any" value={version} onChange={(e) => setVersion(e.target.value.replace(/[^0-9]/g, ""))} />
            <span className="spacer" />
            {count !== null && <span className="muted small">{count} run{count === 1 ? "" : "s"}</span>}
            <button type="button" className="btn btn-small" onClick={() => void load()} disabled={loading}>
              Refresh
            </button>
            <button type="button" className="btn btn-small btn-primary" disabled={picked.length !== 2} onClick={() => setComparing([picked[0], picked[1]])} title="Tick two runs to compare them">
              Compare selected
            </button>
          </div>
          {error && (
            <p className="field-error" role="alert">
              {error}
            </p>
          )}
          <table className="runs-table">
            <thead>
              <tr>
                <th aria-label="Pick to compare" />
                <th>Started</th>
                <th>Version</th>
                <th>Environment</th>
                <th>Status</th>
                <th>Duration</th>
                <th>By</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} className={r.id === currentRunId ? "current" : undefined} data-run-id={r.id}>
                  <td>
                    <input type="checkbox" aria-label={`Pick run ${r.id.slice(0, 8)} to compare`} checked={picked.includes(r.id)} onChange={() => togglePick(r.id)} />
                  </td>
                  <td className="nowrap" title={r.created_at}>
                    {formatTime(r.created_at)}
                  </td>
                  <td>v{r.version}</td>
                  <td>{r.environment?.name}</td>
                  <td>
                    <span className={`run-status run-status-${r.status}`}>{r.status}</span>
                    {r.response?.status_code !== null && r.response?.status_code !== undefined && <span className="muted small"> {r.response.status_code}</span>}
                  </td>
                  <td className="nowrap">{formatMs(r.duration_ms)}</td>
                  <td>{r.created_by}</td>
                  <td>
                    <div className="runs-actions">
                      <button type="button" className="btn btn-small" onClick={() => onOpen(r)}>
                        Open
                      </button>
                      <button type="button" className="btn btn-small" onClick={() => onRunAgain(r)} title="A new run with the same version, request, environment and seed">
                        Run again
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {!loading && runs.length === 0 && !error && <p className="empty-note">No runs yet{status || version ? " with these filters" : ""}.</p>}
          {loading && <Spinner label="Loading runs" />}
          {next && !loading && (
            <button type="button" className="btn btn-small" onClick={() => void more()}>
              Load more
            </button>
          )}
        </div>
      )}
    </Modal>
  );
}

function RunCompare({ api, graph, ids, onBack }: { api: Api; graph: string; ids: [string, string]; onBack: () => void }) {
  const [runs, setRuns] = useState<[Run, Run] | null>(null);
  const [diff, setDiff] = useState<Diff | "loading" | "failed" | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      try {
        const [x, y] = await Promise.all([api.getRun(ids[0]), api.getRun(ids[1])]);
        // Older on the left.
        const pair: [Run, Run] = Date.parse(x.created_at) <= Date.parse(y.created_at) ? [x, y] : [y, x];
        if (cancelled) return;
        setRuns(pair);
        if (pair[0].version !== pair[1].version) {
          setDiff("loading");
          const d = await api.diff(graph, pair[0].version, pair[1].version).catch(() => "failed" as const);
          if (!cancelled) setDiff(d);
        }
      } catch (err) {
        if (!cancelled) setError(describeApiError(err));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [api, graph, ids]);

  const back = (
    <button type="button" className="btn btn-small" onClick={onBack}>
      ← Back to the list
    </button>
  );
  if (error)
    return (
      <div>
        {back}
        <p className="field-error" role="alert">
          {error}
        </p>
      </div>
    );
  if (!runs) return <Spinner label="Loading the runs" />;
  const [a, b] = runs;
  const rows = compareRuns(a, b);
  const same = sameResponse(a, b);

  const head = (r: Run, label: string) => (
    <div className="cmp-run-head">
      <div>
        <strong>{label}</strong> <span className="mono">{r.id.slice(0, 8)}</span>
      </div>
      <div>
        <span className={`run-status run-status-${r.status}`}>{r.status}</span> {r.response?.status_code ?? "—"} · v{r.version} · {r.environment?.name} · {formatMs(r.duration_ms)}
      </div>
      <div className="muted small">{formatTime(r.created_at)}</div>
      {r.error && <div className="text-error small">{r.error}</div>}
    </div>
  );

  return (
    <div className="run-compare">
      {back}
      <div className="cmp-grid">
        {head(a, "A")}
        {head(b, "B")}
      </div>
      <h4>Steps</h4>
      {(a.steps_truncated || b.steps_truncated) && (
        <p className="muted small cmp-truncated">
          Only the first {Math.max(a.steps.length, b.steps.length).toLocaleString("en")} steps of each run are compared (A has {a.steps_total.toLocaleString("en")}, B has {b.steps_total.toLocaleString("en")}).
        </p>
      )}
      <table className="cmp-table">
        <thead>
          <tr>
            <th>Step</th>
            <th>A</th>
            <th>B</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.position} className={row.outcomeDiffers || row.outputDiffers ? "differs" : undefined} data-call-id={row.callId}>
              <td className="mono">
                {row.node} › {row.stepName ?? `step ${row.stepIndex}`}
                {(row.outcomeDiffers || row.outputDiffers) && <div className="differs-tag">{row.outcomeDiffers ? "outcome differs" : "output differs"}</div>}
              </td>
              {[row.a, row.b].map((side, i) => (
                <td key={i}>
                  {side ? (
                    <>
                      <div>
                        <span className={`outcome outcome-${side.outcome}`}>{side.outcome}</span> {side.statusCode ?? ""} <span className="muted">{formatMs(side.durationMs)}</span>
                      </div>
                      {side.error && <div className="text-error small">{side.error}</div>}
                      {side.output !== null && <pre className="code-block cmp-output">{side.output}</pre>}
                    </>
                  ) : (
                    <span className="muted">did not run</span>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <h4>Final responses {same ? <span className="muted small">(identical)</span> : <span className="differs-tag">differ</span>}</h4>
      <div className="cmp-grid">
        <BodyBlock label={`A · ${a.response?.status_code ?? "—"}`} body={showValue(a.response?.body, a.response?.size, a.response?.truncated)} />
        <BodyBlock label={`B · ${b.response?.status_code ?? "—"}`} body={showValue(b.response?.body, b.response?.size, b.response?.truncated)} />
      </div>
      {a.version !== b.version && (
        <>
          <h4>
            Version v{a.version} → v{b.version}
          </h4>
          {diff === "loading" ? <Spinner label="Loading the diff" /> : diff === "failed" ? <p className="field-error">Could not load the diff.</p> : <DiffView diff={diff} />}
        </>
      )}
    </div>
  );
}
