/**
 * The run console as a pure model: a run's stored events (declared in execution/eventschema.py,
 * typed in ../../generated/events.ts) folded into console lines, node results, route decisions and
 * the final outcome with the graph's answer. The same reducer takes them live (SSE) and replayed
 * (`GET /api/runs/{id}/events/?format=json`). No DOM, no React: the panel renders a
 * `ConsoleState`, the canvas draws `runMarks(state)`, and Vitest tests both.
 *
 * Events are applied exactly once and in `seq` order: a repeated `seq` is dropped (a reconnect may
 * resend what was already shown) and an event that arrives after a gap waits in `pending` until
 * the missing ones arrive (`hasGap` tells the stream to reopen from `lastSeq`).
 */
import type { BodyView, Run, RunStatus } from "../../api";
import type { RunResponse, SwitchCondition } from "../../generated/events";
import { issueKey } from "../../graph/queries";
import { prettyJson } from "./prettyJson";

/**
 * One event as the SSE `data:` line and the JSON listing carry it. `type` is a string, not the
 * generated `RunEventType`: an event the console does not know is shown, not dropped.
 */
export interface RunEventMsg {
  seq: number;
  type: string;
  run?: string;
  created_at?: string | null;
  data: Record<string, unknown>;
}

export type StepStatus = "running" | "ok" | "failed" | "skipped" | "cancelled";

/** A condition and what it evaluated to (Sequence steps; trace.py `step.skipped`). */
export interface ConditionResult {
  condition: string;
  matches: boolean | null;
  raw: string | null;
  reason: string | null;
}

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

/** A `route.decided` event's data, typed by router (trace.py). */
export type RouteDecision =
  | { router: "Switch"; validJson: boolean; conditions: SwitchCondition[]; chosen: number | null }
  | { router: "Splitter"; draw: number | null; weights: number[]; cumulative: number[]; chosen: number | null }
  | { router: "Sequence"; decision: string; reason: string; stepIndex: number | null; condition: string | null; matches: boolean | null; status: number | null; skipped: number[] }
  | { router: "Ensemble"; decision: string; stepIndex: number | null; stepName: string | null; status: number | null; error: string | null; abandoned: number[] }
  | { router: string; raw: Record<string, unknown> };

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
  status: "running" | "ok" | "failed" | "cancelled";
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

// ---- reading loosely typed event data -------------------------------------------------------

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function nums(v: unknown): number[] {
  return Array.isArray(v) ? v.filter((x): x is number => typeof x === "number") : [];
}

function isBodyView(v: unknown): v is BodyView {
  return !!v && typeof v === "object" && typeof (v as BodyView).body === "string" && typeof (v as BodyView).size === "number";
}

function bodyView(v: unknown): BodyView | null {
  return isBodyView(v) ? v : null;
}

function pairs(v: unknown): [string, string][] {
  if (!Array.isArray(v)) return [];
  return v.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2 && typeof p[0] === "string" && typeof p[1] === "string");
}

function conditionResult(v: unknown): ConditionResult | null {
  if (typeof v === "string") return { condition: v, matches: null, raw: null, reason: null };
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const condition = str(o.condition);
  if (condition === null) return null;
  return { condition, matches: typeof o.matches === "boolean" ? o.matches : null, raw: str(o.raw), reason: str(o.reason) };
}

/** The status a finished step or node shows for an engine outcome (trace.py). */
export function statusOfOutcome(outcome: string | null): StepStatus {
  if (outcome === "ok") return "ok";
  if (outcome === "cancelled") return "cancelled";
  return "failed";
}

/**
 * The step call `callId` of `attempt`, if the console has it. Call ids are short and carry no path
 * (`root/1`, `b#3/0`: trace.py); the nesting is in each call's `parentCallId`, the `nodeName` step
 * that led into its node.
 */
function stepByCallId(s: ConsoleState, attempt: number, callId: string | null): StepLine | null {
  if (callId === null) return null;
  const at = s.index[`${attempt}:${callId}`];
  const line = at !== undefined ? s.lines[at] : undefined;
  return line && line.kind === "step" ? line : null;
}

