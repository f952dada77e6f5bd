/** One expectation in the case editor: the fields of its kind, and the list item around them. */
import type { Api, Run } from "../api";
import { applyPick, describeExpectation, emptyDraft, fromDraft, KINDS, OPERATORS, STEP_STATES, type CaseIssue, type Draft, type Kind } from "./expectations";
import { PathPicker } from "./PathPicker";

const KIND_LABELS: Record<Kind | "json", string> = {
  status: "Final status",
  body: "Body",
  path: "Value at a path",
  route: "Route taken",
  step: "Step status",
  latency: "Latency",
  json: "Other (JSON)",
};

/** One expectation in the case editor: its kind, summary, fields, the server's issues about it, and its picker. */
export function ExpectationItem({ api, graph, shownRun, draft, index: i, issues, picking, onChange, onTogglePick, onRemove }: { api: Api; graph: string; shownRun: Run | null; draft: Draft; index: number; issues: CaseIssue[]; picking: boolean; onChange: (d: Draft) => void; onTogglePick: (open: boolean) => void; onRemove: () => void }) {
  const built = fromDraft(draft);
  return (
    <li className={`exp-item${issues.length ? " has-issue" : ""}`} aria-label={`Expectation ${i + 1}`}>
      <div className="exp-head">
        <label className="visually-hidden" htmlFor={`exp-${i}-kind`}>
          Kind of expectation {i + 1}
        </label>
        <select id={`exp-${i}-kind`} className="input input-small" value={draft.kind} onChange={(ev) => onChange({ ...emptyDraft(ev.target.value as Draft["kind"]), json: built.ok ? JSON.stringify(built.value, null, 2) : draft.json })}>
          {[...KINDS, "json" as const].map((k) => (
            <option key={k} value={k}>
              {KIND_LABELS[k]}
            </option>
          ))}
        </select>
        <span className="exp-summary small muted">{built.ok ? describeExpectation(built.value) : ""}</span>
        <button type="button" className="btn btn-ghost btn-tiny" onClick={() => onTogglePick(!picking)} aria-expanded={picking} title="Pick the path and value from a run's response">
          Pick from a response…
        </button>
        <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove expectation ${i + 1}`} onClick={onRemove}>
          Remove
        </button>
      </div>
      <div className="exp-fields">
        <ExpectationFields draft={draft} index={i} issues={issues} onChange={onChange} />
      </div>
      {issues.map((issue, j) => (
        <p key={j} className="field-error" role="alert">
          {issue.field ? <span className="mono">{issue.field}: </span> : null}
          {issue.message}
        </p>
      ))}
      {picking && (
        <PathPicker
          api={api}
          graph={graph}
          shownRun={shownRun}
          onClose={() => onTogglePick(false)}
          onPick={(picked, step) => {
            onChange(applyPick(draft, picked, step));
            onTogglePick(false);
          }}
        />
      )}
    </li>
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
