/**
 * A suite run as the Tests panel follows it: the pure state folded from the suite run object
 * (`GET /api/suite-runs/{id}/`) and its events (`suite.started`, `case.started`,
 * `case.finished`, `suite.finished`), as the run console folds a run's. Events are applied once,
 * in order of their ids; a repeated one (after a reconnection) changes nothing.
 */

import type { components } from "../generated/api";
import type { BudgetCheck, BudgetVerdict, ExpectationFailure, SuiteCounts as GeneratedCounts } from "../generated/events";

type Schemas = components["schemas"];

export type SuiteStatus = Schemas["SuiteRunStatusEnum"];
export type CaseOutcome = Schemas["SuiteCaseResultOutcomeEnum"];

/** A suite run's counts (`SuiteCounts` of the event declaration). */
export type SuiteCounts = GeneratedCounts;

/** One failed expectation: which, why, and a JSON diff of expected against actual. */
export type Failure = Omit<ExpectationFailure, "diff" | "passed"> & { diff?: DiffEntry[] };

/** One difference: `changed` (both sides), `missing` (expected, not there), `unexpected`. */
export interface DiffEntry {
  path: string;
  op: string;
  expected?: unknown;
  actual?: unknown;
}

/** A case's result in a suite run (`SuiteCaseResult`, its outcome and failures read as above). */
export type CaseResult = Omit<Schemas["SuiteCaseResult"], "outcome" | "failures" | "duration_ms" | "error" | "status_code"> & {
  outcome: CaseOutcome;
  failures: Failure[];
  duration_ms: number | null;
  error: string | null;
};

/** A suite run object as the API answers it (`SuiteRun`; summaries lack `results`). */
export type SuiteRun = Omit<Schemas["SuiteRun"], "status" | "results" | "duration_ms" | "started_at" | "finished_at" | "concurrency" | "created_by" | "budgets"> & {
  /** The graph's latency budgets judged on the cases (`{}` or absent: none stated, or not finished). */
  budgets?: unknown;
  status: SuiteStatus;
  duration_ms: number | null;
  started_at: string | null;
  finished_at: string | null;
  results?: CaseResult[];
};

export interface SuiteEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface SuiteProgress {
  id: string;
  version: number;
  environment: string | null;
  status: SuiteStatus;
  counts: SuiteCounts;
  results: CaseResult[];
  lastSeq: number;
  durationMs: number | null;
  /** The latency budgets' verdict once the suite run ended (null: the graph states none). */
  budgets: BudgetVerdict | null;
}

export const TERMINAL: readonly SuiteStatus[] = ["passed", "failed", "error", "cancelled"];

export function isTerminalSuite(status: SuiteStatus): boolean {
  return TERMINAL.includes(status);
}

export function progressOf(run: SuiteRun): SuiteProgress {
  return { id: run.id, version: run.version, environment: run.environment, status: run.status, counts: { ...run.counts }, results: (run.results ?? []).map((r) => ({ ...r, failures: r.failures ?? [] })), lastSeq: 0, durationMs: run.duration_ms, budgets: budgetVerdict(run.budgets) };
}

function budgetCheck(v: unknown): BudgetCheck | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const budget = num(o.budget_ms);
  if (typeof o.target !== "string" || budget === null) return null;
  return { target: o.target, budget_ms: budget, measured_ms: num(o.measured_ms), passed: typeof o.passed === "boolean" ? o.passed : null };
}

/** A budget verdict (`{passed, checks}`) as the API or `suite.finished` gives it; null for none. */
export function budgetVerdict(v: unknown): BudgetVerdict | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const checks = Array.isArray(o.checks) ? o.checks.map(budgetCheck).filter((c): c is BudgetCheck => c !== null) : [];
  if (checks.length === 0) return null;
  return { passed: typeof o.passed === "boolean" ? o.passed : null, checks };
}

