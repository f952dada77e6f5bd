/**
 * The case editor's picker: a value clicked in the JSON tree of a run's final response or of any
 * step's response gives a path expectation its path, value and step. It shows the run on screen
 * when it has ended, else the graph's last finished run.
 */
import { useEffect, useMemo, useState } from "react";
import type { Api, Run } from "../api";
import { Spinner, describeApiError } from "../common/ui";
import { showBody, showValue } from "../panels/run/bodies";
import { isTerminal } from "../panels/run/console";
import { JsonTree, type Picked } from "./JsonTree";

/** A response to pick paths from: the final body or one step's, with the step it names. */
interface Source {
  id: string;
  label: string;
  step: string | null;
  value: unknown;
}

function sourcesOf(run: Run | null): Source[] {
  if (!run) return [];
  const out: Source[] = [];
  const final = showValue(run.response?.body, run.response?.size, run.response?.truncated);
  if (final?.value !== undefined) out.push({ id: "final", label: "Final response", step: null, value: final.value });
  const seen = new Set<string>();
  for (const row of run.steps ?? []) {
    if (row.attempt !== run.attempt || row.step_index === null) continue;
    const shown = showBody(row.response);
    if (shown?.value === undefined) continue;
    const step = `${row.node}/${row.step_name || row.step_index}`;
    if (seen.has(step)) continue; // the first call of a step; every call must agree anyway
    seen.add(step);
    out.push({ id: row.call_id, label: `Step ${step}`, step, value: shown.value });
  }
  return out;
}

export function PathPicker({ api, graph, shownRun, onPick, onClose }: { api: Api; graph: string; shownRun: Run | null; onPick: (picked: Picked, step: string | null) => void; onClose: () => void }) {
  const [run, setRun] = useState<Run | null>(shownRun && isTerminal(shownRun.status) && shownRun.steps ? shownRun : null);
  const [error, setError] = useState<string | null>(null);
  const [sourceId, setSourceId] = useState("final");

  useEffect(() => {
    if (run) return;
    let stale = false;
    (async () => {
      try {
        const page = await api.listRuns(graph, {});
        const latest = page.results.find((r) => isTerminal(r.status) && r.response?.status_code !== null);
        if (!latest) {
          if (!stale) setError("This graph has no finished run yet: run it in the Run tab, then pick values from its responses.");
          return;
        }
        const full = await api.getRun(latest.id);
        if (!stale) setRun(full);
      } catch (err) {
        if (!stale) setError(describeApiError(err));
      }
    })();
    return () => {
      stale = true;
    };
  }, [api, graph, run]);

  const sources = useMemo(() => sourcesOf(run), [run]);
  const source = sources.find((s) => s.id === sourceId) ?? sources[0] ?? null;

  return (
    <div className="path-picker" role="group" aria-label="Pick a value from a run">
      <div className="path-picker-head">
        <label className="label" htmlFor="pick-source">
          Response to pick from
        </label>
        <select id="pick-source" className="input input-small" value={source?.id ?? ""} onChange={(e) => setSourceId(e.target.value)} disabled={!sources.length}>
          {sources.map((s) => (
            <option key={s.id} value={s.id}>
              {s.label}
            </option>
          ))}
        </select>
        <button type="button" className="btn btn-ghost btn-tiny" onClick={onClose}>
          Close picker
        </button>
      </div>
      {run && (
        <p className="small muted">
          From run <span className="mono">{run.id.slice(0, 8)}</span> of version {run.version}. Click a value (or select it and press Enter) to expect it.
        </p>
      )}
      {error && <p className="field-warning">{error}</p>}
      {!run && !error && <Spinner label="Loading the last run" />}
      {run && !sources.length && <p className="field-warning">This run has no JSON response to pick from.</p>}
      {source && <JsonTree key={source.id} value={source.value} label={source.label} onPick={(p) => onPick(p, source.step)} pickLabel="Expect this value" />}
    </div>
  );
}
