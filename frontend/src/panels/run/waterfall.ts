/**
 * The run's waterfall as a pure model: one bar per step call on a shared time axis, nested under
 * the node invocation that made it (and a `nodeName` step's node under that step), and the critical
 * path: the calls the run's end waited for. No DOM; `Waterfall.tsx` draws it, Vitest tests it.
 *
 * Times come from the step events the console already folded (`StepLine.fields.at`, the time of
 * the step's latest event, and `durationMs`): a finished call ran from `at - duration` to `at`; a
 * call still running from its `at` to `now`. Only the current attempt is drawn.
 *
 * The critical path is found without knowing the routers: within a node invocation, the call that
 * ended last is critical, then the call that ended last before it began (what it waited for), and
 * so on; a critical `nodeName` step makes the calls of the node it ran critical the same way. So
 * a Sequence's calls are all critical, an Ensemble's slowest branch only, a Switch's chosen step.
 */
import type { ConsoleState, StepLine } from "./console";
import { stepLines } from "./consoleViews";
import { stepPosition } from "./describe";

export interface WaterfallRow {
  /** A node row: `node:<attempt>:<invocation call id>`; a step row: its console line's key. */
  key: string;
  kind: "node" | "step";
  /** Nesting level: 0 for the root node, its steps 1, a `nodeName` step's node 2, … */
  depth: number;
  label: string;
  callId: string;
  node: string;
  routerType: string | null;
  /** The step (step rows only). */
  line: StepLine | null;
  status: string;
  /** Milliseconds from the waterfall's start; null for a step without a bar (skipped). */
  startMs: number | null;
  endMs: number | null;
  critical: boolean;
}

export interface Waterfall {
  rows: WaterfallRow[];
  /** Milliseconds from the first call's start to the last call's end. */
  totalMs: number;
  /** Where to draw the axis' ticks, in milliseconds. */
  ticks: number[];
  /** The critical URL steps in the order they ran (their positions, for a caption). */
  criticalPath: string[];
}

// Two calls are sequential when one ended before the other began; the engine's clock is one
// process's, so a microsecond covers rounding of the stored milliseconds.
const EPSILON_S = 1e-6;

interface Timed {
  line: StepLine;
  start: number | null;
  end: number | null;
}

function timing(line: StepLine, nowS: number): Timed {
  const at = typeof line.fields.at === "number" ? line.fields.at : null;
  if (at === null || line.status === "skipped") return { line, start: null, end: null };
  if (line.durationMs !== null) return { line, start: at - line.durationMs / 1000, end: at };
  if (line.status === "running") return { line, start: at, end: Math.max(at, nowS) };
  return { line, start: at, end: at }; // ended without a duration (the run closed it)
}

function invocationOf(callId: string): string {
  const cut = callId.lastIndexOf("/");
  return cut < 0 ? callId : callId.slice(0, cut);
}

