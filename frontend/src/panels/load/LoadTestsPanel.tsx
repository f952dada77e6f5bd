/**
 * The Load tab (load tests): start a load test of a version (N requests, C at a time, in an environment,
 * with a JSON payload or a saved test case's request, and headers: secret ones stored redacted as a
 * run's are), follow its progress live (the load test's
 * Server-Sent Events; a stream that cannot be read falls back to reading it every second), cancel
 * it, read its results (throughput, errors, p50/p95/p99 and a latency histogram for the graph and
 * each step, the budgets), and compare two of the graph's load tests side by side.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Api, Environment, LoadTest, LoadTestSummary, TestCaseRow } from "../../api";
import { describeApiError, Spinner } from "../../common/ui";
import { LOAD_TEST_EVENT_TYPES } from "../../generated/events";
import { useEventLog } from "../../common/useEventLog";
import { headersObject, loadLastPayload, safeStorage } from "../run/samples";
import { LoadHeaders } from "./LoadHeaders";
import { fractionDone, isTerminalLoad, liveOf, ms, percent, reduceLoadEvent, seriesRows, summaryOf, type BudgetCheckRow, type Comparison, type CompareRow, type HistogramBin, type LiveLoad } from "./loadTest";
import "./load.css";

const POLL_MS = 1000;

interface Props {
  api: Api;
  graph: string;
  version: number | null;
  environments: Environment[];
  readOnly?: boolean;
}

function Histogram({ bins, label }: { bins: HistogramBin[]; label: string }) {
  const most = Math.max(1, ...bins.map((b) => b.count));
  return (
    <div className="load-histogram" role="img" aria-label={`${label}: ${bins.map((b) => `${ms(b.from_ms)}–${ms(b.to_ms)} ms: ${b.count}`).join("; ")}`}>
      {bins.map((b, i) => (
        <div key={i} className="load-histogram-bar" style={{ height: `${Math.max(2, (100 * b.count) / most)}%` }} title={`${ms(b.from_ms)}–${ms(b.to_ms)} ms: ${b.count}`} />
      ))}
    </div>
  );
}

function Results({ load }: { load: LoadTest }) {
  const summary = summaryOf(load.summary);
  if (!summary) return null;
  const budgets = (load.budgets ?? {}) as { checks?: BudgetCheckRow[] };
  return (
    <div className="load-results">
      <p className="small" data-testid="load-totals">
        {summary.completed} requests in {summary.elapsed_s.toFixed(2)} s · <strong>{(summary.throughput_rps ?? 0).toFixed(1)} req/s</strong> · error rate {percent(summary.error_rate)}
        {Object.keys(summary.graph.statuses).length > 0 && <> · statuses {Object.entries(summary.graph.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")}</>}
      </p>
      <table className="load-table small">
        <caption className="visually-hidden">Latency by step</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Calls</th>
            <th scope="col">p50 ms</th>
            <th scope="col">p95 ms</th>
            <th scope="col">p99 ms</th>
            <th scope="col">Errors</th>
            <th scope="col">Histogram</th>
          </tr>
        </thead>
        <tbody>
          {seriesRows(summary).map(({ name, series }) => (
            <tr key={name} data-step={name}>
              <th scope="row" className="mono">
                {name}
              </th>
              <td>{series.count}</td>
              <td>{ms(series.p50_ms)}</td>
              <td>{ms(series.p95_ms)}</td>
              <td>{ms(series.p99_ms)}</td>
              <td>{series.errors ? `${series.errors} (${percent(series.error_rate)})` : "0"}</td>
              <td>
                <Histogram bins={series.histogram} label={`Latency histogram of ${name}`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {budgets.checks && budgets.checks.length > 0 && (
        <ul className="load-budgets small" aria-label="Latency budgets">
          {budgets.checks.map((c) => (
            <li key={c.target} className={c.passed === false ? "text-error" : c.passed ? "load-ok" : "muted"}>
              {c.passed === false ? "✕" : c.passed ? "✓" : "–"} p95 of <span className="mono">{c.target}</span>: {ms(c.measured_ms)} ms of a {ms(c.budget_ms)} ms budget
              {c.passed === null ? " (not measured)" : ""}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function CompareTable({ comparison, a, b }: { comparison: Comparison; a: LoadTestSummary; b: LoadTestSummary }) {
  const rows: CompareRow[] = [comparison.graph, ...comparison.steps];
  return (
    <div className="load-compare">
      <p className="small">
        A: v{a.version} · {a.environment} · B: v{b.version} · {b.environment}.{" "}
        {comparison.slower_steps.length ? (
          <strong className="text-error">Slower in B: {comparison.slower_steps.join(", ")}</strong>
        ) : (
          "No step got slower."
        )}
      </p>
      <table className="load-table small">
        <caption className="visually-hidden">p95 latency of load test A against B</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">A p95 ms</th>
            <th scope="col">B p95 ms</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.name} className={r.slower ? "load-slower" : r.faster ? "load-faster" : undefined} data-step={r.name}>
              <th scope="row" className="mono">
                {r.name === "graph" ? "whole graph" : r.name}
              </th>
              <td>{ms(r.a?.p95_ms)}</td>
              <td>{ms(r.b?.p95_ms)}</td>
              <td>
                {r.p95_ms_delta === null ? "–" : `${r.p95_ms_delta > 0 ? "+" : ""}${ms(r.p95_ms_delta)} ms`}
                {r.p95_ms_ratio !== null && ` (×${r.p95_ms_ratio.toFixed(2)})`}
                {r.slower && <span className="text-error"> slower</span>}
                {r.faster && <span className="load-ok"> faster</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A load test's live progress (or how it ended), and its results once it has. */
