/** The version history: open any version read-only, compare two, roll back. */
import { useCallback, useEffect, useState } from "react";
import type { Api, Deployment, Page, VersionSummary } from "../api";
import { liveText } from "../deploys/targetForm";
import { Spinner, errorText, formatTime } from "../common/ui";
import { SuiteChip } from "../suites/SuiteChip";
import { UpgradeReport } from "./UpgradeReport";

function results(page: Page<VersionSummary>): { items: VersionSummary[]; next: string | null } {
  return { items: page.results, next: page.next };
}

export function HistoryPanel({
  api,
  graph,
  base,
  viewing,
  refreshKey,
  readOnly,
  onView,
  onCompare,
  onRollback,
  deployments = [],
  onDeploy,
}: {
  api: Api;
  graph: string;
  base: number | null;
  viewing: number | null;
  refreshKey: number;
  readOnly: boolean;
  onView: (n: number) => void;
  onCompare: (from: number, to: number) => void;
  onRollback: (n: number) => void;
  /** The graph's deployments: each version shows where it is live (or was pushed for review). */
  deployments?: Deployment[];
  /** Opens the deploy dialog for a version (absent: read-only). */
  onDeploy?: (n: number) => void;
}) {
  const [versions, setVersions] = useState<VersionSummary[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [from, setFrom] = useState<number | "">("");
  const [to, setTo] = useState<number | "">("");

  const load = useCallback(async () => {
    setLoading(true);
    setError(null);
    try {
      const { items, next: n } = results(await api.listVersions(graph));
      const sorted = [...items].sort((a, b) => b.number - a.number);
      setVersions(sorted);
      setNext(n);
      if (sorted.length >= 2) {
        setTo((t) => (t === "" ? sorted[0].number : t));
        setFrom((f) => (f === "" ? sorted[1].number : f));
      }
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoading(false);
    }
  }, [api, graph]);

  useEffect(() => {
    void load();
  }, [load, refreshKey]);

  const more = async () => {
    if (!next) return;
    setLoading(true);
    try {
      const { items, next: n } = results(await api.nextPage<VersionSummary>(next));
      setVersions((v) => [...v, ...items].sort((a, b) => b.number - a.number));
      setNext(n);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoading(false);
    }
  };

  return (
    <div className="history-panel">
      <div className="compare-bar">
        <label className="label" htmlFor="cmp-from">
          Compare
        </label>
        <select id="cmp-from" className="input input-small" aria-label="Compare from version" value={from} onChange={(e) => setFrom(e.target.value ? Number(e.target.value) : "")}>
          <option value="">from…</option>
          {versions.map((v) => (
            <option key={v.number} value={v.number}>
              v{v.number}
            </option>
          ))}
        </select>
        <span aria-hidden="true">→</span>
        <select className="input input-small" aria-label="Compare to version" value={to} onChange={(e) => setTo(e.target.value ? Number(e.target.value) : "")}>
          <option value="">to…</option>
          {versions.map((v) => (
            <option key={v.number} value={v.number}>
              v{v.number}
            </option>
          ))}
        </select>
        <button type="button" className="btn btn-small" disabled={from === "" || to === "" || from === to} onClick={() => from !== "" && to !== "" && onCompare(from, to)}>
          Compare on canvas
        </button>
        <div className="spacer" />
        <button type="button" className="btn btn-ghost btn-small" onClick={() => void load()} aria-label="Reload versions" title="Reload versions">
          ↻
        </button>
      </div>
      {error && <div className="field-error">Could not load versions: {error}</div>}
      <ol className="version-list" aria-label="Versions">
        {versions.map((v) => (
          <li key={v.number} className={`version-row${v.number === viewing ? " viewing" : ""}${v.number === base ? " is-base" : ""}`}>
            <div className="version-main">
              <span className="version-number">v{v.number}</span>
              {v.number === base && <span className="badge badge-base" title="Your working copy is based on this version">base</span>}
              {v.valid === false && <span className="badge badge-error">invalid</span>}
              <span className="version-message">{v.message || <em className="muted">no message</em>}</span>
            </div>
            <div className="version-meta">
              <span>{v.author ?? "unknown"}</span>
              <span>{formatTime(v.created_at)}</span>
              <SuiteChip tests={v.tests} />
              {v.parent !== null && v.parent !== undefined && <span className="muted">from v{v.parent}</span>}
            </div>
            {deployments
              .filter((d) => d.version === v.number && (d.live || d.status === "review"))
              .map((d) => (
                <div key={d.id} className="version-deploy small">
                  <span className={`badge live-chip${d.drift ? " live-drift" : ""}`}>{d.live ? liveText(d) : `review branch ${d.branch} on ${d.target}`}</span>
                  {d.drift && <span className="muted"> changed in Git since</span>}
                </div>
              ))}
            <div className="version-actions">
              <button type="button" className="btn btn-tiny" aria-label={`View version ${v.number}`} onClick={() => onView(v.number)}>
                View
              </button>
              {!readOnly && (
                <button type="button" className="btn btn-tiny" aria-label={`Roll back to version ${v.number}`} onClick={() => onRollback(v.number)}>
                  Roll back
                </button>
              )}
              {onDeploy && v.valid !== false && (
                <button type="button" className="btn btn-tiny" aria-label={`Deploy version ${v.number}`} onClick={() => onDeploy(v.number)}>
                  Deploy
                </button>
              )}
            </div>
          </li>
        ))}
      </ol>
      {loading && (
        <div className="table-status">
          <Spinner /> Loading versions…
        </div>
      )}
      {next && !loading && (
        <button type="button" className="btn btn-small" onClick={() => void more()}>
          Older versions
        </button>
      )}
      <UpgradeReport api={api} graph={graph} versions={versions.map((v) => v.number)} viewing={viewing} />
    </div>
  );
}
