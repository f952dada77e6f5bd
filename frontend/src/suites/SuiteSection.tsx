/**
 * "Run the suite" in the Tests panel: a version (the one on screen by default) and an
 * environment, a progress bar whose passed / failed / error counts fill from the suite's events,
 * Cancel, and the results table; a failed case opens its run in the console with its failed
 * expectations on top (`FailureList`).
 */
import { diffSides, jsonText } from "./diffSides";
import { useEffect, useState } from "react";
import type { Environment } from "../api";
import { Spinner } from "../common/ui";
import { formatMs } from "../graph/format";
import type { BudgetVerdict } from "../generated/events";
import { budgetText, countsText, fraction, isTerminalSuite, resultsToShow, type CaseResult, type DiffEntry, type Failure } from "./suite";
import type { SuiteController } from "./useSuiteRun";
import { EnvironmentSelect, VersionSelect } from "./pickers";

const json = jsonText;

/** The legend of the marks below: "-" expected (red), "+" actual (green), as in diff tools. */
function DiffLegend() {
  return (
    <div className="diff-legend small">
      <span className="diff-expected">− expected</span> <span className="diff-actual">+ actual (what the run returned)</span>
    </div>
  );
}

function DiffLine({ entry }: { entry: DiffEntry }) {
  return (
    <li className={`diff-entry diff-${entry.op}`}>
      <code className="mono">{entry.path || "$"}</code>{" "}
      {entry.op === "missing" ? (
        <>
          missing: <del className="diff-expected">− {json(entry.expected)}</del>
        </>
      ) : entry.op === "unexpected" ? (
        <>
          unexpected: <ins className="diff-actual">+ {json(entry.actual)}</ins>
        </>
      ) : (
        <>
          <del className="diff-expected">− {json(entry.expected)}</del> <ins className="diff-actual">+ {json(entry.actual)}</ins>
        </>
      )}
    </li>
  );
}

/** A JSON diff as lines: the path, the expected (before) side struck, the actual (after) side. */
export function DiffLines({ label, entries }: { label: string; entries: DiffEntry[] }) {
  return (
    <>
    <DiffLegend />
    <ul className="diff-list mono small" aria-label={label}>
      {entries.map((d, j) => (
        <DiffLine key={j} entry={d} />
      ))}
    </ul>
    </>
  );
}

/** The failed expectations of a case: message, expected against actual, and the JSON diff. */
export function FailureList({ failures, error }: { failures: Failure[]; error?: string | null }) {
  return (
    <ol className="failure-list">
      {error && <li className="failure text-error">{error}</li>}
      {failures.map((f, i) => (
        <li key={i} className="failure">
          <div className="failure-message">
            <span className="failure-kind">
              Expectation {f.index + 1} ({f.kind})
            </span>{" "}
            {f.message}
          </div>
          {(f.expected !== undefined || f.actual !== undefined) && (
            <div className="failure-sides" role="group" aria-label={`Expected against actual, expectation ${f.index + 1}`}>
              <DiffLegend />
              <pre className="code-block diff-unified">
                {diffSides(f.expected, f.actual).map((line, k) =>
                  line.sign === "-" ? (
                    <del key={k} className="diff-expected">
                      {`- ${line.text}\n`}
                    </del>
                  ) : line.sign === "+" ? (
                    <ins key={k} className="diff-actual">
                      {`+ ${line.text}\n`}
                    </ins>
                  ) : (
                    <span key={k}>{`  ${line.text}\n`}</span>
                  ),
                )}
              </pre>
            </div>
          )}
          {f.diff && f.diff.length > 0 && <DiffLines label={`Differences of expectation ${f.index + 1}`} entries={f.diff} />}
        </li>
      ))}
    </ol>
  );
}