/** How deep a step call nests: one more than the `nodeName` step that led into its node. */
function depthBelow(s: ConsoleState, attempt: number, parentCallId: string | null): number {
  const parent = stepByCallId(s, attempt, parentCallId);
  return parent ? parent.depth + 1 : 0;
}

/** The `nodeName` steps that led to step call `line`, innermost first. */
function* callersOf(state: ConsoleState, line: StepLine): Generator<StepLine> {
  let parent = stepByCallId(state, line.attempt, line.parentCallId);
  // A parent starts before its children, so the chain ends; the bound only guards odd input.
  for (let hops = 0; parent && hops <= state.lines.length; hops++) {
    yield parent;
    parent = stepByCallId(state, parent.attempt, parent.parentCallId);
  }
}

/** A route decision from the `data` of a `route.decided` event (or a RunStep's `route`). */
export function routeDecision(d: Record<string, unknown>): RouteDecision {
  const router = str(d.router) ?? "";
  if (router === "Switch") {
    const conditions = Array.isArray(d.conditions)
      ? d.conditions
          .filter((c): c is Record<string, unknown> => !!c && typeof c === "object")
          .map((c, i) => ({ index: num(c.index) ?? i, name: str(c.name), condition: str(c.condition) ?? "", matches: c.matches === true, raw: str(c.raw), reason: str(c.reason) }))
      : [];
    return { router, validJson: d.valid_json !== false, conditions, chosen: num(d.chosen) };
  }
  if (router === "Splitter") return { router, draw: num(d.draw), weights: nums(d.weights), cumulative: nums(d.cumulative), chosen: num(d.chosen) };
  if (router === "Sequence") {
    return {
      router,
      decision: str(d.decision) ?? "",
      reason: str(d.reason) ?? "",
      stepIndex: num(d.step_index),
      condition: str(d.condition),
      matches: typeof d.matches === "boolean" ? d.matches : null,
      status: num(d.status),
      skipped: nums(d.skipped),
    };
  }
  if (router === "Ensemble") {
    return { router, decision: str(d.decision) ?? "", stepIndex: num(d.step_index), stepName: str(d.step_name), status: num(d.status), error: str(d.error), abandoned: nums(d.abandoned) };
  }
  return { router, raw: d };
}

/** One sentence for a route decision, as the console shows it. */
export function describeRoute(node: string, r: RouteDecision): string {
  switch (r.router) {
    case "Switch": {
      const s = r as Extract<RouteDecision, { router: "Switch" }>;
      const summary = s.conditions.map((c) => `${c.name ?? `step ${c.index}`} ${c.matches ? "✓" : "✗"}`).join(", ");
      if (!s.validJson) return `Switch ${node}: the input is not valid JSON, so no condition can match.`;
      if (s.chosen === null) return `Switch ${node}: no condition matched (${summary}); the input is passed through.`;
      const chosen = s.conditions.find((c) => c.index === s.chosen);
      return `Switch ${node}: step ${s.chosen}${chosen?.name ? ` "${chosen.name}"` : ""} matched (${summary}).`;
    }
    case "Splitter": {
      const s = r as Extract<RouteDecision, { router: "Splitter" }>;
      return `Splitter ${node}: drew ${s.draw ?? "?"} of 100 → step ${s.chosen ?? "none"} (weights ${s.weights.join("/")}).`;
    }
    case "Sequence": {
      const s = r as Extract<RouteDecision, { router: "Sequence" }>;
      const skipped = s.skipped.length ? `; skipped step${s.skipped.length > 1 ? "s" : ""} ${s.skipped.join(", ")}` : "";
      if (s.reason === "hard-failure") return `Sequence ${node} stopped at step ${s.stepIndex}: a Hard dependency answered ${s.status ?? "an error"}${skipped}.`;
      if (s.reason === "condition-unmet") return `Sequence ${node} stopped at step ${s.stepIndex}: condition ${s.condition ?? ""} did not match${skipped}.`;
      return `Sequence ${node} ${s.decision || "stopped"} at step ${s.stepIndex} (${s.reason || "no reason given"})${skipped}.`;
    }
    case "Ensemble": {
      const s = r as Extract<RouteDecision, { router: "Ensemble" }>;
      const why = s.status !== null ? `answered ${s.status}` : s.error ? `failed: ${s.error}` : "failed";
      const abandoned = s.abandoned.length ? `; abandoned step${s.abandoned.length > 1 ? "s" : ""} ${s.abandoned.join(", ")}` : "";
      return `Ensemble ${node}: ${s.decision === "hard-failure" ? "Hard" : ""} step ${s.stepIndex}${s.stepName ? ` "${s.stepName}"` : ""} ${why}${abandoned}.`.replace(":  ", ": ");
    }
    default:
      return `${r.router || "Router"} ${node}: route decided.`;
  }
}

