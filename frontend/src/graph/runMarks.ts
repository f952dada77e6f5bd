/**
 * What the canvases draw for a run: a mark per node and per step (its status, time, answer, the
 * route a router took), kept apart from the graph model (never in undo history). The run console
 * computes them from a run's events (panels/run/consoleMarks.ts); both views draw them, so their
 * vocabulary lives here, below both.
 */
import type { SwitchCondition } from "../generated/events";
import { issueKey } from "./queries";

export type StepStatus = "running" | "ok" | "failed" | "skipped" | "cancelled";

/** A condition and what it evaluated to (Sequence steps; trace.py `step.skipped`). */
export interface ConditionResult {
  condition: string;
  matches: boolean | null;
  raw: string | null;
  reason: string | null;
}

/** How a node's invocation stands. */
export type NodeStatus = "running" | "ok" | "failed" | "cancelled";

/** A `route.decided` event's data, typed by router (trace.py). */
export type RouteDecision =
  | { router: "Switch"; validJson: boolean; conditions: SwitchCondition[]; chosen: number | null }
  | { router: "Splitter"; draw: number | null; weights: number[]; cumulative: number[]; chosen: number | null }
  | { router: "Sequence"; decision: string; reason: string; stepIndex: number | null; condition: string | null; matches: boolean | null; status: number | null; skipped: number[] }
  | { router: "Ensemble"; decision: string; stepIndex: number | null; stepName: string | null; status: number | null; error: string | null; abandoned: number[] }
  | { router: string; raw: Record<string, unknown> };

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
  status: NodeStatus | "not-reached";
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
