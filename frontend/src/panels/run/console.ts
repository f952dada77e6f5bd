/**
 * The run console as a pure model: a run's events (events.ts reads them) folded into console
 * lines, node results, route decisions and the final outcome with the graph's answer. The same
 * reducer takes them live (SSE) and replayed (`GET /api/runs/{id}/events/?format=json`). No DOM,
 * no React: the panel renders a `ConsoleState`, asks consoleViews.ts about it, the canvases draw
 * its marks (consoleMarks.ts), and Vitest tests them all.
 *
 * Events are applied exactly once and in `seq` order: a repeated `seq` is dropped (a reconnect may
 * resend what was already shown) and an event that arrives after a gap waits in `pending` until
 * the missing ones arrive (`hasGap` tells the stream to reopen from `lastSeq`).
 */
import type { BodyView, Run, RunStatus } from "../../api";
import type { RunResponse } from "../../generated/events";
import type { ConditionResult, NodeStatus, RouteDecision, StepStatus } from "../../graph/runMarks";
import { stepByCallId } from "./consoleViews";
import { describeRoute } from "./describe";
import { bodyView, conditionResult, num, pairs, routeDecision, runResponse, str, type RunEventMsg } from "./events";

export interface StepLine {
  kind: "step";
  key: string;
  seq: number;
  attempt: number;
  callId: string;
  parentCallId: string | null;
  node: string;
  stepIndex: number | null;
  stepName: string | null;
  /** How many `nodeName` hops lie between the root and this step (for indentation). */
  depth: number;
  stepKind: string;
  method: string | null;
  target: string | null;
  headers: [string, string][];
  status: StepStatus;
  outcome: string | null;
  statusCode: number | null;
  durationMs: number | null;
  contentType: string | null;
  request: BodyView | null;
  response: BodyView | null;
  error: string | null;
  skipReason: string | null;
  condition: ConditionResult | null;
  /**
   * Every field of the step's events (`step.started`, then `step.finished` or `step.skipped`) as
   * they came: a field the engine adds reaches the step view through here with no other change.
   */
  fields: Record<string, unknown>;
}

export interface RouteLine {
  kind: "route";
  key: string;
  seq: number;
  attempt: number;
  callId: string;
  node: string;
  decision: RouteDecision;
  text: string;
}

export interface NoteLine {
  kind: "note";
  key: string;
  seq: number;
  level: "info" | "warn" | "error";
  text: string;
}

export type ConsoleLine = StepLine | RouteLine | NoteLine;

export interface NodeResult {
  callId: string;
  node: string;
  attempt: number;
  routerType: string | null;
  status: NodeStatus;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  output: BodyView | null;
}

export interface FinishInfo {
  status: RunStatus;
  statusCode: number | null;
  contentType: string | null;
  error: string;
  durationMs: number | null;
  /** The graph's answer as the run API shows it; null when the run ended without one. */
  response: RunResponse | null;
  /** What the engine could not apply as configured (a header pattern it skipped, say). */
  warnings: string[];
}

export interface ConsoleState {
  runId: string | null;
  /** Every event up to this `seq` has been applied (none after it). */
  lastSeq: number;
  /** Events that came after a gap, sorted by `seq`. */
  pending: RunEventMsg[];
  status: RunStatus | null;
  attempt: number;
  version: number | null;
  environment: string | null;
  /** The KServe release whose router runs it (from `run.queued`; null for runs made before releases). */
  kserveVersion: string | null;
  queuedAt: string | null;
  startedAt: string | null;
  cancelRequested: boolean;
  lines: ConsoleLine[];
  /** `lines` index by line key. */
  index: Record<string, number>;
  nodes: Record<string, NodeResult>;
  routes: Record<string, RouteDecision>;
  finished: FinishInfo | null;
}

export function emptyConsole(runId: string | null = null): ConsoleState {
  return {
    runId,
    lastSeq: 0,
    pending: [],
    status: null,
    attempt: 0,
    version: null,
    environment: null,
    kserveVersion: null,
    queuedAt: null,
    startedAt: null,
    cancelRequested: false,
    lines: [],
    index: {},
    nodes: {},
    routes: {},
    finished: null,
  };
}

export const TERMINAL: readonly RunStatus[] = ["succeeded", "failed", "cancelled"];

