/**
 * Two runs side by side, as pure data: their steps aligned by their position in the graph (the
 * chain of `nodeName` steps that led to them, read from each step's `parent_call_id`, then its node
 * and index) with each side's outcome, latency and output, and whether the outputs differ. Call
 * ids themselves (`match#2/1`) number node invocations in the order they started, which parallel
 * branches may change from run to run. Only each run's last attempt counts (earlier attempts were
 * abandoned).
 */
import type { Run, RunStepRow } from "../../api";

export interface CompareSide {
  outcome: string;
  statusCode: number | null;
  durationMs: number | null;
  output: string | null;
  error: string;
}

export interface CompareRow {
  /** The step's position, the same in both runs (a short key, not for display). */
  position: string;
  callId: string;
  node: string;
  stepIndex: number | null;
  stepName: string | null;
  a: CompareSide | null;
  b: CompareSide | null;
  outputDiffers: boolean;
  outcomeDiffers: boolean;
}

function side(step: RunStepRow): CompareSide {
  return { outcome: step.outcome, statusCode: step.status_code, durationMs: step.duration_ms, output: normalised(step.response?.body ?? null), error: step.error };
}

/** JSON text re-serialised with sorted keys, so key order alone is not a difference. */
export function normalised(text: string | null): string | null {
  if (text === null) return null;
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

function lastAttempt(run: Run): RunStepRow[] {
  const steps = run.steps ?? [];
  const attempt = Math.max(run.attempt || 0, ...steps.map((s) => s.attempt));
  return steps.filter((s) => s.attempt === attempt);
}

/**
 * Each step's position key: a number standing for (its parent step's position, its node, its
 * index), numbered through `known`, which both runs share, so the same position gets the same key
 * in both. Steps come in the order they started, so a parent's key is known before its children's.
 */
function positions(steps: RunStepRow[], known: Map<string, string>): string[] {
  const byCall = new Map<string, string>();
  return steps.map((step) => {
    const parent = step.parent_call_id === null ? "" : (byCall.get(step.parent_call_id) ?? `?${step.parent_call_id}`);
    const path = `${parent}|${step.node}/${step.step_index ?? ""}`;
    let position = known.get(path);
    if (position === undefined) {
      position = String(known.size);
      known.set(path, position);
    }
    byCall.set(step.call_id, position);
    return position;
  });
}

export function compareRuns(a: Run, b: Run): CompareRow[] {
  const rows = new Map<string, CompareRow>();
  const order: string[] = [];
  const known = new Map<string, string>();
  const add = (step: RunStepRow, position: string, which: "a" | "b") => {
    let row = rows.get(position);
    if (!row) {
      row = { position, callId: step.call_id, node: step.node, stepIndex: step.step_index, stepName: step.step_name, a: null, b: null, outputDiffers: false, outcomeDiffers: false };
      rows.set(position, row);
      order.push(position);
    }
    row[which] = side(step);
  };
  for (const which of ["a", "b"] as const) {
    const steps = lastAttempt(which === "a" ? a : b);
    const keys = positions(steps, known);
    steps.forEach((s, i) => add(s, keys[i], which));
  }
  return order.map((id) => {
    const row = rows.get(id)!;
    const outcomeDiffers = (row.a?.outcome ?? null) !== (row.b?.outcome ?? null) || (row.a?.statusCode ?? null) !== (row.b?.statusCode ?? null);
    const outputDiffers = (row.a?.output ?? null) !== (row.b?.output ?? null);
    return { ...row, outcomeDiffers, outputDiffers };
  });
}

/** The final answers of two runs compared the same way as step outputs. */
export function sameResponse(a: Run, b: Run): boolean {
  const text = (r: Run) => (r.response?.body === undefined || r.response?.body === null ? null : typeof r.response.body === "string" ? normalised(r.response.body) : JSON.stringify(sortKeys(r.response.body)));
  return a.response?.status_code === b.response?.status_code && text(a) === text(b);
}
