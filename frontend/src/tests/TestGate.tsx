/**
 * The export gate: the graph's `require_passing_tests` setting (in the graph's properties), and
 * the dialog that asks for a reason when an export is refused because the version has no passing
 * suite run (the reason goes to the audit log with the forced export).
 */
import { useEffect, useState } from "react";
import { type Api } from "../api";
import { Modal, Spinner, describeApiError } from "../common/ui";
import "./tests.css";

export function TestGateSetting({ api, graph, readOnly }: { api: Api; graph: string; readOnly: boolean }) {
  const [on, setOn] = useState<boolean | null>(null);
  const [lastPassing, setLastPassing] = useState<number | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    api.getGraph(graph).then(
      (g) => {
        if (stale) return;
        setOn(!!g.require_passing_tests);
        setLastPassing(g.last_passing_version ?? null);
      },
      (err: unknown) => !stale && setError(describeApiError(err)),
    );
    return () => {
      stale = true;
    };
  }, [api, graph]);

  const change = async (value: boolean) => {
    setSaving(true);
    setError(null);
    setOn(value); // shown at once; put back if the server refuses
    try {
      const g = await api.updateGraph(graph, { require_passing_tests: value });
      setOn(!!g.require_passing_tests);
      setLastPassing(g.last_passing_version ?? null);
    } catch (err) {
      setOn(!value);
      setError(describeApiError(err));
    } finally {
      setSaving(false);
    }
  };

  return (
    <section className="test-gate" aria-label="Tests">
      <h4 className="props-title">Tests</h4>
      {on === null && !error ? (
        <Spinner label="Loading the graph's settings" />
      ) : (
        <label>
          <input type="checkbox" checked={!!on} disabled={readOnly || saving || on === null} onChange={(e) => void change(e.target.checked)} aria-describedby="test-gate-help" />
          Require a passing suite run to export
          {saving && <Spinner decorative />}
        </label>
      )}
      <p id="test-gate-help" className="field-help">
        Exporting a version without a passing suite run on the current cases then asks for a reason, which the audit log keeps.{" "}
        {lastPassing !== null ? `Last passing version: v${lastPassing}.` : "No version has passed its suite yet."}
      </p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
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
    if (!reason.trim()) {
      setError("Say why this version may go out without passing tests.");
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
        Version {refusal?.version} has no passing suite run on the current test cases, and this graph requires one to export.{" "}
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
