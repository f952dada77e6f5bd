/**
 * "Save as test case" for a finished run: the server's preview of the case (request, seed,
 * environment and the expectations it would record: final status, body as a subset, routes
 * taken), each expectation removable, then the save with the ones kept. The server's issues are
 * shown on the expectation they name.
 */
import { useEffect, useState } from "react";
import { ApiError, type Api, type TestCaseRow } from "../api";
import { Modal, Spinner, describeApiError } from "../common/ui";
import type { JsonObject } from "../graph/types";
import { describeExpectation, pinIssues, type CaseIssue } from "./expectations";
import { ProblemBanner } from "./ProblemBanner";

export function SaveAsCaseDialog({ api, runId, open, onClose, onSaved }: { api: Api; runId: string; open: boolean; onClose: () => void; onSaved: (row: TestCaseRow) => void }) {
  const [name, setName] = useState("");
  const [preview, setPreview] = useState<JsonObject | null>(null);
  const [kept, setKept] = useState<{ exp: unknown; at: number }[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [problem, setProblem] = useState<{ message: string; issues: CaseIssue[] } | null>(null);

  useEffect(() => {
    if (!open) return;
    let stale = false;
    setPreview(null);
    setLoadError(null);
    setProblem(null);
    setName(`run ${runId.slice(0, 8)}`);
    api.saveRunAsTest(runId, { preview: true }).then(
      (answer) => {
        if (stale) return;
        setPreview(answer.document);
        const exps = Array.isArray(answer.document.expectations) ? (answer.document.expectations as unknown[]) : [];
        setKept(exps.map((exp, at) => ({ exp, at })));
      },
      (err: unknown) => !stale && setLoadError(describeApiError(err)),
    );
    return () => {
      stale = true;
    };
  }, [api, runId, open]);

  const all = Array.isArray(preview?.expectations) ? (preview.expectations as unknown[]) : [];
  const pinned = pinIssues(problem?.issues ?? []);

  const save = async () => {
    setSaving(true);
    setProblem(null);
    try {
      const row = await api.saveRunAsTest(runId, { name: name.trim() || undefined, expectations: kept.map((k) => k.exp) });
      onSaved(row);
    } catch (err) {
      setProblem({ message: describeApiError(err), issues: err instanceof ApiError ? (err.issues as CaseIssue[]) : [] });
    } finally {
      setSaving(false);
    }
  };

  const request = (preview?.request ?? {}) as JsonObject;
  const payloadText = "payload" in request ? JSON.stringify(request.payload) : typeof request.raw === "string" ? request.raw : "";

  return (
    <Modal
      open={open}
      title="Save as test case"
      onClose={onClose}
      wide
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" onClick={() => void save()} disabled={!preview || saving || !name.trim()} aria-busy={saving || undefined}>
            {saving && <Spinner decorative />}
            Save test case
          </button>
        </>
      }
    >
      {loadError ? (
        <p className="field-error" role="alert">
          {loadError}
        </p>
      ) : !preview ? (
        <Spinner label="Reading the run" />
      ) : (
        <form
          className="save-test-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <div className="field">
            <label className="label" htmlFor="save-test-name">
              Name
            </label>
            <input id="save-test-name" className="input" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} aria-invalid={pinned.rest.some((i) => i.path === "name" || i.field === "name") || undefined} />
          </div>
          <p className="small muted">
            The request{payloadText && (
              <>
                {" "}
                <code className="mono">{payloadText.length > 80 ? `${payloadText.slice(0, 79)}…` : payloadText}</code>
              </>
            )}
            {typeof preview.seed === "number" && <>, seed {preview.seed}</>}
            {typeof preview.environment === "string" && <>, environment {preview.environment}</>}.
          </p>
          <h3 className="save-test-heading">Expectations it will record</h3>
          {kept.length === 0 && <p className="field-warning">No expectations: the case will pass whatever the graph answers. Add some in the Tests panel afterwards.</p>}
          <ul className="save-test-exps" aria-label="Expectations">
            {kept.map((k, i) => (
              <li key={k.at} className={pinned.byExpectation.has(i) ? "has-issue" : undefined}>
                <span className="exp-text">{describeExpectation(k.exp)}</span>
                <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove: ${describeExpectation(k.exp)}`} onClick={() => setKept(kept.filter((x) => x.at !== k.at))}>
                  Remove
                </button>
                {pinned.byExpectation.get(i)?.map((issue, j) => (
                  <p key={j} className="field-error">
                    {issue.message}
                  </p>
                ))}
              </li>
            ))}
          </ul>
          {kept.length < all.length && (
            <button type="button" className="btn btn-ghost btn-small" onClick={() => setKept(all.map((exp, at) => ({ exp, at })))}>
              Restore the {all.length - kept.length} removed
            </button>
          )}
          {problem && <ProblemBanner message={problem.message} issues={pinned.rest} />}
          <button type="submit" hidden />
        </form>
      )}
    </Modal>
  );
}
