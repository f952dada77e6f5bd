/**
 * Expectations as the editor handles them: a sentence for each (what the save-as-test dialog and
 * the case list show), and the drafts the expectation editor's form edits (every field as text)
 * with their conversion back to the document the API checks. The kinds and operators are those
 * of docs/graph-tests.md; the server decides what is valid, these only shape the input.
 */

export const KINDS = ["status", "body", "path", "route", "step", "latency"] as const;
export type Kind = (typeof KINDS)[number];
export const OPERATORS = ["equals", "not_equals", "exists", "missing", "matches", "gt", "lt", "approx", "contains"] as const;
export type Operator = (typeof OPERATORS)[number];
export const STEP_STATES = ["skipped", "not-reached", "error"] as const;

export type Expectation = Record<string, unknown>;

/** The kind an expectation document has, looked for in the server's order (path before step). */
const KIND_ORDER: Kind[] = ["path", "route", "step", "body", "latency", "status"];

export function kindOf(exp: unknown): Kind | null {
  if (exp === null || typeof exp !== "object" || Array.isArray(exp)) return null;
  return KIND_ORDER.find((k) => k in (exp as Expectation)) ?? null;
}

function short(value: unknown, width = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

const OPERATOR_WORDS: Record<Operator, string> = {
  equals: "equals",
  not_equals: "does not equal",
  exists: "exists",
  missing: "is missing",
  matches: "matches",
  gt: "is greater than",
  lt: "is less than",
  approx: "is about",
  contains: "contains",
};

/** One sentence saying what the expectation checks. */
export function describeExpectation(exp: unknown): string {
  const e = (exp ?? {}) as Expectation;
  switch (kindOf(exp)) {
    case "status":
      return `The final status is ${String(e.status)}`;
    case "body": {
      const ignore = Array.isArray(e.ignore) && e.ignore.length ? ` (ignoring ${e.ignore.join(", ")})` : "";
      return `${e.match === "subset" ? "The body contains" : "The body equals"} ${short(e.body)}${ignore}`;
    }
    case "path": {
      const op = OPERATORS.find((o) => o in e);
      const where = typeof e.step === "string" ? ` in step ${e.step}'s response` : "";
      if (!op) return `${String(e.path)}${where}: no operator`;
      const operand = op === "exists" || op === "missing" ? "" : op === "matches" ? ` /${String(e[op])}/` : ` ${short(e[op])}`;
      const tolerance = op === "approx" && typeof e.tolerance === "number" ? ` ± ${e.tolerance}` : "";
      return `${String(e.path)}${where} ${OPERATOR_WORDS[op]}${operand}${tolerance}`;
    }
    case "route":
      return e.took === null ? `Node ${String(e.route)} matched no step` : `Node ${String(e.route)} routed to step ${short(e.took)}`;
    case "step": {
      const s = e.status;
      const said = typeof s === "number" ? `answered ${s}` : s === "skipped" ? "was skipped" : s === "not-reached" ? "was not reached" : s === "error" ? "failed without a status" : `is ${short(s)}`;
      return `Step ${String(e.step)} ${said}`;
    }
    case "latency":
      return `The graph answered within ${String(e.latency)} ms`;
    default:
      return `Unrecognised: ${short(exp)}`;
  }
}

/** What the expectation editor's form holds: every field as the text in its input. */
export interface Draft {
  /** "json": a document the form does not model, edited as JSON text. */
  kind: Kind | "json";
  status: string;
  body: string;
  match: "exact" | "subset";
  ignore: string;
  path: string;
  step: string;
  operator: Operator;
  operand: string;
  tolerance: string;
  route: string;
  took: string;
  tookNothing: boolean;
  stepStatus: string;
  latency: string;
  json: string;
}

export function emptyDraft(kind: Draft["kind"] = "status"): Draft {
  return { kind, status: "200", body: "{}", match: "subset", ignore: "", path: "", step: "", operator: "equals", operand: "", tolerance: "", route: "", took: "", tookNothing: false, stepStatus: "200", latency: "1000", json: "{}" };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** An operand as text: a string that could be read as other JSON is quoted, so it reads back the same. */
export function operandText(value: unknown): string {
  return typeof value === "string" && !parses(value) ? value : JSON.stringify(value);
}

/** Operand text as a value: JSON when it parses (`1`, `"1"`, `{"a": 1}`), else the text itself. */
export function operandValue(text: string): unknown {
  const t = text.trim();
  return parses(t) ? (JSON.parse(t) as unknown) : text;
}

const MODELLED: Record<Kind, Set<string>> = {
  status: new Set(["status"]),
  body: new Set(["body", "match", "ignore"]),
  path: new Set(["path", "step", "tolerance", ...OPERATORS]),
  route: new Set(["route", "took"]),
  step: new Set(["step", "status"]),
  latency: new Set(["latency"]),
};

/** The form's draft of an expectation document (kind "json" for what the form cannot show whole). */
export function toDraft(exp: unknown): Draft {
  const kind = kindOf(exp);
  const e = (exp ?? {}) as Expectation;
  const raw = { ...emptyDraft("json"), json: JSON.stringify(exp, null, 2) ?? "null" };
  if (!kind || Object.keys(e).some((k) => !MODELLED[kind].has(k))) return raw;
  const d = emptyDraft(kind);
  switch (kind) {
    case "status":
      return typeof e.status === "number" ? { ...d, status: String(e.status) } : raw;
    case "body":
      if ((e.match !== undefined && e.match !== "exact" && e.match !== "subset") || (e.ignore !== undefined && !(Array.isArray(e.ignore) && e.ignore.every((x) => typeof x === "string")))) return raw;
      return { ...d, body: JSON.stringify(e.body, null, 2), match: e.match === "subset" ? "subset" : "exact", ignore: ((e.ignore as string[] | undefined) ?? []).join("\n") };
    case "path": {
      const ops = OPERATORS.filter((o) => o in e);
      if (ops.length !== 1 || typeof e.path !== "string" || (e.step !== undefined && typeof e.step !== "string")) return raw;
      const op = ops[0];
      if ((op === "exists" || op === "missing") && e[op] !== true) return raw;
      return { ...d, path: e.path, step: (e.step as string | undefined) ?? "", operator: op, operand: op === "exists" || op === "missing" ? "" : op === "matches" && typeof e[op] === "string" ? (e[op] as string) : operandText(e[op]), tolerance: e.tolerance === undefined ? "" : String(e.tolerance) };
    }
    case "route":
      if (typeof e.route !== "string" || !("took" in e)) return raw;
      return { ...d, route: e.route, took: e.took === null ? "" : String(e.took), tookNothing: e.took === null };
    case "step":
      return typeof e.step === "string" && (typeof e.status === "number" || typeof e.status === "string") ? { ...d, step: e.step, stepStatus: String(e.status) } : raw;
    case "latency":
      return typeof e.latency === "number" ? { ...d, latency: String(e.latency) } : raw;
  }
}

export type DraftResult = { ok: true; value: Expectation } | { ok: false; field: string; message: string };

function number(text: string, field: string, label: string): number | DraftResult {
  const t = text.trim();
  const n = Number(t);
  if (!t || !Number.isFinite(n)) return { ok: false, field, message: `${label} is a number` };
  return n;
}

/**
 * The expectation document a draft stands for, or the field that cannot be read (text where a
 * number belongs, JSON that does not parse). Ranges and references are left to the server.
 */
export function fromDraft(d: Draft): DraftResult {
  const fail = (field: string, message: string): DraftResult => ({ ok: false, field, message });
  switch (d.kind) {
    case "json": {
      if (!parses(d.json)) return fail("json", "not valid JSON");
      return { ok: true, value: JSON.parse(d.json) as Expectation };
    }
    case "status": {
      const n = number(d.status, "status", "status");
      return typeof n === "number" ? { ok: true, value: { status: n } } : n;
    }
    case "body": {
      if (!parses(d.body)) return fail("body", "the expected body is not valid JSON");
      const ignore = d.ignore.split("\n").map((x) => x.trim()).filter(Boolean);
      return { ok: true, value: { body: JSON.parse(d.body) as unknown, match: d.match, ...(ignore.length ? { ignore } : {}) } };
    }
    case "path": {
      if (!d.path.trim()) return fail("path", "path is a GJSON path, e.g. predictions.0.label");
      const value: Expectation = { path: d.path.trim(), ...(d.step.trim() ? { step: d.step.trim() } : {}) };
      const op = d.operator;
      if (op === "exists" || op === "missing") value[op] = true;
      else if (op === "matches") value[op] = d.operand;
      else if (op === "gt" || op === "lt" || op === "approx") {
        const n = number(d.operand, op, op);
        if (typeof n !== "number") return n;
        value[op] = n;
      } else value[op] = operandValue(d.operand);
      if (op === "approx" && d.tolerance.trim()) {
        const t = number(d.tolerance, "tolerance", "tolerance");
        if (typeof t !== "number") return t;
        value.tolerance = t;
      }
      return { ok: true, value };
    }
    case "route": {
      if (!d.route.trim()) return fail("route", "route names a Switch or Splitter node");
      const took = d.tookNothing ? null : /^\d+$/.test(d.took.trim()) ? Number(d.took.trim()) : d.took.trim();
      if (took === "") return fail("took", "name the step it routed to (or tick “matched nothing”)");
      return { ok: true, value: { route: d.route.trim(), took } };
    }
    case "step": {
      const s = d.stepStatus.trim();
      return { ok: true, value: { step: d.step.trim(), status: /^\d+$/.test(s) ? Number(s) : s } };
    }
    case "latency": {
      const n = number(d.latency, "latency", "latency");
      return typeof n === "number" ? { ok: true, value: { latency: n } } : n;
    }
  }
}

/**
 * A value picked in a JSON tree, into a draft: a path expectation on that path (and step, for a
 * step's response) expecting the value. A path draft keeps its operator where it compares with a
 * value; exists and missing keep theirs and only take the path.
 */
export function applyPick(d: Draft, pick: { path: string; value: unknown }, step: string | null): Draft {
  const base = d.kind === "path" ? d : { ...emptyDraft("path") };
  const keepsOperand = base.operator === "exists" || base.operator === "missing";
  const operand = keepsOperand ? "" : base.operator === "matches" ? (typeof pick.value === "string" ? pick.value : JSON.stringify(pick.value)) : operandText(pick.value);
  return { ...base, path: pick.path, step: step ?? "", operand };
}

/** A server issue (400 of the tests API), as the editor pins it. */
export interface CaseIssue {
  message: string;
  code?: string;
  expectation?: number;
  field?: string;
  path?: string;
  line?: number;
  column?: number;
}

/** The issues of one expectation, and those of the case itself (name, request, …). */
export function pinIssues(issues: readonly CaseIssue[]): { byExpectation: Map<number, CaseIssue[]>; rest: CaseIssue[] } {
  const byExpectation = new Map<number, CaseIssue[]>();
  const rest: CaseIssue[] = [];
  for (const issue of issues) {
    const at = typeof issue.expectation === "number" ? issue.expectation : /^expectations\[(\d+)\]/.exec(issue.path ?? "")?.[1];
    if (at === undefined) rest.push(issue);
    else {
      const n = Number(at);
      byExpectation.set(n, [...(byExpectation.get(n) ?? []), issue]);
    }
  }
  return { byExpectation, rest };
}

/** The next free "name (copy)", "name (copy 2)", … among `taken`. */
export function copyName(name: string, taken: readonly string[]): string {
  const base = name.replace(/ \(copy(?: \d+)?\)$/, "");
  for (let i = 1; ; i++) {
    const candidate = i === 1 ? `${base} (copy)` : `${base} (copy ${i})`;
    if (!taken.includes(candidate)) return candidate;
  }
}
