/**
 * The "Tests" tab: the graph's saved test cases (docs/graph-tests.md) with add, edit, duplicate
 * and delete, import and export of the YAML test file, and the case editor. In the editor a path
 * expectation takes its path from a value clicked in the JSON tree of a run's final response or
 * of any step's response; the server's 400 issues are shown on the expectation they name.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { ApiError, downloadBlob, type Api, type Environment, type Run, type TestCaseRow } from "../api";
import { ErrorBanner, Modal, Spinner, describeApiError } from "../common/ui";
import type { JsonObject } from "../graph/types";
import { showBody, showValue } from "../panels/run/bodies";
import { isTerminal } from "../panels/run/console";
import { applyPick, copyName, describeExpectation, emptyDraft, fromDraft, KINDS, OPERATORS, pinIssues, STEP_STATES, toDraft, type CaseIssue, type Draft, type Kind } from "./expectations";
import { JsonTree, type Picked } from "./JsonTree";
import { ProblemBanner } from "./ProblemBanner";
import { SuiteSection } from "./SuiteSection";
import { caseConflictOf, type CaseConflict } from "./caseConflict";
import { CompareSection } from "./CompareSection";
import type { CaseComparison } from "./compare";
import type { CaseResult } from "./suite";
import type { SuiteController } from "./useSuiteRun";
import "./tests.css";

const KIND_LABELS: Record<Kind | "json", string> = {
  status: "Final status",
  body: "Body",
  path: "Value at a path",
  route: "Route taken",
  step: "Step status",
  latency: "Latency",
  json: "Other (JSON)",
};

interface EditorState {
  /** The case being edited; null for a new one. */
  id: number | null;
  /** Its revision when the edit started (sent as If-Match); null for a new one. */
  revision: number | null;
  name: string;
  description: string;
  request: string;
  seed: string;
  environment: string;
  drafts: { key: number; draft: Draft }[];
}

let draftKeys = 0;

function editorState(row: Pick<TestCaseRow, "id" | "revision"> | null, document: JsonObject | null): EditorState {
  const doc = document ?? {};
  const exps = Array.isArray(doc.expectations) ? (doc.expectations as unknown[]) : [];
  return {
    id: row?.id ?? null,
    revision: row?.revision ?? null,
    name: typeof doc.name === "string" ? doc.name : "",
    description: typeof doc.description === "string" ? doc.description : "",
    request: JSON.stringify(doc.request ?? { payload: { instances: [{}] } }, null, 2),
    seed: typeof doc.seed === "number" ? String(doc.seed) : "",
    environment: typeof doc.environment === "string" ? doc.environment : "",
    drafts: (exps.length ? exps.map(toDraft) : [emptyDraft("status")]).map((draft) => ({ key: ++draftKeys, draft })),
  };
}

/** The document to send, or the problems found before sending (pinned like the server's). */
function documentOf(e: EditorState): { document: JsonObject } | { issues: CaseIssue[] } {
  const issues: CaseIssue[] = [];
  let request: unknown;
  try {
    request = JSON.parse(e.request);
  } catch {
    issues.push({ path: "request", message: "the request is not valid JSON" });
  }
  const seed = e.seed.trim();
  if (seed && !/^-?\d+$/.test(seed)) issues.push({ path: "seed", message: "the seed is a whole number" });
  const expectations: unknown[] = [];
  e.drafts.forEach(({ draft }, i) => {
    const r = fromDraft(draft);
    if (r.ok) expectations.push(r.value);
    else issues.push({ expectation: i, field: r.field, message: r.message });
  });
  if (issues.length) return { issues };
  const document: JsonObject = { name: e.name.trim() };
  if (e.description.trim()) document.description = e.description.trim();
  document.request = request as JsonObject;
  if (seed) document.seed = Number(seed);
  if (e.environment.trim()) document.environment = e.environment.trim();
  document.expectations = expectations as JsonObject[];
  return { document };
}

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

