/**
 * "Compare versions" in the Tests panel: two versions (or the last green one against the latest),
 * both suites run, then per case and per step what changed (status, outcome, route, latency,
 * request and response diffs), with the semantic diff of the two manifests beside it. Selecting a
 * case shows version B on the canvas with that case's changed steps marked.
 */
import { useEffect, useRef, useState } from "react";
import { type Api, type Environment } from "../api";
import { Spinner, describeApiError } from "../common/ui";
import { KSERVE_RELEASES } from "../environments/form";
import { DiffView } from "../panels/DiffView";
import { formatMs } from "../graph/format";
import { casesToShow, type CaseComparison, type CompareResult, type StepComparison } from "./compare";
import { DiffLines } from "./SuiteSection";
import { EnvironmentSelect, VersionSelect } from "./pickers";
import { countsText, type SuiteRun } from "./suite";

const POLL_MS = 1000;

function ms(v: number | null | undefined): string {
  return v === null || v === undefined ? "—" : formatMs(v);
}

function StepRow({ s }: { s: StepComparison }) {
  const changed = s.changed.length > 0;
  return (
    <li className={`cmp-step${changed ? " changed" : ""}`}>
      <div className="cmp-step-head">
        <code className="mono">{s.label}</code>
        {changed ? <span className="outcome outcome-chip-failed">{s.changed.join(", ")}</span> : <span className="muted small">same</span>}
      </div>
      <div className="small">
        status {s.a?.status ?? "—"} → {s.b?.status ?? "—"} · {s.a?.outcome ?? "absent"} → {s.b?.outcome ?? "absent"} · {ms(s.a?.duration_ms)} → {ms(s.b?.duration_ms)}
      </div>
      {s.request_diff.length > 0 && <DiffLines label={`Request of ${s.label}`} entries={s.request_diff} />}
      {s.response_diff.length > 0 && <DiffLines label={`Response of ${s.label}`} entries={s.response_diff} />}
    </li>
  );
}

function CaseDetail({ c }: { c: CaseComparison }) {
  const cmp = c.comparison;
  if (!cmp) return <p className="small muted">No step-by-step comparison: one of the runs has no response.</p>;
  return (
    <div className="cmp-case-detail">
      <p className="small">
        Final status {cmp.status[0] ?? "—"} → {cmp.status[1] ?? "—"} · {ms(cmp.duration_ms[0])} → {ms(cmp.duration_ms[1])}
      </p>
      {cmp.routes.length > 0 && (
        <ul className="small cmp-routes">
          {cmp.routes.map((r) => (
            <li key={r.node}>
              Node <code className="mono">{r.node}</code> routed to {r.a.map(String).join(", ") || "nothing"} → {r.b.map(String).join(", ") || "nothing"}
            </li>
          ))}
        </ul>
      )}
      {cmp.body_diff.length > 0 && <DiffLines label="Final body" entries={cmp.body_diff} />}
      <ol className="cmp-steps" aria-label={`Steps of ${c.name}`}>
        {cmp.steps.map((s) => (
          <StepRow key={s.label} s={s} />
        ))}
      </ol>
    </div>
  );
}

/** " on KServe v0.14.1" for a side run as a chosen release; nothing for its environment's. */
function onRelease(run: { kserve_version?: string }): string {
  return run.kserve_version ? ` on KServe ${run.kserve_version}` : "";
}

function ReleaseSelect({ id, label, value, onChange }: { id: string; label: string; value: string; onChange: (v: string) => void }) {
  return (
    <span className="field-inline">
      <label htmlFor={id} className="label">
        {label}
      </label>
      <select id={id} className="input input-small" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">the environment's</option>
        {KSERVE_RELEASES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.value}
          </option>
        ))}
      </select>
    </span>
  );
}

