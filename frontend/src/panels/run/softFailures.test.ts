/**
 * Failure colouring: failures the graph went on from (Soft dependencies) are
 * marked apart from failures that stopped it, the summary names the first failure, and what the
 * run never reached is marked as such. The streams are small hand-written ones in the shape of
 * execution/engine/trace.py's events.
 */
import { describe, expect, it } from "vitest";
import { issueKey } from "../../graph/queries";
import { nodeMarkOf, stepMarkOf } from "../../graph/runMarks";
import { emptyConsole, reduceEvents } from "./console";
import { runMarks } from "./consoleMarks";
import { failureCause, softFailures } from "./consoleViews";
import type { RunEventMsg } from "./events";

function stream(events: [string, Record<string, unknown>][]): RunEventMsg[] {
  return events.map(([type, data], i) => ({ seq: i + 1, type, data: { attempt: 1, ...data } }));
}

const started = (call_id: string, node: string, step_index: number, step_name: string, parent_call_id: string | null = null): [string, Record<string, unknown>] => [
  "step.started",
  { call_id, parent_call_id, node, step_index, step_name },
];
const finished = (call_id: string, node: string, step_index: number, status: number, parent_call_id: string | null = null): [string, Record<string, unknown>] => [
  "step.finished",
  { call_id, parent_call_id, node, step_index, status, outcome: status < 300 ? "ok" : "http-error", duration_ms: 3 },
];

/** root: Sequence [match (nodeName → Ensemble, both members Soft and failing), tail]; `unused` never called. */
const ENSEMBLE_SOFT = stream([
  ["run.queued", { version: 1, environment: "local" }],
  ["run.started", { worker: "w" }],
  ["node.started", { call_id: "root", node: "root", router_type: "Sequence" }],
  started("root/0", "root", 0, "match"),
  ["node.started", { call_id: "match#1", parent_call_id: "root/0", node: "match", router_type: "Ensemble" }],
  started("match#1/0", "match", 0, "db-employees", "root/0"),
  started("match#1/1", "match", 1, "db-visitors", "root/0"),
  finished("match#1/0", "match", 0, 500, "root/0"),
  finished("match#1/1", "match", 1, 503, "root/0"),
  ["node.finished", { call_id: "match#1", parent_call_id: "root/0", node: "match", status: 200, outcome: "ok" }],
  finished("root/0", "root", 0, 200),
  started("root/1", "root", 1, "tail"),
  finished("root/1", "root", 1, 200),
  ["node.finished", { call_id: "root", node: "root", status: 200, outcome: "ok" }],
  ["run.finished", { status: "succeeded", status_code: 200 }],
]);

/** root: Sequence [a (Soft, 500), b (Soft, 503)]: the sequence went on after a, then answered 503. */
const TWO_FAILURES = stream([
  ["run.queued", { version: 1, environment: "local" }],
  ["run.started", { worker: "w" }],
  ["node.started", { call_id: "root", node: "root", router_type: "Sequence" }],
  started("root/0", "root", 0, "a"),
  finished("root/0", "root", 0, 500),
  started("root/1", "root", 1, "b"),
  finished("root/1", "root", 1, 503),
  ["node.finished", { call_id: "root", node: "root", status: 503, outcome: "http-error" }],
  ["run.finished", { status: "failed", status_code: 503 }],
]);

describe("failures the graph went on from", () => {
  it("marks an Ensemble's failing Soft members apart from a failure that stopped the graph", () => {
    const s = reduceEvents(emptyConsole("r"), ENSEMBLE_SOFT);
    expect(softFailures(s).map((l) => l.callId)).toEqual(["match#1/0", "match#1/1"]);
    const marks = runMarks(s);
    expect(marks.steps.get(issueKey("match", 0))?.status).toBe("soft-failed");
    expect(marks.steps.get(issueKey("match", 1))?.status).toBe("soft-failed");
    expect(marks.steps.get(issueKey("match", 1))?.note).toContain("went on");
  });

  it("flags the Sequence step that called the Ensemble: it answered 200 with two failures below", () => {
    const marks = runMarks(reduceEvents(emptyConsole("r"), ENSEMBLE_SOFT));
    const caller = marks.steps.get(issueKey("root", 0));
    expect(caller).toMatchObject({ status: "ok", statusCode: 200, softBelow: 2 });
    expect(marks.steps.get(issueKey("root", 1))?.softBelow).toBe(0);
    expect(marks.nodes.get("root")?.softFailures).toBe(2);
    expect(marks.nodes.get("match")?.softFailures).toBe(2);
  });

  it("counts a Sequence step followed by another step as gone on from, and not the step that ended it", () => {
    const s = reduceEvents(emptyConsole("r"), TWO_FAILURES);
    expect(softFailures(s).map((l) => l.callId)).toEqual(["root/0"]);
    const marks = runMarks(s);
    expect(marks.steps.get(issueKey("root", 0))?.status).toBe("soft-failed");
    expect(marks.steps.get(issueKey("root", 1))?.status).toBe("failed");
  });
});

describe("the failure summary", () => {
  it("names the first failing step, not the last", () => {
    const cause = failureCause(reduceEvents(emptyConsole("r"), TWO_FAILURES));
    expect(cause).toContain("root › a answered 500 first");
    expect(cause).not.toContain("root › b");
  });
  it("says nothing for a run that succeeded despite soft failures", () => {
    expect(failureCause(reduceEvents(emptyConsole("r"), ENSEMBLE_SOFT))).toBeNull();
  });
});

describe("what the run never reached", () => {
  it("marks nodes and steps without a mark as not reached once the run has ended", () => {
    const marks = runMarks(reduceEvents(emptyConsole("r"), ENSEMBLE_SOFT));
    expect(marks.finished).toBe(true);
    expect(nodeMarkOf(marks, "unused")?.status).toBe("not-reached");
    expect(stepMarkOf(marks, "unused", 0)?.status).toBe("not-reached");
    expect(nodeMarkOf(marks, "root")?.status).toBe("ok");
  });
  it("marks nothing as not reached while the run is in flight", () => {
    const marks = runMarks(reduceEvents(emptyConsole("r"), ENSEMBLE_SOFT.slice(0, 6)));
    expect(marks.finished).toBe(false);
    expect(nodeMarkOf(marks, "unused")).toBeUndefined();
    expect(stepMarkOf(marks, "root", 1)).toBeUndefined();
  });
});