const SKIP_REASONS: Record<string, string> = {
  "condition-unmet": "its condition did not match",
  "invalid-response": "the previous response was not valid JSON",
  "after-unmet-condition": "an earlier condition did not match",
  "after-hard-failure": "an earlier Hard step failed",
  "after-error": "an earlier step failed",
};

export function describeSkip(reason: string | null): string {
  return reason ? (SKIP_REASONS[reason] ?? reason) : "skipped";
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

function apply(s: ConsoleState, e: RunEventMsg): ConsoleState {
  const d = e.data ?? {};
  const attempt = num(d.attempt) ?? s.attempt;
  switch (e.type) {
    case "run.queued": {
      const version = num(d.version);
      const environment = str(d.environment);
      const rerun = str(d.rerun_of);
      const kserveVersion = str(d.kserve_version);
      const next = { ...s, status: s.status ?? ("queued" as RunStatus), version, environment, kserveVersion, queuedAt: e.created_at ?? null };
      const release = kserveVersion ? `, as KServe ${kserveVersion}'s router` : "";
      return note(next, e, "info", `Queued: version ${version ?? "?"} in environment ${environment ?? "?"}${release}${rerun ? ` (again, like run ${rerun.slice(0, 8)})` : ""}.`);
    }
    case "run.started": {
      const retry = s.attempt > 0 && attempt > s.attempt;
      let next: ConsoleState = { ...s, status: "running", attempt, startedAt: s.startedAt && !retry ? s.startedAt : (e.created_at ?? null) };
      if (retry) next = { ...closeRunning(next, "failed", "its worker stopped responding"), nodes: {}, routes: {} };
      return note(next, e, retry ? "warn" : "info", retry ? `Attempt ${attempt} started${str(d.worker) ? ` on ${str(d.worker)}` : ""}: the earlier attempt's worker stopped responding.` : `Started${str(d.worker) ? ` on ${str(d.worker)}` : ""}.`);
    }
    case "run.requeued":
      return note({ ...s, status: "queued" }, e, "warn", `Queued again: ${str(d.reason) ?? "its worker stopped"}`);
    case "run.warning":
      return note(s, e, "warn", str(d.message) ?? "Warning.");
    case "run.cancel_requested":
      return note({ ...s, cancelRequested: true }, e, "warn", `Cancel requested${str(d.by) ? ` by ${str(d.by)}` : ""}…`);
    case "node.started": {
      const callId = str(d.call_id) ?? "";
      const node: NodeResult = { callId, node: str(d.node) ?? "", attempt, routerType: str(d.router_type), status: "running", statusCode: null, durationMs: null, error: null, output: null };
      return { ...s, nodes: putRecord(s.nodes, callId, node) };
    }
    case "node.finished": {
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
    case "step.started": {
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
    case "step.finished": {
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
    case "step.skipped": {
      const line = stepLine(s, e, attempt);
      return putLine(s, { ...line, fields: { ...line.fields, ...d }, status: "skipped", outcome: "skipped", skipReason: str(d.reason), condition: conditionResult(d.condition) ?? line.condition });
    }
    case "route.decided": {
      const callId = str(d.call_id) ?? "";
      const node = str(d.node) ?? "";
      const decision = routeDecision(d);
      const next = { ...s, routes: putRecord(s.routes, callId, decision) };
      return putLine(next, { kind: "route", key: `route:${e.seq}`, seq: e.seq, attempt, callId, node, decision, text: describeRoute(node, decision) });
    }
    case "run.finished": {
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
    case "run.worker_stopping":
      return s; // what came of it follows: run.requeued, or run.finished
    default:
      return note(s, e, "warn", `An event this console does not know: ${e.type} (#${e.seq}). ${JSON.stringify(d)}`);
  }
}

function runResponse(v: unknown): RunResponse | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  return {
    status_code: num(o.status_code),
    content_type: str(o.content_type),
    body: o.body,
    encoding: o.encoding === "base64" ? "base64" : "utf-8",
    size: num(o.size),
    truncated: o.truncated === true,
    ...(str(o.note) !== null ? { note: str(o.note)! } : {}),
  };
}

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

/** Parses an SSE `data:` payload; null for anything that is not an event. */
export function parseEventData(text: string): RunEventMsg | null {
  try {
    return parseEvent(JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

/** An event from its JSON value; null for anything that is not an event. */
export function parseEvent(v: unknown): RunEventMsg | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  if (typeof o.seq !== "number" || typeof o.type !== "string") return null;
  return { seq: o.seq, type: o.type, run: str(o.run) ?? undefined, created_at: str(o.created_at), data: o.data && typeof o.data === "object" ? (o.data as Record<string, unknown>) : {} };
}

/** A page of the JSON listing of a run's stored events (`GET /api/runs/{id}/events/?format=json`). */
export interface EventLog {
  run: string;
  finished: boolean;
  events: RunEventMsg[];
  /** How many events the run has stored (null from a server that does not say). */
  total: number | null;
  /** Whether another page follows (a `next` link); a server without pages sends every event at once. */
  more: boolean;
}

/** Reads the JSON listing; null for anything that is not one. Events that are not events are left out. */
export function parseEventLog(value: unknown): EventLog | null {
  if (!value || typeof value !== "object") return null;
  const o = value as Record<string, unknown>;
  if (typeof o.run !== "string" || typeof o.finished !== "boolean" || !Array.isArray(o.events)) return null;
  const events = o.events.map(parseEvent).filter((e): e is RunEventMsg => e !== null);
  return { run: o.run, finished: o.finished, events, total: num(o.total), more: typeof o.next === "string" && o.next !== "" };
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

// ---- derived views ------------------------------------------------------------------------------

export function stepLines(state: ConsoleState): StepLine[] {
  return state.lines.filter((l): l is StepLine => l.kind === "step");
}

/** "root › match › db-visitors": where a step sits (its node and its name or index). */
export function stepPosition(line: Pick<StepLine, "node" | "stepIndex" | "stepName">): string {
  const step = line.stepName ? line.stepName : `step ${line.stepIndex ?? "?"}`;
  return `${line.node} › ${step}`;
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

// ---- canvas marks -------------------------------------------------------------------------------

/**
 * `soft-failed`: the call failed but its node went on (a Soft dependency); `not-reached`: the
 * run ended without reaching the step (or node) at all.
 */
export type StepMarkStatus = StepStatus | "not-taken" | "soft-failed" | "not-reached";

export interface StepMark {
  status: StepMarkStatus;
  durationMs: number | null;
  statusCode: number | null;
  calls: number;
  /** The console line to reveal when the step is selected. */
  lineKey: string | null;
  /** A Switch step's or a Sequence step's condition and whether it matched. */
  condition: ConditionResult | null;
  note: string | null;
  /** Failed calls below this `nodeName` step that the graph went on from (0 for other steps). */
  softBelow: number;
}

export interface NodeMark {
  status: NodeResult["status"] | "not-reached";
  durationMs: number | null;
  statusCode: number | null;
  route: RouteDecision | null;
  /** Failed step calls in this node or below it that the graph went on from. */
  softFailures: number;
}

/** What the canvas draws for a run, kept apart from the graph model (never in undo history). */
export interface RunMarks {
  runId: string | null;
  nodes: Map<string, NodeMark>;
  /** By `issueKey(node, index)`. */
  steps: Map<string, StepMark>;
  /** The run has ended: whatever has no mark was never reached. */
  finished: boolean;
}

const PRIORITY: Record<StepMarkStatus, number> = { "not-reached": 0, "not-taken": 0, skipped: 1, ok: 2, "soft-failed": 3, cancelled: 4, running: 5, failed: 6 };

const NOT_REACHED_NODE: NodeMark = { status: "not-reached", durationMs: null, statusCode: null, route: null, softFailures: 0 };
const NOT_REACHED_STEP: StepMark = { status: "not-reached", durationMs: null, statusCode: null, calls: 0, lineKey: null, condition: null, note: "the run never reached this step", softBelow: 0 };

/** A node's mark; once the run has ended, a node without one shows as not reached. */
export function nodeMarkOf(marks: RunMarks, node: string): NodeMark | undefined {
  return marks.nodes.get(node) ?? (marks.finished ? NOT_REACHED_NODE : undefined);
}

/** A step's mark; once the run has ended, a step without one shows as not reached. */
export function stepMarkOf(marks: RunMarks, node: string, index: number): StepMark | undefined {
  return marks.steps.get(issueKey(node, index)) ?? (marks.finished ? NOT_REACHED_STEP : undefined);
}

export function runMarks(state: ConsoleState): RunMarks {
  const nodes = new Map<string, NodeMark>();
  const steps = new Map<string, StepMark>();
  const routeOf = new Map<string, RouteDecision>();
  for (const [callId, r] of Object.entries(state.routes)) {
    const node = state.lines.find((l): l is RouteLine => l.kind === "route" && l.callId === callId && l.attempt === state.attempt)?.node;
    if (node) routeOf.set(node, r);
  }
  for (const n of Object.values(state.nodes)) {
    if (n.attempt !== state.attempt) continue;
    const prev = nodes.get(n.node);
    if (prev && PRIORITY[prev.status === "running" ? "running" : prev.status] > PRIORITY[n.status === "running" ? "running" : n.status]) continue;
    nodes.set(n.node, { status: n.status, durationMs: n.durationMs, statusCode: n.statusCode, route: routeOf.get(n.node) ?? prev?.route ?? null, softFailures: 0 });
  }
  for (const [node, route] of routeOf) {
    const prev = nodes.get(node);
    if (prev) nodes.set(node, { ...prev, route });
    else nodes.set(node, { status: "running", durationMs: null, statusCode: null, route, softFailures: 0 });
    if (route.router === "Switch") {
      const sw = route as Extract<RouteDecision, { router: "Switch" }>;
      for (const c of sw.conditions) {
        steps.set(issueKey(node, c.index), {
          status: c.index === sw.chosen ? "running" : "not-taken",
          durationMs: null,
          statusCode: null,
          calls: 0,
          lineKey: null,
          condition: { condition: c.condition, matches: c.matches, raw: c.raw, reason: c.reason },
          note: null,
          softBelow: 0,
        });
      }
    } else if (route.router === "Splitter") {
      const sp = route as Extract<RouteDecision, { router: "Splitter" }>;
      sp.weights.forEach((w, i) => {
        const lo = i === 0 ? 0 : (sp.cumulative[i - 1] ?? 0);
        const hi = sp.cumulative[i] ?? lo + w;
        steps.set(issueKey(node, i), {
          status: i === sp.chosen ? "running" : "not-taken",
          durationMs: null,
          statusCode: null,
          calls: 0,
          lineKey: null,
          condition: null,
          note: `weight ${w}: draws ${lo}–${hi - 1}${i === sp.chosen ? ` (drew ${sp.draw})` : ""}`,
          softBelow: 0,
        });
      });
    }
  }
  const soft = softFailures(state);
  for (const l of stepLines(state)) {
    if (l.attempt !== state.attempt || l.stepIndex === null) continue;
    const key = issueKey(l.node, l.stepIndex);
    const prev = steps.get(key);
    const calls = (prev?.calls ?? 0) + 1;
    const status: StepMarkStatus = soft.includes(l) ? "soft-failed" : l.status;
    const keepPrev = prev && prev.calls > 0 && PRIORITY[prev.status] > PRIORITY[status];
    // Soft failures inside the node this step called, at any depth (l is among their callers).
    const below = soft.filter((x) => [...callersOf(state, x)].includes(l)).length;
    steps.set(key, {
      status: keepPrev ? prev.status : status,
      durationMs: keepPrev ? prev.durationMs : l.durationMs,
      statusCode: keepPrev ? prev.statusCode : l.statusCode,
      calls,
      lineKey: keepPrev ? prev.lineKey : l.key,
      condition: prev?.condition ?? l.condition,
      note: l.status === "skipped" ? `skipped: ${describeSkip(l.skipReason)}` : status === "soft-failed" ? SOFT_NOTE : (prev?.note ?? null),
      softBelow: (prev?.softBelow ?? 0) + below,
    });
  }
  for (const [name, mark] of nodes) {
    const count = soft.filter((x) => isBelowNode(state, name, x)).length;
    if (count) nodes.set(name, { ...mark, softFailures: count });
  }
  // A chosen Switch/Splitter step that never started (the run ended first) is not "running".
  if (state.finished) {
    for (const [k, m] of steps) if (m.status === "running" && m.calls === 0) steps.set(k, { ...m, status: state.finished.status === "cancelled" ? "cancelled" : "not-taken" });
  }
  return { runId: state.runId, nodes, steps, finished: state.finished !== null };
}

/** What a soft-failed step's tooltip and console line say. */
export const SOFT_NOTE = "failed, but the graph went on (Soft dependency)";

/** Whether step call `line` ran inside an invocation of node `name` (at any depth below it). */
function isBelowNode(state: ConsoleState, name: string, line: StepLine): boolean {
  const invocations = new Set(Object.values(state.nodes).filter((n) => n.node === name && n.attempt === line.attempt).map((n) => n.callId));
  if (invocations.has(nodeCallOf(line.callId))) return true;
  for (const caller of callersOf(state, line)) if (invocations.has(nodeCallOf(caller.callId))) return true;
  return false;
}

// ---- bodies ---------------------------------------------------------------------------------

export function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} kB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1) return "<1 ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export interface ShownBody {
  text: string;
  json: boolean;
  size: number;
  truncated: boolean;
  binary: boolean;
  /** The parsed value when the body is whole JSON (the console shows it as a tree). */
  value?: unknown;
}

/** A body as the console shows it: pretty JSON when it parses, else the raw text. */
export function showBody(view: BodyView | null | undefined): ShownBody | null {
  if (!view) return null;
  if (view.encoding === "base64") return { text: view.body, json: false, size: view.size, truncated: view.truncated, binary: true };
  if (!view.truncated) {
    try {
      const value: unknown = JSON.parse(view.body);
      return { text: prettyJson(value), json: true, size: view.size, truncated: false, binary: false, value };
    } catch {
      /* not JSON: shown as it is */
    }
  }
  return { text: view.body, json: false, size: view.size, truncated: view.truncated, binary: false };
}

/** The final response of a run (`GET /api/runs/{id}/`), as a body the console can show. */
export function showValue(value: unknown, size?: number | null, truncated?: boolean): ShownBody | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    const shown = showBody({ body: value, encoding: "utf-8", size: size ?? new TextEncoder().encode(value).length, truncated: !!truncated });
    return shown;
  }
  const text = prettyJson(value);
  return { text, json: true, size: size ?? new TextEncoder().encode(JSON.stringify(value)).length, truncated: !!truncated, binary: false, value };
}