function PathPicker({ api, graph, shownRun, onPick, onClose }: { api: Api; graph: string; shownRun: Run | null; onPick: (picked: Picked, step: string | null) => void; onClose: () => void }) {
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

function ExpectationFields({ draft, index, onChange, issues }: { draft: Draft; index: number; onChange: (d: Draft) => void; issues: CaseIssue[] }) {
  const id = (f: string) => `exp-${index}-${f}`;
  const bad = (...fields: string[]) => issues.some((i) => fields.includes(i.field ?? "") || fields.some((f) => (i.path ?? "").endsWith(`.${f}`)));
  const text = (field: keyof Draft, label: string, props: { mono?: boolean; placeholder?: string; issueFields?: string[] } = {}) => (
    <div className="field exp-field">
      <label className="label" htmlFor={id(field)}>
        {label}
      </label>
      <input
        id={id(field)}
        className={`input input-small${props.mono ? " mono" : ""}`}
        value={draft[field] as string}
        placeholder={props.placeholder}
        aria-invalid={bad(field, ...(props.issueFields ?? [])) || undefined}
        onChange={(e) => onChange({ ...draft, [field]: e.target.value })}
      />
    </div>
  );
  switch (draft.kind) {
    case "status":
      return text("status", "HTTP status");
    case "latency":
      return text("latency", "Within (ms)");
    case "body":
      return (
        <>
          <div className="field exp-field">
            <label className="label" htmlFor={id("match")}>
              Match
            </label>
            <select id={id("match")} className="input input-small" value={draft.match} onChange={(e) => onChange({ ...draft, match: e.target.value as Draft["match"] })}>
              <option value="subset">contains (subset)</option>
              <option value="exact">equals (exact)</option>
            </select>
          </div>
          <div className="field exp-field wide">
            <label className="label" htmlFor={id("body")}>
              Expected body (JSON)
            </label>
            <textarea id={id("body")} className="textarea mono" rows={4} value={draft.body} aria-invalid={bad("body") || undefined} onChange={(e) => onChange({ ...draft, body: e.target.value })} />
          </div>
          <div className="field exp-field wide">
            <label className="label" htmlFor={id("ignore")}>
              Ignore paths (one a line)
            </label>
            <textarea id={id("ignore")} className="textarea mono" rows={2} value={draft.ignore} aria-invalid={bad("ignore") || undefined} onChange={(e) => onChange({ ...draft, ignore: e.target.value })} />
          </div>
        </>
      );
    case "path":
      return (
        <>
          {text("path", "Path (GJSON)", { mono: true, placeholder: "predictions.0.label" })}
          {text("step", "On step's response (node/step, empty: the final body)", { mono: true, placeholder: "root/classify" })}
          <div className="field exp-field">
            <label className="label" htmlFor={id("operator")}>
              Operator
            </label>
            <select id={id("operator")} className="input input-small" value={draft.operator} aria-invalid={bad("operator") || undefined} onChange={(e) => onChange({ ...draft, operator: e.target.value as Draft["operator"] })}>
              {OPERATORS.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          </div>
          {draft.operator !== "exists" && draft.operator !== "missing" && text("operand", draft.operator === "matches" ? "Regex (RE2)" : "Value (JSON, or text)", { mono: true, issueFields: [draft.operator] })}
          {draft.operator === "approx" && text("tolerance", "Tolerance")}
        </>
      );
    case "route":
      return (
        <>
          {text("route", "Switch or Splitter node", { mono: true })}
          {!draft.tookNothing && text("took", "Took step (name or index)", { mono: true })}
          <label className="exp-check">
            <input type="checkbox" checked={draft.tookNothing} onChange={(e) => onChange({ ...draft, tookNothing: e.target.checked })} /> matched nothing
          </label>
        </>
      );
    case "step":
      return (
        <>
          {text("step", "Step (node/step)", { mono: true, placeholder: "root/classify" })}
          <div className="field exp-field">
            <label className="label" htmlFor={id("stepStatus")}>
              Status (HTTP status, {STEP_STATES.join(", ")})
            </label>
            <input id={id("stepStatus")} className="input input-small" list="step-states" value={draft.stepStatus} aria-invalid={bad("status") || undefined} onChange={(e) => onChange({ ...draft, stepStatus: e.target.value })} />
          </div>
        </>
      );
    case "json":
      return (
        <div className="field exp-field wide">
          <label className="label" htmlFor={id("json")}>
            Expectation (JSON)
          </label>
          <textarea id={id("json")} className="textarea mono" rows={4} value={draft.json} aria-invalid={bad("json") || issues.length > 0 || undefined} onChange={(e) => onChange({ ...draft, json: e.target.value })} />
        </div>
      );
  }
}

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

function CaseEditor({ api, graph, shownRun, initial, onSaved, onCancel }: { api: Api; graph: string; shownRun: Run | null; initial: EditorState; onSaved: (row: TestCaseRow) => void; onCancel: () => void }) {
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
    setE(editorState({ id: c.current.id, revision: c.current.revision }, c.current.document));
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
          {e.drafts.map(({ key, draft }, i) => {
            const issues = pinned.byExpectation.get(i) ?? [];
            const built = fromDraft(draft);
            return (
              <li key={key} className={`exp-item${issues.length ? " has-issue" : ""}`} aria-label={`Expectation ${i + 1}`}>
                <div className="exp-head">
                  <label className="visually-hidden" htmlFor={`exp-${i}-kind`}>
                    Kind of expectation {i + 1}
                  </label>
                  <select id={`exp-${i}-kind`} className="input input-small" value={draft.kind} onChange={(ev) => setDraft(i, { ...emptyDraft(ev.target.value as Draft["kind"]), json: built.ok ? JSON.stringify(built.value, null, 2) : draft.json })}>
                    {[...KINDS, "json" as const].map((k) => (
                      <option key={k} value={k}>
                        {KIND_LABELS[k]}
                      </option>
                    ))}
                  </select>
                  <span className="exp-summary small muted">{built.ok ? describeExpectation(built.value) : ""}</span>
                  <button type="button" className="btn btn-ghost btn-tiny" onClick={() => setPicking(picking === i ? null : i)} aria-expanded={picking === i} title="Pick the path and value from a run's response">
                    Pick from a response…
                  </button>
                  <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove expectation ${i + 1}`} onClick={() => setE({ ...e, drafts: e.drafts.filter((_, j) => j !== i) })}>
                    Remove
                  </button>
                </div>
                <div className="exp-fields">
                  <ExpectationFields draft={draft} index={i} issues={issues} onChange={(d) => setDraft(i, d)} />
                </div>
                {issues.map((issue, j) => (
                  <p key={j} className="field-error" role="alert">
                    {issue.field ? <span className="mono">{issue.field}: </span> : null}
                    {issue.message}
                  </p>
                ))}
                {picking === i && (
                  <PathPicker
                    api={api}
                    graph={graph}
                    shownRun={shownRun}
                    onClose={() => setPicking(null)}
                    onPick={(picked, step) => {
                      setDraft(i, applyPick(draft, picked, step));
                      setPicking(null);
                    }}
                  />
                )}
              </li>
            );
          })}
        </ol>
        <button type="button" className="btn btn-ghost btn-small" onClick={() => setE({ ...e, drafts: [...e.drafts, { key: ++draftKeys, draft: emptyDraft("path") }] })}>
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

/** What the Tests panel needs of the suite: its controller and where it runs. */
export interface SuiteProps {
  controller: SuiteController;
  shownVersion: number | null;
  environments: Environment[];
  defaultEnvironment: string;
  onOpenRun: (result: CaseResult) => void;
  /** A compared case chosen (null: none): version `b` on the canvas with its changed steps. */
  onCompareCase: (c: CaseComparison | null, b: number) => void;
}

export function TestsPanel({ api, graph, shownRun, refreshKey, highlight, suite }: { api: Api; graph: string; shownRun: Run | null; refreshKey: number; highlight: number | null; suite: SuiteProps }) {
  const [rows, setRows] = useState<TestCaseRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<EditorState | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<TestCaseRow | null>(null);
  const [importing, setImporting] = useState<{ name: string; text: string } | null>(null);
  const [importProblem, setImportProblem] = useState<{ message: string; issues: CaseIssue[] } | null>(null);
  const [versions, setVersions] = useState<number[]>([]);
  const fileRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let stale = false;
    api.listVersions(graph).then(
      (page) => !stale && setVersions((Array.isArray(page) ? page : page.results).map((v) => v.number)),
      () => undefined, // the version on screen is still offered
    );
    return () => {
      stale = true;
    };
  }, [api, graph, refreshKey]);

  const p = suite.controller.progress;
  const lastResult = new Map((p?.results ?? []).map((r) => [r.case, r]));

  const load = useCallback(async () => {
    try {
      setRows(await api.listTests(graph));
      setError(null);
    } catch (err) {
      setError(`Could not list the test cases: ${describeApiError(err)}`);
    }
  }, [api, graph]);

  useEffect(() => {
    void load();
  }, [load, refreshKey]);

  const duplicate = async (row: TestCaseRow) => {
    setBusy(`dup-${row.id}`);
    try {
      const copy = await api.createTest(graph, { ...row.document, name: copyName(row.name, (rows ?? []).map((r) => r.name)) });
      setSaid(`Duplicated as “${copy.name}”.`);
      await load();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const remove = async (row: TestCaseRow) => {
    setDeleting(null);
    setBusy(`del-${row.id}`);
    try {
      await api.deleteTest(graph, row.id);
      setSaid(`Deleted “${row.name}”.`);
      await load();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const exportFile = async () => {
    setBusy("export");
    try {
      downloadBlob(await api.exportTests(graph), `${graph}.tests.yaml`);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const importFile = async (mode: "merge" | "replace") => {
    if (!importing) return;
    setBusy("import");
    setImportProblem(null);
    try {
      const result = await api.importTests(graph, importing.text, mode);
      setImporting(null);
      setSaid(`Imported ${result.count} case${result.count === 1 ? "" : "s"} from ${importing.name}.`);
      await load();
    } catch (err) {
      setImportProblem({ message: describeApiError(err), issues: err instanceof ApiError ? (err.issues as CaseIssue[]) : [] });
    } finally {
      setBusy(null);
    }
  };

  if (editing) {
    return (
      <div className="tests-panel">
        <CaseEditor
          api={api}
          graph={graph}
          shownRun={shownRun}
          initial={editing}
          onCancel={() => setEditing(null)}
          onSaved={(row) => {
            setEditing(null);
            setSaid(`Saved “${row.name}”.`);
            void load();
          }}
        />
      </div>
    );
  }

  return (
    <div className="tests-panel">
      <SuiteSection
        suite={suite.controller}
        shownVersion={suite.shownVersion}
        versions={versions}
        environments={suite.environments}
        defaultEnvironment={suite.defaultEnvironment}
        hasCases={!!rows?.length}
        onOpenRun={suite.onOpenRun}
      />
      <CompareSection api={api} graph={graph} versions={versions} environments={suite.environments} hasCases={!!rows?.length} onSelectCase={suite.onCompareCase} />
      <div className="tests-bar">
        <button type="button" className="btn btn-small btn-primary" onClick={() => setEditing(editorState(null, null))}>
          New test case
        </button>
        <button type="button" className="btn btn-small" onClick={() => fileRef.current?.click()} disabled={busy === "import"}>
          Import…
        </button>
        <button type="button" className="btn btn-small" onClick={() => void exportFile()} disabled={busy === "export" || !rows?.length} aria-busy={busy === "export" || undefined}>
          Export YAML
        </button>
        <input
          ref={fileRef}
          type="file"
          hidden
          accept=".yaml,.yml,application/yaml,text/yaml"
          aria-label="Test file to import"
          onChange={(ev) => {
            const f = ev.target.files?.[0];
            ev.target.value = "";
            if (f) void f.text().then((text) => setImporting({ name: f.name, text }));
          }}
        />
      </div>
      {said && (
        <p className="tests-said small" role="status">
          {said}
        </p>
      )}
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {rows === null && !error && <Spinner label="Loading the test cases" />}
      {rows !== null && rows.length === 0 && (
        <p className="empty-note">No test cases yet. Run the graph and use “Save as test case…” in the console, add one here, or import a test file.</p>
      )}
      {rows !== null && rows.length > 0 && (
        <ul className="case-list" aria-label="Test cases">
          {rows.map((row) => {
            const exps = Array.isArray(row.document.expectations) ? (row.document.expectations as unknown[]) : [];
            return (
              <li key={row.id} className={`case-item${highlight === row.id ? " highlight" : ""}`} data-case={row.id}>
                <div className="case-name">
                  {row.name}
                  {lastResult.has(row.id) && p && (
                    <span className={`outcome outcome-chip-${lastResult.get(row.id)!.outcome}`} title={`Its last result: the suite run on v${p.version}`}>
                      {lastResult.get(row.id)!.outcome} on v{p.version}
                    </span>
                  )}
                </div>
                {row.description && <div className="small muted">{row.description}</div>}
                <ul className="case-exps small">
                  {exps.slice(0, 4).map((exp, i) => (
                    <li key={i}>{describeExpectation(exp)}</li>
                  ))}
                  {exps.length > 4 && <li className="muted">and {exps.length - 4} more</li>}
                  {exps.length === 0 && <li className="muted">no expectations</li>}
                </ul>
                <div className="case-actions">
                  <button type="button" className="btn btn-tiny" onClick={() => setEditing(editorState(row, row.document))} aria-label={`Edit ${row.name}`}>
                    Edit
                  </button>
                  <button type="button" className="btn btn-tiny" onClick={() => void duplicate(row)} disabled={busy === `dup-${row.id}`} aria-label={`Duplicate ${row.name}`}>
                    Duplicate
                  </button>
                  <button type="button" className="btn btn-tiny btn-danger-ghost" onClick={() => setDeleting(row)} disabled={busy === `del-${row.id}`} aria-label={`Delete ${row.name}`}>
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
      <Modal
        open={deleting !== null}
        title="Delete the test case?"
        onClose={() => setDeleting(null)}
        footer={
          <>
            <button type="button" className="btn" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button type="button" className="btn btn-danger" onClick={() => deleting && void remove(deleting)}>
              Delete
            </button>
          </>
        }
      >
        <p>“{deleting?.name}” will be deleted for everyone working on this graph.</p>
      </Modal>
      <Modal
        open={importing !== null}
        title={`Import ${importing?.name ?? "a test file"}`}
        onClose={() => {
          setImporting(null);
          setImportProblem(null);
        }}
        footer={
          <>
            <button type="button" className="btn" onClick={() => setImporting(null)}>
              Cancel
            </button>
            <button type="button" className="btn" onClick={() => void importFile("replace")} disabled={busy === "import"}>
              Replace all cases
            </button>
            <button type="button" className="btn btn-primary" onClick={() => void importFile("merge")} disabled={busy === "import"}>
              Merge
            </button>
          </>
        }
      >
        <p>Merge adds the file's cases and replaces those with the same name; Replace makes the graph's cases exactly the file's. Nothing changes if the file has a problem.</p>
        {importProblem && <ProblemBanner message={importProblem.message} issues={importProblem.issues.slice(0, 20)} />}
      </Modal>
    </div>
  );
}
