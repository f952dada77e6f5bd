/**
 * The Load tests panel's pure part: what a load test's summary holds, its live progress folded
 * from its events (as the run console folds a run's), and the budget warnings by field. No DOM.
 */
import type { LoadProgress } from "../../generated/events";
import type { Issue } from "../../graph/types";

export interface HistogramBin {
  from_ms: number;
  to_ms: number;
  count: number;
}

/** One measured series: the whole graph, or one step (`node/step`). */
export interface Series {
  count: number;
  mean_ms: number | null;
  min_ms: number | null;
  max_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  histogram: HistogramBin[];
  statuses: Record<string, number>;
  errors: number;
  error_rate: number;
}

export interface LoadSummary {
  completed: number;
  elapsed_s: number;
  throughput_rps: number | null;
  errors: number;
  error_rate: number;
  graph: Series;
  steps: Record<string, Series>;
}

export interface BudgetCheckRow {
  target: string;
  budget_ms: number;
  measured_ms: number | null;
  passed: boolean | null;
}

export interface CompareRow {
  name: string;
  a: { count: number; p50_ms: number | null; p95_ms: number | null; p99_ms: number | null; error_rate: number } | null;
  b: CompareRow["a"];
  p95_ms_delta: number | null;
  p95_ms_ratio: number | null;
  slower: boolean;
  faster: boolean;
}

export interface Comparison {
  graph: CompareRow;
  throughput_rps: [number | null, number | null];
  error_rate: [number | null, number | null];
  steps: CompareRow[];
  slower_steps: string[];
}

export const TERMINAL_LOAD = ["finished", "stopped", "cancelled", "failed"] as const;

export function isTerminalLoad(status: string | undefined): boolean {
  return (TERMINAL_LOAD as readonly string[]).includes(status ?? "");
}

/** A summary as the server sends it, or null while there is none yet (a queued load test). */
export function summaryOf(value: unknown): LoadSummary | null {
  if (!value || typeof value !== "object") return null;
  const s = value as Partial<LoadSummary>;
  return typeof s.completed === "number" && s.graph && typeof s.graph === "object" ? (s as LoadSummary) : null;
}

/** What the progress bar shows. */
export interface LiveLoad {
  id: string;
  status: string;
  lastSeq: number;
  progress: LoadProgress;
  budgetPassed: boolean | null;
  error: string | null;
}

export function liveOf(load: { id: string; status?: string; requests: number; completed?: number; errors?: number; budget_passed?: boolean | null; error?: string }): LiveLoad {
  return {
    id: load.id,
    status: load.status ?? "queued",
    lastSeq: 0,
    progress: { requests: load.requests, completed: load.completed ?? 0, errors: load.errors ?? 0, elapsed_s: 0, throughput_rps: null, p50_ms: null, p95_ms: null },
    budgetPassed: load.budget_passed ?? null,
    error: load.error || null,
  };
}

/** Folds one stored event into the live state; events at or before `lastSeq` change nothing. */
export function reduceLoadEvent(state: LiveLoad, event: { seq: number; type: string; data: Record<string, unknown> }): LiveLoad {
  if (event.seq <= state.lastSeq) return state;
  const next = { ...state, lastSeq: event.seq };
  switch (event.type) {
    case "load.started":
      return { ...next, status: "running" };
    case "load.progress":
      return { ...next, status: "running", progress: event.data.progress as LoadProgress };
    case "load.finished":
      return {
        ...next,
        status: String(event.data.status),
        progress: (event.data.progress as LoadProgress | undefined) ?? state.progress,
        budgetPassed: (event.data.budget_passed as boolean | null | undefined) ?? null,
        error: (event.data.error as string | null | undefined) ?? null,
      };
    default:
      return next;
  }
}

/** The fraction done, 0..1, for the progress bar. */
export function fractionDone(progress: LoadProgress): number {
  return progress.requests > 0 ? Math.min(1, progress.completed / progress.requests) : 0;
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? "–" : `${(value * 100).toFixed(value > 0 && value < 0.01 ? 2 : 1)} %`;
}

/** The graph row first, then each step by name. */
export function seriesRows(summary: LoadSummary): { name: string; series: Series }[] {
  return [{ name: "whole graph", series: summary.graph }, ...Object.entries(summary.steps).map(([name, series]) => ({ name, series }))];
}

/** The budget check's warnings by the manifest field they are pinned to (`spec.routerTimeouts.serverWrite`). */
export function warningsByField(issues: Issue[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const issue of issues) {
    if (!issue.path) continue;
    const before = out.get(issue.path);
    out.set(issue.path, before ? `${before} ${issue.message}` : issue.message);
  }
  return out;
}