export function isTerminal(status: RunStatus | null | undefined): boolean {
  return !!status && TERMINAL.includes(status);
}

export function hasGap(state: ConsoleState): boolean {
  return state.pending.length > 0;
}

/** The status a finished step or node shows for an engine outcome (trace.py). */
export function statusOfOutcome(outcome: string | null): StepStatus {
  if (outcome === "ok") return "ok";
  if (outcome === "cancelled") return "cancelled";
  return "failed";
}

/** How deep a step call nests: one more than the `nodeName` step that led into its node. */
function depthBelow(s: ConsoleState, attempt: number, parentCallId: string | null): number {
  const parent = stepByCallId(s, attempt, parentCallId);
  return parent ? parent.depth + 1 : 0;
}

// ---- the reducer ------------------------------------------------------------------------------

/**
 * The arrays and maps that the batch being reduced (`reduceEvents`) made itself, and may therefore
 * change in place: a state passed in is never changed, but a batch of 30,000 events copies its
 * lines and maps once, not once per event (which made replaying a long run quadratic).
 */
let batchOwned: WeakSet<object> | null = null;

function owned<T extends object>(value: T, copy: (v: T) => T): T {
  if (batchOwned?.has(value)) return value;
  const made = copy(value);
  batchOwned?.add(made);
  return made;
}

const copyArray = <T>(a: T[]): T[] => a.slice();
const copyRecord = <T>(o: Record<string, T>): Record<string, T> => ({ ...o });

function putLine(s: ConsoleState, line: ConsoleLine): ConsoleState {
  const at = s.index[line.key];
  const lines = owned(s.lines, copyArray);
  if (at !== undefined) {
    lines[at] = line;
    return { ...s, lines };
  }
  const index = owned(s.index, copyRecord);
  index[line.key] = lines.length;
  lines.push(line);
  return { ...s, lines, index };
}

function putRecord<T>(record: Record<string, T>, key: string, value: T): Record<string, T> {
  const next = owned(record, copyRecord);
  next[key] = value;
  return next;
}

function stepLine(s: ConsoleState, e: RunEventMsg, attempt: number): StepLine {
  const d = e.data;
  const callId = str(d.call_id) ?? `?${e.seq}`;
  const key = `${attempt}:${callId}`;
  const at = s.index[key];
  const existing = at !== undefined ? (s.lines[at] as StepLine) : null;
  if (existing) return existing;
  return {
    kind: "step",
    key,
    seq: e.seq,
    attempt,
    callId,
    parentCallId: str(d.parent_call_id),
    node: str(d.node) ?? "",
    stepIndex: num(d.step_index),
    stepName: str(d.step_name),
    depth: depthBelow(s, attempt, str(d.parent_call_id)),
    stepKind: "",
    method: null,
    target: str(d.target),
    headers: [],
    status: "running",
    outcome: null,
    statusCode: null,
    durationMs: null,
    contentType: null,
    request: null,
    response: null,
    error: null,
    skipReason: null,
    condition: null,
    fields: {},
  };
}

function note(s: ConsoleState, e: RunEventMsg, level: NoteLine["level"], text: string): ConsoleState {
  return putLine(s, { kind: "note", key: `note:${e.seq}`, seq: e.seq, level, text });
}

/** Ends whatever is still running when the run ends (the worker closes them the same way). */
function closeRunning(s: ConsoleState, status: RunStatus, error: string): ConsoleState {
  const stepStatus: StepStatus = status === "cancelled" ? "cancelled" : "failed";
  let changed = false;
  const lines = s.lines.map((l) => {
    if (l.kind !== "step" || l.status !== "running") return l;
    changed = true;
    return { ...l, status: stepStatus, error: l.error ?? (error || (status === "cancelled" ? "cancelled" : "the run ended")) };
  });
  const nodes: Record<string, NodeResult> = {};
  for (const [k, n] of Object.entries(s.nodes)) nodes[k] = n.status === "running" ? { ...n, status: status === "cancelled" ? "cancelled" : "failed" } : n;
  return { ...s, lines: changed ? lines : s.lines, nodes };
}

