/**
 * Two runs side by side, as pure data: their steps aligned by `call_id` (the same position in the
 * graph, e.g. `root/2>match/1`) with each side's outcome, latency and output, and whether the
 * outputs differ. Only each run's last attempt counts (earlier attempts were abandoned).
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

export function compareRuns(a: Run, b: Run): CompareRow[] {
  const rows = new Map<string, CompareRow>();
  const order: string[] = [];
  const add = (step: RunStepRow, which: "a" | "b") => {
    let row = rows.get(step.call_id);
    if (!row) {
      row = { callId: step.call_id, node: step.node, stepIndex: step.step_index, stepName: step.step_name, a: null, b: null, outputDiffers: false, outcomeDiffers: false };
      rows.set(step.call_id, row);
      order.push(step.call_id);
    }
    row[which] = side(step);
  };
  for (const s of lastAttempt(a)) add(s, "a");
  for (const s of lastAttempt(b)) add(s, "b");
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
