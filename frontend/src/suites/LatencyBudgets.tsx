/**
 * The graph's latency budgets in its test settings (the graph's properties): the p95 of the whole
 * graph and of chosen steps, saved with `PATCH /api/graphs/{name}/ {latency_budgets}`. Load tests
 * and suite runs judge them; once saved, the latest version's timeouts are checked against them
 * (`GET …/budget-check/`) and what that finds is said here.
 */
import { useEffect, useId, useState } from "react";
import type { Api, GraphSummary } from "../api";
import type { Issue } from "../graph/types";
import { Spinner, describeApiError } from "../common/ui";
import { budgetsOf, formOf, stepTargets, type BudgetsForm, type FormErrors } from "./budgetsForm";
import "./suites.css";

export function LatencyBudgetsSetting({ api, graph, readOnly }: { api: Api; graph: GraphSummary; readOnly: boolean }) {
  const id = useId();
  const [form, setForm] = useState<BudgetsForm>(() => formOf(graph.latency_budgets));
  const [saved, setSaved] = useState<BudgetsForm>(() => formOf(graph.latency_budgets));
  const [errors, setErrors] = useState<FormErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [warnings, setWarnings] = useState<Issue[]>([]);
  const version = graph.latest_version?.number ?? null;
  const targets = stepTargets(graph.latest_version?.manifest);

  useEffect(() => {
    setForm(formOf(graph.latency_budgets));
    setSaved(formOf(graph.latency_budgets));
  }, [graph]);

  const dirty = JSON.stringify(form) !== JSON.stringify(saved);
  const edit = (next: BudgetsForm) => {
    setForm(next);
    setNote(null);
  };
  const setRow = (i: number, change: Partial<BudgetsForm["steps"][number]>) => edit({ ...form, steps: form.steps.map((r, j) => (j === i ? { ...r, ...change } : r)) });

  const save = async () => {
    const { budgets, errors: found } = budgetsOf(form);
    setErrors(found);
    setError(null);
    setNote(null);
    if (Object.keys(found).length) return;
    setSaving(true);
    try {
      const g = await api.updateGraph(graph.name, { latency_budgets: budgets });
      const now = formOf(g.latency_budgets);
      setForm(now);
      setSaved(now);
      const stated = now.graph !== "" || now.steps.length > 0;
      setNote(stated ? "Budgets saved: load tests and suite runs judge them." : "Budgets removed.");
      if (stated && version !== null) {
        api.budgetCheck(graph.name, version).then(
          (check) => setWarnings(check.issues),
          () => setWarnings([]), // a hint only: the budgets are saved either way
        );
      } else setWarnings([]);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setSaving(false);
    }
  };

  const fieldError = (key: string) =>
    errors[key] ? (
      <p id={`${id}-${key}-error`} className="field-error" role="alert">
        {errors[key]}
      </p>
    ) : null;
  const invalid = (key: string) => ({ "aria-invalid": errors[key] ? true : undefined, "aria-describedby": errors[key] ? `${id}-${key}-error` : undefined });

  return (
    <section className="latency-budgets" aria-label="Latency budgets">
      <h4 className="props-title">Latency budgets</h4>
      <p className="field-help">The p95 latency, in milliseconds, that the graph and its steps should stay under. Load tests and suite runs judge them; the timeouts are checked against them. Leave a field empty for no budget.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div className="field">
          <label className="label" htmlFor={`${id}-graph`}>
            Whole graph p95 (ms)
          </label>
          <input id={`${id}-graph`} className="input" inputMode="decimal" value={form.graph} disabled={readOnly || saving} onChange={(e) => edit({ ...form, graph: e.target.value })} {...invalid("graph")} />
          {fieldError("graph")}
        </div>
        {form.steps.length > 0 && (
          <table className="budget-steps small">
            <caption className="visually-hidden">Step budgets</caption>
            <thead>
              <tr>
                <th scope="col">Step (node/step)</th>
                <th scope="col">p95 (ms)</th>
                <th scope="col">
                  <span className="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {form.steps.map((row, i) => (
                <tr key={i}>
                  <td>
                    <input className="input mono" list={`${id}-targets`} aria-label={`Step of budget ${i + 1}`} value={row.target} disabled={readOnly || saving} onChange={(e) => setRow(i, { target: e.target.value })} {...invalid(`step-${i}-target`)} />
                    {fieldError(`step-${i}-target`)}
                  </td>
                  <td>
                    <input className="input" inputMode="decimal" aria-label={`p95 budget of ${row.target || `step ${i + 1}`} (ms)`} value={row.ms} disabled={readOnly || saving} onChange={(e) => setRow(i, { ms: e.target.value })} {...invalid(`step-${i}-ms`)} />
                    {fieldError(`step-${i}-ms`)}
                  </td>
                  <td>
                    <button type="button" className="btn btn-tiny" disabled={readOnly || saving} onClick={() => edit({ ...form, steps: form.steps.filter((_, j) => j !== i) })} aria-label={`Remove the budget of ${row.target || `step ${i + 1}`}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <datalist id={`${id}-targets`}>
          {targets.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <div className="budget-actions">
          <button type="button" className="btn btn-small" disabled={readOnly || saving} onClick={() => edit({ ...form, steps: [...form.steps, { target: targets.find((t) => !form.steps.some((r) => r.target === t)) ?? "", ms: "" }] })}>
            Add a step budget
          </button>
          <button type="submit" className="btn btn-primary btn-small" disabled={readOnly || saving || !dirty} aria-busy={saving || undefined}>
            {saving && <Spinner decorative />}
            Save budgets
          </button>
        </div>
      </form>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {note && (
        <p className="small" role="status">
          {note}
        </p>
      )}
      {warnings.length > 0 && (
        <ul className="budget-warnings small" aria-label="Budgets against the timeouts">
          {warnings.map((w, i) => (
            <li key={i}>
              {w.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