function apply(s: ConsoleState, e: RunEventMsg): ConsoleState {
  const d = e.data ?? {};
  const attempt = num(d.attempt) ?? s.attempt;
  const handle = HANDLERS.get(e.type);
  if (handle) return handle(s, e, d, attempt);
  return note(s, e, "warn", `An event this console does not know: ${e.type} (#${e.seq}). ${JSON.stringify(d)}`);
}

/** How one event type changes the console: `d` is the event's data, `attempt` the attempt it belongs to. */
type Handler = (s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number) => ConsoleState;

function runQueued(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>): ConsoleState {
  const version = num(d.version);
  const environment = str(d.environment);
  const rerun = str(d.rerun_of);
  const kserveVersion = str(d.kserve_version);
  const next = { ...s, status: s.status ?? ("queued" as RunStatus), version, environment, kserveVersion, queuedAt: e.created_at ?? null };
  const release = kserveVersion ? `, as KServe ${kserveVersion}'s router` : "";
  return note(next, e, "info", `Queued: version ${version ?? "?"} in environment ${environment ?? "?"}${release}${rerun ? ` (again, like run ${rerun.slice(0, 8)})` : ""}.`);
}

function runStarted(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const retry = s.attempt > 0 && attempt > s.attempt;
  let next: ConsoleState = { ...s, status: "running", attempt, startedAt: s.startedAt && !retry ? s.startedAt : (e.created_at ?? null) };
  if (retry) next = { ...closeRunning(next, "failed", "its worker stopped responding"), nodes: {}, routes: {} };
  return note(next, e, retry ? "warn" : "info", retry ? `Attempt ${attempt} started${str(d.worker) ? ` on ${str(d.worker)}` : ""}: the earlier attempt's worker stopped responding.` : `Started${str(d.worker) ? ` on ${str(d.worker)}` : ""}.`);
}

function nodeStarted(s: ConsoleState, _e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const callId = str(d.call_id) ?? "";
  const node: NodeResult = { callId, node: str(d.node) ?? "", attempt, routerType: str(d.router_type), status: "running", statusCode: null, durationMs: null, error: null, output: null };
  return { ...s, nodes: putRecord(s.nodes, callId, node) };
}

function nodeFinished(s: ConsoleState, _e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const callId = str(d.call_id) ?? "";
  const prev = s.nodes[callId];
  const outcome = str(d.outcome);
  const status = outcome === "ok" ? "ok" : outcome === "cancelled" ? "cancelled" : "failed";
  const node: NodeResult = {
    callId,
    node: str(d.node) ?? prev?.node ?? "",
    attempt,
    routerType: prev?.routerType ?? null,
    status,
    statusCode: num(d.status),
    durationMs: num(d.duration_ms),
    error: str(d.error),
    output: bodyView(d.output),
  };
  return { ...s, nodes: putRecord(s.nodes, callId, node) };
}

function stepStarted(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const line = stepLine(s, e, attempt);
  return putLine(s, {
    ...line,
    fields: { ...line.fields, ...d },
    stepKind: str(d.kind) ?? line.stepKind,
    method: str(d.method) ?? line.method,
    target: str(d.url) ?? str(d.target) ?? line.target,
    headers: pairs(d.headers),
    request: bodyView(d.request) ?? line.request,
    condition: conditionResult(d.condition) ?? line.condition,
  });
}

function stepFinished(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const line = stepLine(s, e, attempt);
  const outcome = str(d.outcome);
  return putLine(s, {
    ...line,
    fields: { ...line.fields, ...d },
    status: statusOfOutcome(outcome),
    outcome,
    statusCode: num(d.status),
    durationMs: num(d.duration_ms),
    contentType: str(d.content_type),
    response: bodyView(d.response),
    error: str(d.error) || null,
  });
}

function stepSkipped(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const line = stepLine(s, e, attempt);
  return putLine(s, { ...line, fields: { ...line.fields, ...d }, status: "skipped", outcome: "skipped", skipReason: str(d.reason), condition: conditionResult(d.condition) ?? line.condition });
}

function routeDecided(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>, attempt: number): ConsoleState {
  const callId = str(d.call_id) ?? "";
  const node = str(d.node) ?? "";
  const decision = routeDecision(d);
  const next = { ...s, routes: putRecord(s.routes, callId, decision) };
  return putLine(next, { kind: "route", key: `route:${e.seq}`, seq: e.seq, attempt, callId, node, decision, text: describeRoute(node, decision) });
}