/** A budget's line: "p95 of root/cat: 41.50 ms, budget 120 ms". */
export function budgetText(c: BudgetCheck): string {
  const measured = c.measured_ms === null ? "not measured (never called)" : `${c.measured_ms.toFixed(2)} ms`;
  return `p95 of ${c.target}: ${measured}, budget ${c.budget_ms} ms`;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function counts(v: unknown, before: SuiteCounts): SuiteCounts {
  if (!v || typeof v !== "object") return before;
  const o = v as Record<string, unknown>;
  return { total: num(o.total) ?? before.total, passed: num(o.passed) ?? 0, failed: num(o.failed) ?? 0, error: num(o.error) ?? 0, cancelled: num(o.cancelled) ?? 0, finished: num(o.finished) ?? 0 };
}

function withResult(results: CaseResult[], id: number, name: string, change: Partial<CaseResult>): CaseResult[] {
  const at = results.findIndex((r) => r.case === id);
  if (at < 0) return [...results, { case: id, name, outcome: "pending", run: null, duration_ms: null, failures: [], error: null, ...change }];
  return results.map((r, i) => (i === at ? { ...r, ...change } : r));
}

/** The state after one event (the same object when the event was seen before or is unknown). */
export function reduceSuiteEvent(state: SuiteProgress, event: SuiteEvent): SuiteProgress {
  if (event.seq <= state.lastSeq) return state;
  const d = event.data;
  const base = { ...state, lastSeq: event.seq };
  const caseId = num(d.case);
  const name = typeof d.name === "string" ? d.name : `case ${caseId ?? "?"}`;
  switch (event.type) {
    case "suite.started":
      return { ...base, status: isTerminalSuite(state.status) ? state.status : "running", counts: { ...state.counts, total: num(d.total) ?? state.counts.total } };
    case "case.started":
      if (caseId === null) return base;
      return { ...base, status: isTerminalSuite(state.status) ? state.status : "running", results: withResult(state.results, caseId, name, { outcome: "running", run: typeof d.run === "string" ? d.run : null }) };
    case "case.finished": {
      if (caseId === null) return base;
      const outcome = (typeof d.outcome === "string" ? d.outcome : "error") as CaseOutcome;
      return {
        ...base,
        counts: counts(d.counts, state.counts),
        results: withResult(state.results, caseId, name, {
          outcome,
          run: typeof d.run === "string" ? d.run : null,
          duration_ms: num(d.duration_ms),
          failures: Array.isArray(d.failures) ? (d.failures as Failure[]) : [],
          error: typeof d.error === "string" ? d.error : null,
        }),
      };
    }
    case "suite.finished":
      return { ...base, status: (typeof d.status === "string" ? d.status : "error") as SuiteStatus, counts: counts(d.counts, state.counts), durationMs: num(d.duration_ms), budgets: budgetVerdict(d.budgets) };
    default:
      return base;
  }
}

/** The share of cases finished, 0..1 (0 while the total is unknown). */
export function fraction(c: SuiteCounts): number {
  return c.total > 0 ? Math.min(1, c.finished / c.total) : 0;
}

/** "7/10 · 5 passed · 1 failed · 1 error". */
export function countsText(c: SuiteCounts): string {
  const parts = [`${c.finished}/${c.total}`, `${c.passed} passed`, `${c.failed} failed`, `${c.error} error${c.error === 1 ? "" : "s"}`];
  if (c.cancelled) parts.push(`${c.cancelled} cancelled`);
  return parts.join(" · ");
}

/** Failed and errored cases first (the ones to look at), then the rest in their order. */
export function resultsToShow(results: readonly CaseResult[]): CaseResult[] {
  const rank = (o: CaseOutcome) => (o === "failed" ? 0 : o === "error" ? 1 : 2);
  return results.map((r, i) => [r, i] as const).sort((a, b) => rank(a[0].outcome) - rank(b[0].outcome) || a[1] - b[1]).map(([r]) => r);
}

/** A version's green state in a few words: "2/2 passed · local", "1/2 failed", "running". */
/**
 * A suite result in a few words: its verdict and counts, where it ran, whether it ran older cases,
 * and whether the export gate does not trust it (`gate: false`: not run by the graph's owner or an
 * editor in an environment the graph trusts).
 */
export function suiteLabel(tests: { status: SuiteStatus; counts: Record<string, number>; environment: string | null; current: boolean; gate?: boolean }): string {
  const c = tests.counts;
  const total = c.total ?? 0;
  const head =
    tests.status === "passed"
      ? `${c.passed ?? 0}/${total} passed`
      : tests.status === "failed"
        ? `${c.failed ?? 0}/${total} failed`
        : tests.status === "error"
          ? `${c.error ?? 0}/${total} errored`
          : tests.status === "cancelled"
            ? `cancelled at ${c.finished ?? 0}/${total}`
            : tests.status;
  return `${head}${tests.environment ? ` · ${tests.environment}` : ""}${tests.current ? "" : " · older cases"}${tests.gate === false ? " · not trusted" : ""}`;
}

/** The least a forced export's reason holds, in visible characters (the server's REASON_MIN_VISIBLE). */
export const REASON_MIN_VISIBLE = 8;

/** The characters of `text` that print (letters, digits, punctuation, symbols), as the server counts them. */
export function visibleLength(text: string): number {
  return (text.match(/[\p{L}\p{N}\p{P}\p{S}]/gu) ?? []).length;
}
