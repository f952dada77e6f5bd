/**
 * Questions about a console state (console.ts): its step calls, how far the run got, which
 * failures it went on from and why it failed, the title's release, a step's other fields.
 */
import type { RouteDecision } from "../../graph/runMarks";
import type { ConsoleState, RouteLine, StepLine } from "./console";
import { stepPosition } from "./describe";
import { str } from "./events";

/**
 * The step call `callId` of `attempt`, if the console has it. Call ids are short and carry no path
 * (`root/1`, `b#3/0`: trace.py); the nesting is in each call's `parentCallId`, the `nodeName` step
 * that led into its node.
 */
export function stepByCallId(s: ConsoleState, attempt: number, callId: string | null): StepLine | null {
  if (callId === null) return null;
  const at = s.index[`${attempt}:${callId}`];
  const line = at !== undefined ? s.lines[at] : undefined;
  return line && line.kind === "step" ? line : null;
}

/** The `nodeName` steps that led to step call `line`, innermost first. */
export function* callersOf(state: ConsoleState, line: StepLine): Generator<StepLine> {
  let parent = stepByCallId(state, line.attempt, line.parentCallId);
  // A parent starts before its children, so the chain ends; the bound only guards odd input.
  for (let hops = 0; parent && hops <= state.lines.length; hops++) {
    yield parent;
    parent = stepByCallId(state, parent.attempt, parent.parentCallId);
  }
}

export function stepLines(state: ConsoleState): StepLine[] {
  return state.lines.filter((l): l is StepLine => l.kind === "step");
}

export interface Progress {
  done: number;
  running: number;
  failed: number;
  skipped: number;
}

export function progress(state: ConsoleState): Progress {
  const p: Progress = { done: 0, running: 0, failed: 0, skipped: 0 };
  for (const l of stepLines(state)) {
    if (l.attempt !== state.attempt) continue;
    if (l.status === "running") p.running++;
    else if (l.status === "skipped") p.skipped++;
    else {
      p.done++;
      if (l.status === "failed") p.failed++;
    }
  }
  return p;
}

/** The call id of the node invocation a step call belongs to (`match#2/1` -> `match#2`). */
export function nodeCallOf(callId: string): string {
  const at = callId.lastIndexOf("/");
  return at < 0 ? callId : callId.slice(0, at);
}

/**
 * Whether a failed step was a failure the graph went on from (a Soft dependency,
 * docs/router-semantics.md, Sequence): its node still finished `ok`, or its Sequence called a later step. A
 * step that has not failed, or after which its node stopped, is not.
 */
export function continuedAfterFailure(state: ConsoleState, line: StepLine): boolean {
  if (line.status !== "failed") return false;
  const nodeCall = nodeCallOf(line.callId);
  const node = state.nodes[nodeCall];
  if (node && node.attempt === line.attempt && node.status === "ok") return true;
  // A Sequence that called a later step after this one went on, whatever it answered at the end.
  return stepLines(state).some(
    (l) => l.attempt === line.attempt && l.status !== "skipped" && nodeCallOf(l.callId) === nodeCall && l.stepIndex !== null && line.stepIndex !== null && l.stepIndex > line.stepIndex && l.seq > line.seq && node?.routerType === "Sequence",
  );
}

/** The failed step calls of the current attempt the graph went on from, in the order they ran. */
export function softFailures(state: ConsoleState): StepLine[] {
  return stepLines(state).filter((l) => l.attempt === state.attempt && continuedAfterFailure(state, l));
}

function answered(line: StepLine): string {
  return line.statusCode !== null ? `answered ${line.statusCode}` : `failed: ${line.error ?? "no response"}`;
}

/**
 * Why a run failed or was cancelled, in one sentence; null when it did not. It names the first
 * failure (in the order the calls ran), since later ones are usually its consequences.
 */
export function failureCause(state: ConsoleState): string | null {
  const f = state.finished;
  if (!f || f.status === "succeeded") return null;
  if (f.error) return f.error;
  const current = state.lines.filter((l) => !("attempt" in l) || l.attempt === state.attempt);
  const first = current.find((l): l is StepLine => l.kind === "step" && l.status === "failed");
  const stops = current.filter((l): l is RouteLine => l.kind === "route" && (l.decision.router === "Sequence" || l.decision.router === "Ensemble"));
  if (first) {
    const stop = stops.find((r) => {
      const d = r.decision as Extract<RouteDecision, { router: "Sequence" | "Ensemble" }>;
      return `${r.callId}/${d.stepIndex}` === first.callId && (r.decision.router === "Ensemble" || (d as { reason?: string }).reason === "hard-failure");
    });
    if (stop) return `${stepPosition(first)} (a Hard dependency) ${answered(first)}, so ${stop.node} stopped there.`;
    const soft = continuedAfterFailure(state, first) ? " (a Soft dependency: the graph went on)" : "";
    return `${stepPosition(first)} ${answered(first)} first${soft}.`;
  }
  if (stops.length) return stops[0].text;
  if (f.status === "cancelled") return "The run was cancelled.";
  return f.statusCode !== null ? `The graph answered ${f.statusCode}.` : "The run failed.";
}

/**
 * The console title's mention of the KServe release a run used: from its `run.queued` event, else
 * from the run's config snapshot (`run.config`, as the run API shows it); empty for runs made before
 * releases (and while neither has arrived).
 */
export function releaseTitle(s: ConsoleState, run: { config?: unknown } | null | undefined): string {
  const config = run?.config;
  const snapshot = config !== null && typeof config === "object" ? str((config as Record<string, unknown>).kserve_version) : null;
  const release = s.kserveVersion ?? snapshot;
  return release ? ` · KServe ${release}` : "";
}

// The fields of a step's events the step view shows in its own places (the rest it lists as they came).
const SHOWN_STEP_FIELDS = new Set([
  // where the step ran (added by the worker to every trace event)
  "attempt", "call_id", "parent_call_id", "node", "step_index", "step_name", "target", "at",
  // step.started, step.finished, step.skipped
  "kind", "method", "url", "headers", "request", "condition", "status", "response", "content_type", "duration_ms", "outcome", "error", "reason",
]);

/** The step's trace fields the view has no place of its own for, by name: shown as they came. */
export function otherStepFields(line: StepLine): [string, unknown][] {
  return Object.entries(line.fields)
    .filter(([name, value]) => !SHOWN_STEP_FIELDS.has(name) && value !== null && value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
}