function runFinished(s: ConsoleState, e: RunEventMsg, d: Record<string, unknown>): ConsoleState {
  const status = (str(d.status) ?? "failed") as RunStatus;
  const finished: FinishInfo = {
    status,
    statusCode: num(d.status_code),
    contentType: str(d.content_type),
    error: str(d.error) ?? "",
    durationMs: num(d.duration_ms),
    response: runResponse(d.response),
    warnings: Array.isArray(d.warnings) ? d.warnings.filter((w): w is string => typeof w === "string") : [],
  };
  let next: ConsoleState = { ...closeRunning(s, status, finished.error), status, finished };
  for (const [i, warning] of finished.warnings.entries()) next = putLine(next, { kind: "note", key: `note:${e.seq}:${i}`, seq: e.seq, level: "warn", text: warning });
  return next;
}

/** The event types the console knows; any other is shown as a warning line. */
const HANDLERS = new Map<string, Handler>([
  ["run.queued", runQueued],
  ["run.started", runStarted],
  ["run.requeued", (s, e, d) => note({ ...s, status: "queued" }, e, "warn", `Queued again: ${str(d.reason) ?? "its worker stopped"}`)],
  ["run.warning", (s, e, d) => note(s, e, "warn", str(d.message) ?? "Warning.")],
  ["run.cancel_requested", (s, e, d) => note({ ...s, cancelRequested: true }, e, "warn", `Cancel requested${str(d.by) ? ` by ${str(d.by)}` : ""}…`)],
  ["node.started", nodeStarted],
  ["node.finished", nodeFinished],
  ["step.started", stepStarted],
  ["step.finished", stepFinished],
  ["step.skipped", stepSkipped],
  ["route.decided", routeDecided],
  ["run.finished", runFinished],
  // What came of it follows: run.requeued, or run.finished.
  ["run.worker_stopping", (s) => s],
]);

/**
 * Applies one event. Idempotent per `seq`: an event already applied (or already waiting) changes
 * nothing; one that skips ahead waits in `pending` until the events before it arrive.
 */
export function reduceEvent(state: ConsoleState, event: RunEventMsg): ConsoleState {
  if (!event || typeof event.seq !== "number" || event.seq <= state.lastSeq) return state;
  if (event.seq > state.lastSeq + 1) {
    if (state.pending.some((p) => p.seq === event.seq)) return state;
    const pending = [...state.pending, event].sort((a, b) => a.seq - b.seq);
    return { ...state, pending };
  }
  let s = { ...apply(state, event), lastSeq: event.seq };
  while (s.pending.length && s.pending[0].seq <= s.lastSeq + 1) {
    const [head, ...rest] = s.pending;
    s = { ...s, pending: rest };
    if (head.seq === s.lastSeq + 1) s = { ...apply(s, head), lastSeq: head.seq };
  }
  return s;
}

/**
 * Gives up on the events missing before `pending` (asked for again and still not there: never
 * stored) and applies what waited.
 */
export function skipGap(state: ConsoleState): ConsoleState {
  if (!state.pending.length) return state;
  return reduceEvents({ ...state, lastSeq: state.pending[0].seq - 1, pending: [] }, state.pending);
}

/** Applies events in order (as `reduceEvent` one by one would), in time linear in their number. */
export function reduceEvents(state: ConsoleState, events: readonly RunEventMsg[]): ConsoleState {
  if (batchOwned) return events.reduce(reduceEvent, state); // inside a batch already (skipGap)
  batchOwned = new WeakSet();
  try {
    return events.reduce(reduceEvent, state);
  } finally {
    batchOwned = null;
  }
}

/**
 * How a run ended, from its detail (`GET /api/runs/{id}/`) alone: what the console shows of a
 * finished run while its events are still being read. Null while the run has not ended.
 */
export function finishedFromRun(run: Pick<Run, "status" | "error" | "duration_ms" | "response"> | null | undefined): FinishInfo | null {
  if (!run || !isTerminal(run.status)) return null;
  const response = runResponse(run.response);
  return {
    status: run.status,
    statusCode: response?.status_code ?? null,
    contentType: response?.content_type ?? null,
    error: run.error ?? "",
    durationMs: run.duration_ms ?? null,
    response: response && response.status_code !== null ? response : null,
    warnings: [],
  };
}
