/**
 * The marks a console state puts on the canvases (../../graph/runMarks.ts): each node's and
 * step's latest status, the steps a Switch or Splitter did not take, the failures the graph went
 * on from, counted on the nodes and `nodeName` steps above them.
 */
import { issueKey } from "../../graph/queries";
import type { NodeMark, RouteDecision, RunMarks, StepMark, StepMarkStatus } from "../../graph/runMarks";
import type { ConsoleState, RouteLine, StepLine } from "./console";
import { callersOf, nodeCallOf, softFailures, stepLines } from "./consoleViews";
import { describeSkip, SOFT_NOTE } from "./describe";

const PRIORITY: Record<StepMarkStatus, number> = { "not-reached": 0, "not-taken": 0, skipped: 1, ok: 2, "soft-failed": 3, cancelled: 4, running: 5, failed: 6 };

export function runMarks(state: ConsoleState): RunMarks {
  const routeOf = routesByNode(state);
  const nodes = nodeMarks(state, routeOf);
  const steps = new Map<string, StepMark>();
  for (const [node, route] of routeOf) {
    const prev = nodes.get(node);
    if (prev) nodes.set(node, { ...prev, route });
    else nodes.set(node, { status: "running", durationMs: null, statusCode: null, route, softFailures: 0 });
    if (route.router === "Switch") switchMarks(node, route as Decision<"Switch">, steps);
    else if (route.router === "Splitter") splitterMarks(node, route as Decision<"Splitter">, steps);
  }
  const soft = softFailures(state);
  for (const l of stepLines(state)) {
    if (l.attempt !== state.attempt || l.stepIndex === null) continue;
    const key = issueKey(l.node, l.stepIndex);
    steps.set(key, callMark(state, l, steps.get(key), soft));
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

type Decision<R extends string> = Extract<RouteDecision, { router: R }>;

/** The current attempt's route decisions by the node that made them. */
function routesByNode(state: ConsoleState): Map<string, RouteDecision> {
  const routeOf = new Map<string, RouteDecision>();
  for (const [callId, r] of Object.entries(state.routes)) {
    const node = state.lines.find((l): l is RouteLine => l.kind === "route" && l.callId === callId && l.attempt === state.attempt)?.node;
    if (node) routeOf.set(node, r);
  }
  return routeOf;
}

/** Each node's mark from its invocations in the current attempt: the one of highest priority. */
function nodeMarks(state: ConsoleState, routeOf: Map<string, RouteDecision>): Map<string, NodeMark> {
  const nodes = new Map<string, NodeMark>();
  for (const n of Object.values(state.nodes)) {
    if (n.attempt !== state.attempt) continue;
    const prev = nodes.get(n.node);
    if (prev && PRIORITY[prev.status === "running" ? "running" : prev.status] > PRIORITY[n.status === "running" ? "running" : n.status]) continue;
    nodes.set(n.node, { status: n.status, durationMs: n.durationMs, statusCode: n.statusCode, route: routeOf.get(n.node) ?? prev?.route ?? null, softFailures: 0 });
  }
  return nodes;
}

/** A Switch's steps: the chosen one running, the others not taken, each with its condition. */
function switchMarks(node: string, sw: Decision<"Switch">, steps: Map<string, StepMark>): void {
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
}

/** A Splitter's steps: the chosen one running, the others not taken, each with its draws. */
function splitterMarks(node: string, sp: Decision<"Splitter">, steps: Map<string, StepMark>): void {
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

/** A step's mark after call `l` (`prev`: its mark before it): the call of highest priority shows. */
function callMark(state: ConsoleState, l: StepLine, prev: StepMark | undefined, soft: StepLine[]): StepMark {
  const calls = (prev?.calls ?? 0) + 1;
  const status: StepMarkStatus = soft.includes(l) ? "soft-failed" : l.status;
  const keepPrev = prev && prev.calls > 0 && PRIORITY[prev.status] > PRIORITY[status];
  // Soft failures inside the node this step called, at any depth (l is among their callers).
  const below = soft.filter((x) => [...callersOf(state, x)].includes(l)).length;
  return {
    status: keepPrev ? prev.status : status,
    durationMs: keepPrev ? prev.durationMs : l.durationMs,
    statusCode: keepPrev ? prev.statusCode : l.statusCode,
    calls,
    lineKey: keepPrev ? prev.lineKey : l.key,
    condition: prev?.condition ?? l.condition,
    note: l.status === "skipped" ? `skipped: ${describeSkip(l.skipReason)}` : status === "soft-failed" ? SOFT_NOTE : (prev?.note ?? null),
    softBelow: (prev?.softBelow ?? 0) + below,
  };
}

/** Whether step call `line` ran inside an invocation of node `name` (at any depth below it). */
function isBelowNode(state: ConsoleState, name: string, line: StepLine): boolean {
  const invocations = new Set(Object.values(state.nodes).filter((n) => n.node === name && n.attempt === line.attempt).map((n) => n.callId));
  if (invocations.has(nodeCallOf(line.callId))) return true;
  for (const caller of callersOf(state, line)) if (invocations.has(nodeCallOf(caller.callId))) return true;
  return false;
}
