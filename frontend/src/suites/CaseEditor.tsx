/**
 * The case editor: a test case's name, request, seed, environment and expectations, saved with
 * the revision it started from (If-Match); a stale save shows the newer case and lets the user
 * save over it or load it. The server's 400 issues are shown on the field or expectation they name.
 */
import { useEffect, useRef, useState, type ReactNode } from "react";
import { ApiError, type Api, type Run, type TestCaseRow } from "../api";
import { Spinner, describeApiError } from "../common/ui";
import { caseConflictOf, type CaseConflict } from "./caseConflict";
import { caseForm, documentOf, nextDraftKey, type CaseForm } from "./caseForm";
import { emptyDraft, pinIssues, STEP_STATES, type CaseIssue, type Draft } from "./expectations";
import { ExpectationItem } from "./ExpectationFields";
import { ProblemBanner } from "./ProblemBanner";

/** One labelled field of the case editor, with the server's issues about it underneath. */
function CaseField({ id, label, errors, children }: { id: string; label: string; errors?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label className="label" htmlFor={id}>
        {label}
      </label>
      {children}
      {errors}
    </div>
  );
}

export function CaseEditor({ api, graph, shownRun, initial, onSaved, onCancel }: { api: Api; graph: string; shownRun: Run | null; initial: CaseForm; onSaved: (row: TestCaseRow) => void; onCancel: () => void }) {
  const [e, setE] = useState(initial);
  const [picking, setPicking] = useState<number | null>(null);
  const [saving, setSaving] = useState(false);
  const [problem, setProblem] = useState<{ message: string; issues: CaseIssue[] } | null>(null);
  const [conflict, setConflict] = useState<CaseConflict | null>(null);
  const nameRef = useRef<HTMLInputElement>(null);

  useEffect(() => nameRef.current?.focus(), []);

  const pinned = pinIssues(problem?.issues ?? []);
  const caseIssue = (field: string) => pinned.rest.filter((i) => (i.path ?? i.field ?? "").split(/[.[]/)[0] === field);
  const setDraft = (i: number, draft: Draft) => setE({ ...e, drafts: e.drafts.map((d, j) => (j === i ? { ...d, draft } : d)) });

  // `revision`: the precondition (If-Match); the one the edit started from unless the user chose
  // to save over a newer one. A stale save keeps the form as it is and shows the conflict.
  const save = async (revision: number | null = e.revision) => {
    const built = documentOf(e);
    if ("issues" in built) {
      setProblem({ message: "Some fields cannot be read; see the marked fields.", issues: built.issues });
      return;
    }
    setSaving(true);
    setProblem(null);
    setConflict(null);
    try {
      const row = e.id === null ? await api.createTest(graph, built.document) : await api.updateTest(graph, e.id, built.document, revision);
      onSaved(row);
    } catch (err) {
      const stale = caseConflictOf(err);
      if (stale) setConflict(stale);
      else setProblem({ message: describeApiError(err), issues: err instanceof ApiError ? (err.issues as CaseIssue[]) : [] });
    } finally {
      setSaving(false);
    }
  };
  const overwrite = (c: CaseConflict) => {
    setE({ ...e, revision: c.revision });
    void save(c.revision);
  };
  const loadTheirs = (c: CaseConflict) => {
    setE(caseForm({ id: c.current.id, revision: c.current.revision }, c.current.document));
    setConflict(null);
  };

  const fieldErrors = (field: string) =>
    caseIssue(field).map((issue, j) => (
      <p key={j} className="field-error">
        {issue.message}
      </p>
    ));

  return (
    <form
      className="case-editor"
      aria-label={e.id === null ? "New test case" : `Edit test case ${initial.name}`}
      onSubmit={(ev) => {
        ev.preventDefault();
        void save();
      }}
    >
      <h3 className="case-editor-title">{e.id === null ? "New test case" : `Edit “${initial.name}”`}</h3>
      <CaseField id="case-name" label="Name" errors={fieldErrors("name")}>
        <input id="case-name" ref={nameRef} className="input input-small" value={e.name} maxLength={200} aria-invalid={caseIssue("name").length > 0 || undefined} onChange={(ev) => setE({ ...e, name: ev.target.value })} />
      </CaseField>
      <CaseField id="case-description" label="Description">
        <input id="case-description" className="input input-small" value={e.description} onChange={(ev) => setE({ ...e, description: ev.target.value })} />
      </CaseField>
      <CaseField id="case-request" label="Request (JSON: payload or raw, content_type, headers)" errors={fieldErrors("request")}>
        <textarea id="case-request" className="textarea mono" rows={5} spellCheck={false} value={e.request} aria-invalid={caseIssue("request").length > 0 || undefined} onChange={(ev) => setE({ ...e, request: ev.target.value })} />
      </CaseField>
      <div className="case-row">
        <CaseField id="case-seed" label="Seed (Splitters)" errors={fieldErrors("seed")}>
          <input id="case-seed" className="input input-small" value={e.seed} inputMode="numeric" aria-invalid={caseIssue("seed").length > 0 || undefined} onChange={(ev) => setE({ ...e, seed: ev.target.value })} />
        </CaseField>
        <CaseField id="case-environment" label="Environment" errors={fieldErrors("environment")}>
          <input id="case-environment" className="input input-small" value={e.environment} placeholder="the suite's" onChange={(ev) => setE({ ...e, environment: ev.target.value })} />
        </CaseField>
      </div>
      <datalist id="step-states">
        {STEP_STATES.map((s) => (
          <option key={s} value={s} />
        ))}
      </datalist>
      <fieldset className="case-exps">
        <legend className="label">Expectations</legend>
        <ol className="exp-list">
          {e.drafts.map(({ key, draft }, i) => (
            <ExpectationItem
              key={key}
              api={api}
              graph={graph}
              shownRun={shownRun}
              draft={draft}
              index={i}
              issues={pinned.byExpectation.get(i) ?? []}
              picking={picking === i}
              onChange={(d) => setDraft(i, d)}
              onTogglePick={(open) => setPicking(open ? i : null)}
              onRemove={() => setE({ ...e, drafts: e.drafts.filter((_, j) => j !== i) })}
            />
          ))}
        </ol>
        <button type="button" className="btn btn-ghost btn-small" onClick={() => setE({ ...e, drafts: [...e.drafts, { key: nextDraftKey(), draft: emptyDraft("path") }] })}>
          + Add expectation
        </button>
      </fieldset>
      {problem && <ProblemBanner message={problem.message} issues={pinned.rest} />}
      {conflict && (
        <div className="case-conflict" role="alert">
          <p>{conflict.message}</p>
          <p>
            Their version (revision {conflict.current.revision}): “{conflict.current.name}”{conflict.current.description ? ` — ${conflict.current.description}` : ""}, {Array.isArray(conflict.current.document.expectations) ? conflict.current.document.expectations.length : 0} expectation(s). Your edit is still in the form above.
          </p>
          <div className="case-actions">
            <button type="button" className="btn btn-small btn-primary" disabled={saving} onClick={() => overwrite(conflict)}>
              Save mine over theirs
            </button>
            <button type="button" className="btn btn-small" disabled={saving} onClick={() => loadTheirs(conflict)}>
              Load theirs (drop my edit)
            </button>
          </div>
        </div>
      )}
      <div className="case-actions">
        <button type="submit" className="btn btn-primary btn-small" disabled={saving || !e.name.trim()} aria-busy={saving || undefined}>
          {saving && <Spinner decorative />}
          Save test case
        </button>
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
