/**
 * The export gate: the graph's `require_passing_tests` setting and the environments whose suite
 * verdicts it trusts (in the graph's properties, above its latency budgets), and the dialog that asks for a reason when an
 * export is refused because the version has no passing suite run the gate trusts (the forced
 * export is a POST; the reason goes to the audit log with it).
 */
import { useEffect, useState } from "react";
import { type Api, type Environment, type GraphSummary } from "../api";
import { Modal, Spinner, describeApiError } from "../common/ui";
import { lazyComponent } from "../common/lazyChunk";
import { REASON_MIN_VISIBLE, visibleLength } from "./suite";
import "./suites.css";

// The budgets' form loads when the graph's settings show.
const LatencyBudgetsSetting = lazyComponent(() => import("./LatencyBudgets").then((m) => m.LatencyBudgetsSetting), "latency budgets");

export function SuiteGateSetting({ api, graph, readOnly }: { api: Api; graph: string; readOnly: boolean }) {
  const [on, setOn] = useState<boolean | null>(null);
  const [trusted, setTrusted] = useState<string[]>([]);
  const [shared, setShared] = useState<Environment[]>([]);
  const [lastPassing, setLastPassing] = useState<number | null>(null);
  const [loaded, setLoaded] = useState<GraphSummary | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    api.getGraph(graph).then(
      (g) => {
        if (stale) return;
        setLoaded(g);
        setOn(!!g.require_passing_tests);
        setTrusted(g.gate_environments ?? []);
        setLastPassing(g.last_passing_version ?? null);
      },
      (err: unknown) => !stale && setError(describeApiError(err)),
    );
    api.listEnvironments().then(
      (page) => !stale && setShared(page.results.filter((e) => e.visibility === "shared")),
      () => undefined, // the list of choices only; the setting itself still shows
    );
    return () => {
      stale = true;
    };
  }, [api, graph]);

  const change = async (patch: { require_passing_tests?: boolean; gate_environments?: string[] }) => {
    setSaving(true);
    setError(null);
    const before = { on, trusted };
    if (patch.require_passing_tests !== undefined) setOn(patch.require_passing_tests); // shown at once; put back if refused
    if (patch.gate_environments !== undefined) setTrusted(patch.gate_environments);
    try {
      const g = await api.updateGraph(graph, patch);
      setOn(!!g.require_passing_tests);
      setTrusted(g.gate_environments ?? []);
      setLastPassing(g.last_passing_version ?? null);
    } catch (err) {
      setOn(before.on);
      setTrusted(before.trusted);
      setError(describeApiError(err));
    } finally {
      setSaving(false);
    }
  };

  const toggle = (name: string, checked: boolean) => {
    const next = checked ? [...trusted, name] : trusted.filter((n) => n !== name);
    void change({ gate_environments: next });
  };
  const defaultName = shared.find((e) => e.system)?.name ?? "the default environment";
  const where = trusted.length ? trusted.join(", ") : `${defaultName} (the default)`;

  return (
    <>
      <section className="test-gate" aria-label="Tests">
        <h4 className="props-title">Tests</h4>
        {on === null && !error ? (
          <Spinner label="Loading the graph's settings" />
        ) : (
          <label>
            <input type="checkbox" checked={!!on} disabled={readOnly || saving || on === null} onChange={(e) => void change({ require_passing_tests: e.target.checked })} aria-describedby="test-gate-help" />
            Require a passing suite run to export
            {saving && <Spinner decorative />}
          </label>
        )}
        <p id="test-gate-help" className="field-help">
          Exporting a version without a passing suite run on the current cases then asks its owner or an editor for a reason, which the audit log keeps. A suite run counts only when the owner or an editor ran it in a trusted environment: {where}.{" "}
          {lastPassing !== null ? `Last passing version: v${lastPassing}.` : "No version has passed its suite yet."}
        </p>
        {on && shared.length > 0 && (
          <fieldset className="test-gate-environments" aria-label="Trusted environments">
            <legend className="small">Trusted environments (shared ones only; none ticked: {defaultName})</legend>
            {shared.map((e) => (
              <label key={e.id} className="small">
                <input type="checkbox" checked={trusted.includes(e.name)} disabled={readOnly || saving} onChange={(ev) => toggle(e.name, ev.target.checked)} /> {e.name}
                {e.system ? " (default)" : ""}
              </label>
            ))}
          </fieldset>
        )}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
      </section>
      {loaded && <LatencyBudgetsSetting api={api} graph={loaded} readOnly={readOnly} />}
    </>
  );
}

/** An export the gate refused: which version, in which format, and what the server said. */
export interface GateRefusal {
  version: number;
  format: "yaml" | "json";
  detail: string;
  lastPassing: number | null;
}

export function ExportGateDialog({ refusal, onClose, onForce }: { refusal: GateRefusal | null; onClose: () => void; onForce: (reason: string) => Promise<void> }) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setReason("");
    setError(null);
  }, [refusal]);

  const force = async () => {
    if (visibleLength(reason) < REASON_MIN_VISIBLE) {
      setError(`Say why this version may go out without passing tests (at least ${REASON_MIN_VISIBLE} visible characters).`);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onForce(reason.trim());
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open={refusal !== null}
      title="Export without passing tests?"
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-danger" onClick={() => void force()} disabled={busy} aria-busy={busy || undefined}>
            {busy && <Spinner decorative />}
            Export anyway
          </button>
        </>
      }
    >
      <p>
        Version {refusal?.version} has no passing suite run that the gate trusts on the current test cases, and this graph requires one to export. Only its owner and editors may export it anyway.{" "}
        {refusal?.lastPassing ? `The last version that passed is v${refusal.lastPassing}.` : "No version has passed yet."}
      </p>
      <p className="small muted">{refusal?.detail}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void force();
        }}
      >
        <div className="field">
          <label className="label" htmlFor="gate-reason">
            Reason (kept in the audit log)
          </label>
          <input id="gate-reason" className="input" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} aria-invalid={!!error || undefined} aria-describedby={error ? "gate-reason-error" : undefined} />
          {error && (
            <p id="gate-reason-error" className="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
      </form>
    </Modal>
  );
}