/** Round tick spacing (1, 2 or 5 × 10^k ms) giving at most `most` intervals over `totalMs`. */
export function tickStep(totalMs: number, most = 4): number {
  if (!(totalMs > 0)) return 1;
  const raw = totalMs / most;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/**
 * The waterfall of `state`'s current attempt. `nowS` (seconds since the epoch) ends the bars of
 * calls still running.
 */
export function buildWaterfall(state: ConsoleState, nowS: number = Date.now() / 1000): Waterfall {
  const timed = stepLines(state)
    .filter((l) => l.attempt === state.attempt)
    .map((l) => timing(l, nowS));
  const byInvocation = new Map<string, Timed[]>();
  const childInvocations = new Map<string | null, string[]>();
  for (const t of timed) {
    const inv = invocationOf(t.line.callId);
    let list = byInvocation.get(inv);
    if (!list) {
      list = [];
      byInvocation.set(inv, list);
      const parent = t.line.parentCallId;
      const siblings = childInvocations.get(parent) ?? [];
      siblings.push(inv);
      childInvocations.set(parent, siblings);
    }
    list.push(t);
  }

  // The critical path, from the root invocations down.
  const critical = new Set<string>();
  const criticalInvocations = new Set<string>();
  const markInvocation = (inv: string, hops: number): void => {
    if (hops > byInvocation.size || criticalInvocations.has(inv)) return;
    criticalInvocations.add(inv);
    const calls = (byInvocation.get(inv) ?? []).filter((t) => t.start !== null && t.end !== null);
    let current: Timed | null = null;
    for (const t of calls) if (current === null || t.end! > current.end!) current = t;
    while (current !== null) {
      critical.add(current.line.key);
      if (current.line.stepKind === "node") for (const child of childInvocations.get(current.line.callId) ?? []) markInvocation(child, hops + 1);
      const begin: number = current.start!;
      let previous: Timed | null = null;
      for (const t of calls) if (t !== current && t.end! <= begin + EPSILON_S && (previous === null || t.end! > previous.end!)) previous = t;
      current = previous;
    }
  };
  for (const inv of childInvocations.get(null) ?? []) markInvocation(inv, 0);

  const starts = timed.filter((t) => t.start !== null).map((t) => t.start!);
  const ends = timed.filter((t) => t.end !== null).map((t) => t.end!);
  const t0 = starts.length ? Math.min(...starts) : 0;
  const totalMs = ends.length ? Math.max(0, (Math.max(...ends) - t0) * 1000) : 0;
  const ms = (s: number | null) => (s === null ? null : Math.max(0, (s - t0) * 1000));

  const rows: WaterfallRow[] = [];
  const emit = (inv: string, depth: number, hops: number): void => {
    const calls = byInvocation.get(inv);
    if (!calls || hops > byInvocation.size) return;
    const first = calls[0].line;
    const node = state.nodes[inv];
    const spans = calls.filter((t) => t.start !== null);
    const running = calls.some((t) => t.line.status === "running");
    const failed = calls.some((t) => t.line.status === "failed");
    rows.push({
      key: `node:${state.attempt}:${inv}`,
      kind: "node",
      depth,
      label: `${first.node}${node?.routerType ? ` (${node.routerType})` : ""}`,
      callId: inv,
      node: first.node,
      routerType: node?.routerType ?? null,
      line: null,
      status: node && node.attempt === state.attempt ? node.status : running ? "running" : failed ? "failed" : "ok",
      startMs: spans.length ? ms(Math.min(...spans.map((t) => t.start!))) : null,
      endMs: spans.length ? ms(Math.max(...spans.map((t) => t.end!))) : null,
      critical: criticalInvocations.has(inv),
    });
    for (const t of calls) {
      rows.push({
        key: t.line.key,
        kind: "step",
        depth: depth + 1,
        label: stepPosition(t.line),
        callId: t.line.callId,
        node: t.line.node,
        routerType: null,
        line: t.line,
        status: t.line.status,
        startMs: ms(t.start),
        endMs: ms(t.end),
        critical: critical.has(t.line.key),
      });
      for (const child of childInvocations.get(t.line.callId) ?? []) emit(child, depth + 2, hops + 1);
    }
  };
  for (const inv of childInvocations.get(null) ?? []) emit(inv, 0, 0);

  const step = tickStep(totalMs);
  const ticks: number[] = [];
  for (let x = 0; x <= totalMs + 1e-9 && ticks.length < 20; x += step) ticks.push(x);
  const criticalPath = rows
    .filter((r) => r.kind === "step" && r.critical && r.line?.stepKind !== "node")
    .sort((a, b) => (a.startMs ?? 0) - (b.startMs ?? 0))
    .map((r) => r.label);
  return { rows, totalMs, ticks, criticalPath };
}

/** Whether two rows' bars overlap in time (parallel calls). */
export function overlaps(a: WaterfallRow, b: WaterfallRow): boolean {
  if (a.startMs === null || a.endMs === null || b.startMs === null || b.endMs === null) return false;
  return a.startMs < b.endMs && b.startMs < a.endMs;
}