function LiveLoadView({ live, shown }: { live: LiveLoad; shown: LoadTest | null }) {
  return (
    <section aria-label="Load test" className={`load-progress load-${live.status}`}>
      <div className="load-head">
        <span className={`load-status load-status-${live.status}`} role="status" aria-live="polite" data-testid="load-status">
          {live.status}
        </span>
        <span className="small">
          {shown ? `v${shown.version} · ${shown.environment} · ${shown.concurrency} at a time` : ""}
          {live.budgetPassed === false ? " · budget exceeded" : live.budgetPassed ? " · budgets held" : ""}
        </span>
      </div>
      <progress className="load-bar" max={live.progress.requests} value={live.progress.completed} aria-label="Load test progress" aria-valuetext={`${live.progress.completed} of ${live.progress.requests} requests`} />
      <div className="small" data-testid="load-progress" data-completed={live.progress.completed} data-requests={live.progress.requests}>
        {live.progress.completed} of {live.progress.requests} requests ({Math.round(100 * fractionDone(live.progress))}%)
        {live.progress.errors ? ` · ${live.progress.errors} errors` : ""}
        {live.progress.throughput_rps !== null ? ` · ${live.progress.throughput_rps.toFixed(1)} req/s` : ""}
        {live.progress.p95_ms !== null ? ` · p50 ${ms(live.progress.p50_ms)} ms · p95 ${ms(live.progress.p95_ms)} ms` : ""}
      </div>
      {live.error && <p className="text-error small">{live.error}</p>}
      {shown && isTerminalLoad(shown.status) && <Results load={shown} />}
    </section>
  );
}

type Pick = { a: string; b: string };
type Compared = { comparison: Comparison; a: LoadTestSummary; b: LoadTestSummary };

/** The graph's earlier load tests: show one, pick two (A and B) of the finished ones, compare them. */
function LoadHistory({ history, pick, onPick, onShow, onCompare, compared }: { history: LoadTestSummary[]; pick: Pick; onPick: (update: (p: Pick) => Pick) => void; onShow: (id: string) => void; onCompare: () => void; compared: Compared | null }) {
  const finished = history.filter((h) => isTerminalLoad(h.status) && (h.completed ?? 0) > 0);
  return (
    <section aria-label="Load test history" className="load-history">
      <h4>Earlier load tests</h4>
      <table className="load-table small">
        <caption className="visually-hidden">The graph's load tests</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Version</th>
            <th scope="col">Status</th>
            <th scope="col">A</th>
            <th scope="col">B</th>
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr key={h.id}>
              <td>
                <button type="button" className="link-button" onClick={() => onShow(h.id)}>
                  {new Date(h.created_at).toLocaleTimeString()}
                </button>
              </td>
              <td>
                v{h.version} · {h.requests}×{h.concurrency}
              </td>
              <td>{h.status}</td>
              <td>
                <input type="radio" name="load-a" aria-label={`Compare: A is the load test of v${h.version} at ${new Date(h.created_at).toLocaleTimeString()}`} disabled={!finished.includes(h)} checked={pick.a === h.id} onChange={() => onPick((p) => ({ ...p, a: h.id }))} />
              </td>
              <td>
                <input type="radio" name="load-b" aria-label={`Compare: B is the load test of v${h.version} at ${new Date(h.created_at).toLocaleTimeString()}`} disabled={!finished.includes(h)} checked={pick.b === h.id} onChange={() => onPick((p) => ({ ...p, b: h.id }))} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" className="btn btn-small" onClick={onCompare} disabled={!pick.a || !pick.b || pick.a === pick.b}>
        Compare A and B
      </button>
      {compared && <CompareTable {...compared} />}
    </section>
  );
}

