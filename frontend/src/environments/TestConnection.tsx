/**
 * "Test connection": a button that probes an environment's services (`GET
 * /api/environments/{id}/probe/`) and a list of what each answered, errors in words. Used on the
 * environments page and beside the Run panel's environment picker. The result list is a live
 * region, so a screen reader hears the outcome; the button stays focused.
 */
import { useState } from "react";
import type { Api, ProbeResult } from "../api";
import { Spinner, errorText } from "../common/ui";
import { probeHeadline, summarizeProbe } from "./probe";
import "./probe.css";

export function TestConnection({ api, environmentId, environmentName, services, idPrefix, onProbed }: {
  api: Api;
  environmentId: number | null;
  environmentName: string;
  /** Probe these serviceNames too (those the environment does not map go through its URL template). */
  services?: string[];
  idPrefix: string;
  /** Called with every finished probe's results (the editor checks edge contracts with them). */
  onProbed?: (results: ProbeResult[], environment: string) => void;
}) {
  const [results, setResults] = useState<ProbeResult[] | null>(null);
  const [probing, setProbing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [probedName, setProbedName] = useState(environmentName);

  const probe = async () => {
    if (environmentId === null) return;
    setProbing(true);
    setError(null);
    try {
      const mapped = (await api.probeEnvironment(environmentId)).services;
      const extra = (services ?? []).filter((name) => !mapped.some((r) => r.service === name));
      const more = await Promise.all(extra.map(async (name) => (await api.probeEnvironment(environmentId, name)).services));
      const all = [...mapped, ...more.flat()];
      setResults(all);
      onProbed?.(all, environmentName);
      setProbedName(environmentName);
    } catch (err) {
      setResults(null);
      setError(`Could not test ${environmentName}: ${errorText(err)}`);
    } finally {
      setProbing(false);
    }
  };

  return (
    <div className="probe">
      <button type="button" className="btn btn-small" onClick={() => void probe()} disabled={probing || environmentId === null} aria-label={`Test connection of ${environmentName}`} aria-controls={`${idPrefix}-results`}>
        {probing ? <Spinner label="Testing" decorative /> : null}
        Test connection
      </button>
      <div id={`${idPrefix}-results`} className="probe-results" role="status" aria-live="polite">
        {error && <p className="field-error">{error}</p>}
        {results && !probing && (
          <>
            <p className="probe-headline">
              {probedName}: {probeHeadline(results)}
            </p>
            <ul className="probe-list" aria-label={`Connection test of ${probedName}`}>
              {results.map((result) => {
                const summary = summarizeProbe(result);
                return (
                  <li key={result.service} className={`probe-item probe-${summary.tone}`}>
                    <div>
                      <span className="mono probe-service">{result.service}</span> <span className={`badge probe-status-${summary.tone}`}>{summary.status}</span> <span className="muted small">{summary.detail}</span>
                    </div>
                    <div className="mono small muted probe-url">{result.url}</div>
                    {summary.error && <div className="field-error small">{summary.error}</div>}
                    {summary.inputs.length > 0 && <div className="mono small">inputs: {summary.inputs.join("; ")}</div>}
                    {summary.outputs.length > 0 && <div className="mono small">outputs: {summary.outputs.join("; ")}</div>}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </div>
    </div>
  );
}
