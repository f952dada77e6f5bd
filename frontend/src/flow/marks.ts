/**
 * What the Flow view draws on a box besides the graph: the outcome of the run shown in the console,
 * the version comparison's marks and the validation issues. The same marks the Nodes view draws
 * (by node and step index), looked up for a box.
 */
import { issueKey, type IssueIndex } from "../graph/queries";
import type { Issue } from "../graph/types";
import { formatMs } from "../graph/format";
import { nodeMarkOf, stepMarkOf, type RunMarks } from "../graph/runMarks";
import type { CompareMarks } from "../canvas/Canvas";
import type { Mark } from "../canvas/RouterNode";
import { ROOT } from "../graph/queries";
import type { FlowBox } from "./project";

export interface BoxRun {
  /** ok, failed, soft-failed, skipped, running, cancelled, not-taken, not-reached. */
  status: string;
  durationMs: number | null;
  /** What the badge's tooltip says. */
  text: string;
}

const WORDS: Record<string, string> = {
  ok: "succeeded",
  failed: "failed",
  "soft-failed": "failed, but the graph went on (Soft dependency)",
  skipped: "was skipped",
  running: "is running",
  cancelled: "was cancelled",
  "not-taken": "was not taken",
  "not-reached": "was never reached",
};

function describe(status: string, statusCode: number | null, durationMs: number | null): string {
  return `${WORDS[status] ?? status}${statusCode !== null ? ` (${statusCode})` : ""}${durationMs !== null ? ` in ${formatMs(durationMs)}` : ""}`;
}

/** The run's outcome on a box, or null when the run says nothing about it. */
export function boxRun(box: FlowBox, run: RunMarks | null | undefined): BoxRun | null {
  if (!run || box.kind === "join") return null;
  if (box.step) {
    const m = stepMarkOf(run, box.step.node, box.step.index);
    return m ? { status: m.status, durationMs: m.durationMs, text: describe(m.status, m.statusCode, m.durationMs) } : null;
  }
  const node = box.kind === "response" ? (run.finished ? ROOT : null) : box.node;
  if (!node || box.kind === "exit" || box.kind === "request") return null;
  const m = nodeMarkOf(run, node);
  return m ? { status: m.status, durationMs: m.durationMs, text: describe(m.status, m.statusCode, m.durationMs) } : null;
}

/** The comparison's mark of a box (its step's, else its node's). */
export function boxMark(box: FlowBox, compare: CompareMarks | null | undefined): Mark | undefined {
  if (!compare || box.kind === "join") return undefined;
  if (box.step) return compare.steps.get(issueKey(box.step.node, box.step.index)) ?? (box.kind === "ref" ? undefined : compare.nodes.get(box.step.node) === "added" ? "added" : undefined);
  return box.node ? compare.nodes.get(box.node) : undefined;
}

/** The issues pinned to a box: its step's, or (decision, merge, empty boxes) its node's own. */
export function boxIssues(box: FlowBox, issues: IssueIndex): Issue[] {
  if (box.kind === "join") return [];
  if (box.step) return issues.byStep.get(issueKey(box.step.node, box.step.index)) ?? [];
  if (box.node && box.kind !== "exit") return issues.byNode.get(box.node) ?? [];
  if (box.kind === "request") return issues.graph;
  return [];
}