/** The graph's latency budgets judged on the suite run's cases: one line per budget. */
function BudgetVerdictList({ verdict }: { verdict: BudgetVerdict }) {
  const heading = verdict.passed === false ? "Latency budgets: exceeded" : verdict.passed ? "Latency budgets: held" : "Latency budgets: not measured";
  return (
    <section className="suite-budgets" aria-label="Latency budgets">
      <h4 className={`suite-budgets-title small ${verdict.passed === false ? "text-error" : ""}`}>{heading}</h4>
      <ul className="suite-budget-list small">
        {verdict.checks.map((c) => (
          <li key={c.target} className={c.passed === false ? "text-error" : c.passed ? "suite-budget-ok" : "muted"} data-budget={c.target} data-passed={String(c.passed)}>
            <span aria-hidden="true">{c.passed === false ? "✕ " : c.passed ? "✓ " : "– "}</span>
            <span className="visually-hidden">{c.passed === false ? "Exceeded: " : c.passed ? "Held: " : "Not measured: "}</span>
            {budgetText(c)}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function SuiteSection({
  suite,
  shownVersion,
  versions,
  environments,
  defaultEnvironment,
  hasCases,
  onOpenRun,
}: {
  suite: SuiteController;
  shownVersion: number | null;
  versions: number[];
  environments: Environment[];
  defaultEnvironment: string;
  hasCases: boolean;
  onOpenRun: (result: CaseResult) => void;
}) {
  const [version, setVersion] = useState<number | null>(shownVersion);
  const [environment, setEnvironment] = useState(defaultEnvironment);
  const p = suite.progress;
  const running = !!p && !isTerminalSuite(p.status);

  useEffect(() => setVersion(shownVersion), [shownVersion]);
  const { showLatest } = suite;
  useEffect(() => {
    if (version !== null) void showLatest(version);
  }, [showLatest, version]);

  const choices = version !== null && !versions.includes(version) ? [version, ...versions] : versions;

  return (
    <section className="suite-section" aria-label="Suite">
      <div className="suite-controls">
        <VersionSelect id="suite-version" label="Version" value={version ?? ""} onChange={(n) => n !== "" && setVersion(n)} versions={choices} onScreen={shownVersion} />
        <EnvironmentSelect id="suite-environment" value={environment} onChange={setEnvironment} environments={environments} />
        <button type="button" className="btn btn-primary btn-small" onClick={() => version !== null && void suite.start(version, environment || null)} disabled={version === null || suite.starting || running || !hasCases} aria-busy={suite.starting || undefined} title={hasCases ? "Run every case on this version" : "Add a test case first"}>
          {suite.starting && <Spinner decorative />}
          Run suite
        </button>
        {running && (
          <button type="button" className="btn btn-danger btn-small" onClick={() => void suite.cancel()} disabled={suite.cancelling}>
            Cancel suite
          </button>
        )}
      </div>
      {suite.error && (
        <p className="field-error" role="alert">
          {suite.error}
        </p>
      )}
      {p && (
        <div className={`suite-progress suite-${p.status}`}>
          <div className="suite-head">
            <span className={`suite-status suite-status-${p.status}`} role="status" aria-live="polite">
              {p.status}
            </span>
            <span className="small">
              v{p.version}
              {p.environment ? ` · ${p.environment}` : ""}
              {p.durationMs !== null && isTerminalSuite(p.status) ? ` · ${formatMs(p.durationMs)}` : ""}
              {suite.polling ? " · checking every second" : ""}
            </span>
          </div>
          <div className="suite-bar" role="progressbar" aria-label="Suite progress" aria-valuemin={0} aria-valuemax={p.counts.total} aria-valuenow={p.counts.finished} aria-valuetext={countsText(p.counts)}>
            <div className="suite-bar-passed" style={{ width: `${p.counts.total ? (100 * p.counts.passed) / p.counts.total : 0}%` }} />
            <div className="suite-bar-failed" style={{ width: `${p.counts.total ? (100 * p.counts.failed) / p.counts.total : 0}%` }} />
            <div className="suite-bar-error" style={{ width: `${p.counts.total ? (100 * p.counts.error) / p.counts.total : 0}%` }} />
          </div>
          <div className="suite-counts small" data-finished={p.counts.finished} data-total={p.counts.total}>
            {countsText(p.counts)}
            {running && <span className="muted"> · {Math.round(100 * fraction(p.counts))}%</span>}
          </div>
          {p.results.length > 0 && (
            <table className="suite-results small">
              <caption className="visually-hidden">Suite results</caption>
              <thead>
                <tr>
                  <th scope="col">Case</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Time</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {resultsToShow(p.results).map((r) => (
                  <tr key={r.case} className={`outcome-${r.outcome}`} data-case={r.case}>
                    <th scope="row">{r.name}</th>
                    <td>
                      <span className={`outcome outcome-chip-${r.outcome}`}>{r.outcome === "running" ? (
                          <>
                            <Spinner decorative /> running
                          </>
                        ) : (
                          r.outcome
                        )}</span>
                      {r.failures.length > 0 && <span className="muted"> ({r.failures.length} failed)</span>}
                    </td>
                    <td>{r.duration_ms !== null ? formatMs(r.duration_ms) : ""}</td>
                    <td>
                      {r.run && (r.outcome === "failed" || r.outcome === "error" || r.outcome === "passed") && (
                        <button type="button" className="btn btn-tiny" onClick={() => onOpenRun(r)} aria-label={`Open the run of ${r.name}`}>
                          Open run
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {p.budgets && <BudgetVerdictList verdict={p.budgets} />}
        </div>
      )}
    </section>
  );
}
