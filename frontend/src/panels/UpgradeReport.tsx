/**
 * The upgrade report in the History tab: what moving the cluster from one KServe release to another
 * changes for a version, as the release rules know it (each change with the release where it
 * happened, and what either release does), plus what validation says on either release. What the
 * rules do not tell, the graph's tests do: the Tests panel's comparison runs a version under two
 * releases.
 */
import { useState } from "react";
import type { Api, UpgradeReport as Report } from "../api";
import { Spinner, describeApiError } from "../common/ui";
import { KSERVE_RELEASES } from "../environments/form";

export function UpgradeReport({ api, graph, versions, viewing }: { api: Api; graph: string; versions: number[]; viewing: number | null }) {
  const [version, setVersion] = useState<number | "">("");
  const [from, setFrom] = useState("v0.14.1");
  const [to, setTo] = useState("master");
  const [report, setReport] = useState<Report | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const chosen = version !== "" ? version : (viewing ?? (versions.length ? Math.max(...versions) : null));

  const load = async () => {
    if (chosen === null) return;
    setLoading(true);
    setError(null);
    try {
      setReport(await api.upgradeReport(graph, chosen, from, to));
    } catch (err) {
      setReport(null);
      setError(describeApiError(err));
    } finally {
      setLoading(false);
    }
  };

  return (
    <section className="upgrade-report" aria-labelledby="upgrade-title">
      <h3 id="upgrade-title" className="case-editor-title">
        KServe upgrade report
      </h3>
      <div className="compare-bar">
        <label className="label" htmlFor="upgrade-version">
          Version
        </label>
        <select id="upgrade-version" className="input input-small" value={version} onChange={(e) => setVersion(e.target.value ? Number(e.target.value) : "")}>
          <option value="">{chosen !== null ? `v${chosen} (shown)` : "…"}</option>
          {versions.map((n) => (
            <option key={n} value={n}>
              v{n}
            </option>
          ))}
        </select>
        <label className="label" htmlFor="upgrade-from">
          from
        </label>
        <select id="upgrade-from" className="input input-small" aria-label="Upgrade from KServe release" value={from} onChange={(e) => setFrom(e.target.value)}>
          {KSERVE_RELEASES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.value}
            </option>
          ))}
        </select>
        <label className="label" htmlFor="upgrade-to">
          to
        </label>
        <select id="upgrade-to" className="input input-small" aria-label="Upgrade to KServe release" value={to} onChange={(e) => setTo(e.target.value)}>
          {KSERVE_RELEASES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.value}
            </option>
          ))}
        </select>
        <button type="button" className="btn btn-small" disabled={chosen === null || loading} aria-busy={loading || undefined} onClick={() => void load()}>
          {loading && <Spinner decorative />}
          Show upgrade report
        </button>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {report && (
        <div className="upgrade-result" role="status">
          <p className="small">
            v{report.version} on KServe {report.from.label} → {report.to.label}:{" "}
            {report.same_router ? "the same router, nothing changes." : `${report.changes.length} change${report.changes.length === 1 ? "" : "s"} the release rules know for this graph.`}
          </p>
          {report.changes.length > 0 && (
            <ul className="upgrade-changes" aria-label="Changes for this graph">
              {report.changes.map((c, i) => (
                <li key={`${c.code}-${c.node ?? ""}-${c.step ?? ""}-${i}`}>
                  <span className="badge badge-base">{c.release}</span> {c.message}
                  <div className="small muted">
                    before: {c.before} · after: {c.after}
                  </div>
                </li>
              ))}
            </ul>
          )}
          {Object.entries(report.issues).map(([release, issues]) =>
            issues.length ? (
              <div key={release} className="small">
                On {release}:
                <ul aria-label={`What KServe ${release} makes of this version`}>
                  {issues.map((issue, i) => (
                    <li key={i} className={issue.severity === "error" ? "field-error" : undefined}>
                      {issue.severity}: {issue.message}
                    </li>
                  ))}
                </ul>
              </div>
            ) : null,
          )}
          {!report.same_router && <p className="small muted">What the rules do not tell, the graph's tests do: in the Tests panel, compare a version with itself under two KServe releases.</p>}
        </div>
      )}
    </section>
  );
}