export function CompareSection({
  api,
  graph,
  versions,
  environments,
  hasCases,
  onSelectCase,
}: {
  api: Api;
  graph: string;
  versions: number[];
  environments: Environment[];
  hasCases: boolean;
  /** A case chosen (null: none): show version `b` on the canvas with its changed steps. */
  onSelectCase: (c: CaseComparison | null, b: number) => void;
}) {
  const latest = versions.length ? Math.max(...versions) : null;
  const [a, setA] = useState<number | "">("");
  const [b, setB] = useState<number | "">("");
  const [environment, setEnvironment] = useState("");
  // The KServe release each side runs as ("": its environment's): the release as the changed variable.
  const [releaseA, setReleaseA] = useState("");
  const [releaseB, setReleaseB] = useState("");
  const differs = a !== "" && b !== "" && (a !== b || releaseA !== releaseB);
  const [pending, setPending] = useState<{ a: SuiteRun; b: SuiteRun } | null>(null);
  const [starting, setStarting] = useState(false);
  const [result, setResult] = useState<CompareResult | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const poll = async (ids: { a: string; b: string }) => {
    try {
      const answer = await api.getCompare(ids.a, ids.b);
      if (answer.pending) {
        setPending({ a: answer.a, b: answer.b });
        timer.current = setTimeout(() => void poll(ids), POLL_MS);
        return;
      }
      setPending(null);
      setResult(answer);
    } catch (err) {
      setPending(null);
      setError(describeApiError(err));
    }
  };

  const start = async () => {
    if (a === "" || b === "") return;
    if (timer.current) clearTimeout(timer.current);
    setStarting(true);
    setError(null);
    setNote(null);
    setResult(null);
    setSelected(null);
    onSelectCase(null, b);
    try {
      const ids = await api.startCompare(graph, {
        a,
        b,
        ...(environment ? { environment } : {}),
        ...(releaseA ? { kserve_version_a: releaseA } : {}),
        ...(releaseB ? { kserve_version_b: releaseB } : {}),
      });
      void poll(ids);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setStarting(false);
    }
  };

  const lastGreen = async () => {
    setNote(null);
    try {
      const g = await api.getGraph(graph);
      const green = g.last_passing_version ?? null;
      const newest = g.latest_version?.number ?? latest;
      if (green === null) setNote("No version has passed its suite yet.");
      else if (newest === null || green === newest) setNote(`The latest version (v${green}) is the last green one.`);
      else {
        setA(green);
        setB(newest);
      }
    } catch (err) {
      setError(describeApiError(err));
    }
  };

  const choose = (c: CaseComparison) => {
    const next = selected === c.case ? null : c.case;
    setSelected(next);
    if (result) onSelectCase(next === null ? null : c, result.b.version);
  };

  const changedCount = result?.cases.filter((c) => c.changed).length ?? 0;

  return (
    <section className="compare-section" aria-label="Compare versions">
      <h3 className="case-editor-title">Compare versions</h3>
      <div className="suite-controls">
        <VersionSelect id="cmp-a" label="Version A (before)" value={a} onChange={setA} versions={versions} placeholder="v…" />
        <VersionSelect id="cmp-b" label="Version B (after)" value={b} onChange={setB} versions={versions} placeholder="v…" />
        <EnvironmentSelect id="cmp-environment" value={environment} onChange={setEnvironment} environments={environments} />
        <ReleaseSelect id="cmp-release-a" label="KServe release A" value={releaseA} onChange={setReleaseA} />
        <ReleaseSelect id="cmp-release-b" label="KServe release B" value={releaseB} onChange={setReleaseB} />
        <button type="button" className="btn btn-small" onClick={() => void lastGreen()}>
          Last green vs latest
        </button>
        <button type="button" className="btn btn-primary btn-small" onClick={() => void start()} disabled={!differs || starting || pending !== null || !hasCases} aria-busy={starting || undefined}>
          {(starting || pending) && <Spinner decorative />}
          Run both and compare
        </button>
      </div>
      {note && <p className="small muted">{note}</p>}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {pending && (
        <p className="small" role="status">
          Running both suites: v{pending.a.version}
          {onRelease(pending.a)} {countsText(pending.a.counts)}; v{pending.b.version}
          {onRelease(pending.b)} {countsText(pending.b.counts)}
        </p>
      )}
      {result && (
        <div className="compare-result">
          <p className="small" role="status">
            v{result.a.version}
            {onRelease(result.a)} ({result.a.status}) → v{result.b.version}
            {onRelease(result.b)} ({result.b.status}): {changedCount} of {result.cases.length} case{result.cases.length === 1 ? "" : "s"} changed.
          </p>
          <ul className="cmp-cases" aria-label="Cases compared">
            {casesToShow(result.cases).map((c) => (
              <li key={c.case} className={`cmp-case${c.changed ? " changed" : ""}${selected === c.case ? " selected" : ""}`}>
                <button type="button" className="cmp-case-head" aria-expanded={selected === c.case} onClick={() => choose(c)}>
                  <span className="case-name">{c.name}</span>
                  <span className={`outcome outcome-chip-${c.a?.outcome ?? "none"}`}>{c.a?.outcome ?? "absent"}</span>→<span className={`outcome outcome-chip-${c.b?.outcome ?? "none"}`}>{c.b?.outcome ?? "absent"}</span>
                  <span className="small">{c.changed ? "changed" : "same"}</span>
                </button>
                {selected === c.case && <CaseDetail c={c} />}
              </li>
            ))}
          </ul>
          <div className="cmp-manifest">
            <h4>
              Manifest v{result.a.version} → v{result.b.version}
            </h4>
            <DiffView diff={result.manifest_diff} />
          </div>
        </div>
      )}
    </section>
  );
}