/** The `headers` field of a load test's start, when any row is named. */
function withHeaders(rows: [string, string][]): { headers?: Record<string, string> } {
  const headers = headersObject(rows);
  return Object.keys(headers).length ? { headers } : {};
}

export function LoadTestsPanel({ api, graph, version, environments, readOnly }: Props) {
  const [requests, setRequests] = useState(1000);
  const [concurrency, setConcurrency] = useState(16);
  const [environment, setEnvironment] = useState("");
  const [caseId, setCaseId] = useState<number | "">("");
  // The last payload the Run tab sent for this graph, if any: what the user was trying.
  const [payload, setPayload] = useState(() => loadLastPayload(safeStorage("local"), graph) ?? "{}");
  const [headers, setHeaders] = useState<[string, string][]>([]);
  const [cases, setCases] = useState<TestCaseRow[]>([]);
  const [history, setHistory] = useState<LoadTestSummary[]>([]);
  const [shown, setShown] = useState<LoadTest | null>(null);
  const [live, setLive] = useState<LiveLoad | null>(null);
  const [busy, setBusy] = useState<"start" | "cancel" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pick, setPick] = useState<Pick>({ a: "", b: "" });
  const [compared, setCompared] = useState<Compared | null>(null);
  const stream = useRef<{ id: string | null; timer: ReturnType<typeof setTimeout> | null; state: LiveLoad | null }>({ id: null, timer: null, state: null });
  const log = useEventLog();

  const refreshHistory = useCallback(() => {
    api.listLoadTests(graph).then(
      (page) => setHistory(page.results),
      (err: unknown) => setError(describeApiError(err)),
    );
  }, [api, graph]);

  const stop = useCallback(() => {
    log.close();
    const s = stream.current;
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
  }, [log]);

  /** The stored load test is the truth at the end (its summary); read again until it has ended. */
  const settle = useCallback(
    async (id: string) => {
      try {
        const load = await api.getLoadTest(id);
        if (stream.current.id !== id) return;
        setShown(load);
        if (isTerminalLoad(load.status)) {
          const done = { ...liveOf(load), lastSeq: stream.current.state?.lastSeq ?? 0 };
          stream.current.state = done;
          setLive(done);
          refreshHistory();
        } else stream.current.timer = setTimeout(() => void settle(id), POLL_MS);
      } catch (err) {
        if (stream.current.id === id) setError(describeApiError(err));
      }
    },
    [api, refreshHistory],
  );

  const follow = useCallback(
    (load: LoadTest) => {
      stop();
      const s = stream.current;
      s.id = load.id;
      s.state = liveOf(load);
      setShown(load);
      setLive(s.state);
      if (isTerminalLoad(load.status)) return;
      log.follow({
        connect: (after) => api.loadTestEvents(load.id, after),
        types: LOAD_TEST_EVENT_TYPES,
        finalType: "load.finished",
        onEvent: (event) => {
          if (!s.state) return;
          const next = reduceLoadEvent(s.state, { seq: event.seq, type: event.type, data: event.data });
          if (next === s.state) return;
          s.state = next;
          setLive(next);
          if (event.type === "load.finished") void settle(load.id); // the stream is closed by now
        },
        onFailed: () => {
          stop();
          void settle(load.id);
        },
      });
    },
    [api, log, settle, stop],
  );

  useEffect(() => stop, [stop]);

  // On opening: the graph's cases and load tests; the newest one is shown (and followed if it runs).
  useEffect(() => {
    let gone = false;
    api.listTests(graph).then(
      (rows) => !gone && setCases(rows),
      () => undefined,
    );
    api.listLoadTests(graph).then(
      (page) => {
        if (gone) return;
        setHistory(page.results);
        const newest = page.results[0];
        if (newest && stream.current.id === null) {
          api.getLoadTest(newest.id).then(
            (load) => !gone && follow(load),
            () => undefined,
          );
        }
      },
      (err: unknown) => !gone && setError(describeApiError(err)),
    );
    return () => {
      gone = true;
    };
  }, [api, graph, follow]);

  const start = async () => {
    setError(null);
    let body: unknown;
    if (caseId === "") {
      try {
        body = JSON.parse(payload);
      } catch {
        setError("The payload is not valid JSON.");
        return;
      }
    }
    setBusy("start");
    try {
      const load = await api.startLoadTest(graph, {
        ...(version !== null ? { version } : {}),
        requests,
        concurrency,
        ...(environment ? { environment } : {}),
        ...(caseId !== "" ? { test_case: caseId } : { payload: body }),
        ...withHeaders(headers),
      });
      follow(load);
      refreshHistory();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const cancel = async () => {
    const id = stream.current.id;
    if (!id) return;
    setBusy("cancel");
    try {
      await api.cancelLoadTest(id);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const compare = async () => {
    setError(null);
    try {
      const result = await api.compareLoadTests(pick.a, pick.b);
      setCompared({ comparison: result.comparison as Comparison, a: result.a, b: result.b });
    } catch (err) {
      setError(describeApiError(err));
    }
  };

  const running = !!live && !isTerminalLoad(live.status);

  return (
    <div className="load-panel">
      <section aria-label="Start a load test" className="load-form">
        <div className="grid-2">
          <div className="field">
            <label htmlFor="load-requests">Requests</label>
            <input id="load-requests" className="input input-small" type="number" min={1} value={requests} onChange={(e) => setRequests(Number(e.target.value))} />
          </div>
          <div className="field">
            <label htmlFor="load-concurrency">Concurrency</label>
            <input id="load-concurrency" className="input input-small" type="number" min={1} value={concurrency} onChange={(e) => setConcurrency(Number(e.target.value))} />
          </div>
          <div className="field">
            <label htmlFor="load-environment">Environment</label>
            <select id="load-environment" className="input input-small" value={environment} onChange={(e) => setEnvironment(e.target.value)}>
              <option value="">local (the default)</option>
              {environments.map((env) => (
                <option key={env.id} value={env.name}>
                  {env.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="load-case">Request</label>
            <select id="load-case" className="input input-small" value={caseId} onChange={(e) => setCaseId(e.target.value ? Number(e.target.value) : "")}>
              <option value="">the payload below</option>
              {cases.map((c) => (
                <option key={c.id} value={c.id}>
                  test case: {c.name}
                </option>
              ))}
            </select>
          </div>
        </div>
        {caseId === "" && (
          <div className="field">
            <label htmlFor="load-payload">Payload (JSON)</label>
            <textarea id="load-payload" className="input mono small" rows={3} value={payload} onChange={(e) => setPayload(e.target.value)} />
          </div>
        )}
        <LoadHeaders rows={headers} onChange={setHeaders} />
        <div className="load-actions">
          <button type="button" className="btn btn-primary btn-small" onClick={() => void start()} disabled={readOnly || busy !== null || running} aria-busy={busy === "start" || undefined}>
            {busy === "start" && <Spinner decorative />}
            Start load test{version !== null ? ` of v${version}` : ""}
          </button>
          {running && (
            <button type="button" className="btn btn-danger btn-small" onClick={() => void cancel()} disabled={busy !== null}>
              Cancel load test
            </button>
          )}
        </div>
      </section>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {live && <LiveLoadView live={live} shown={shown} />}
      {history.length > 0 && <LoadHistory history={history} pick={pick} onPick={setPick} onShow={(id) => void api.getLoadTest(id).then(follow, (err: unknown) => setError(describeApiError(err)))} onCompare={() => void compare()} compared={compared} />}
    </div>
  );
}
