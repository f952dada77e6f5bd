/**
 * Call ids are short per-run numbers (`b#3/0`: execution/engine/trace.py) and carry no path: the
 * console reads the nesting from each call's `parent_call_id`, and two runs are compared by the
 * position that chain gives, not by the ids (nested nodes are numbered in the order they start).
 */
import { describe, expect, it } from "vitest";
import type { Run, RunStepRow } from "../../api";
import { issueKey } from "../../graph/queries";
import { compareRuns } from "./compareRuns";
import { emptyConsole, reduceEvents } from "./console";
import { runMarks } from "./consoleMarks";
import { softFailures, stepLines } from "./consoleViews";
import type { RunEventMsg } from "./events";

function stream(events: [string, Record<string, unknown>][]): RunEventMsg[] {
  return events.map(([type, data], i) => ({ seq: i + 1, type, data: { attempt: 1, ...data } }));
}

const step = (type: string, call_id: string, parent_call_id: string | null, node: string, step_index: number, extra: Record<string, unknown> = {}): [string, Record<string, unknown>] => [
  type,
  { call_id, parent_call_id, node, step_index, step_name: null, ...extra },
];

/** root → (step 0) outer → (step 0) inner, whose Soft step fails; every level answers 200. */
const NESTED = stream([
  ["run.queued", { version: 1, environment: "local" }],
  ["run.started", { worker: "w" }],
  ["node.started", { call_id: "root", parent_call_id: null, node: "root", router_type: "Sequence" }],
  step("step.started", "root/0", null, "root", 0, { kind: "node" }),
  ["node.started", { call_id: "outer#1", parent_call_id: "root/0", node: "outer", router_type: "Sequence" }],
  step("step.started", "outer#1/0", "root/0", "outer", 0, { kind: "node" }),
  ["node.started", { call_id: "inner#2", parent_call_id: "outer#1/0", node: "inner", router_type: "Ensemble" }],
  step("step.started", "inner#2/0", "outer#1/0", "inner", 0, { kind: "http" }),
  step("step.finished", "inner#2/0", "outer#1/0", "inner", 0, { status: 503, outcome: "http-error" }),
  ["node.finished", { call_id: "inner#2", parent_call_id: "outer#1/0", node: "inner", status: 200, outcome: "ok" }],
  step("step.finished", "outer#1/0", "root/0", "outer", 0, { status: 200, outcome: "ok" }),
  ["node.finished", { call_id: "outer#1", parent_call_id: "root/0", node: "outer", status: 200, outcome: "ok" }],
  step("step.finished", "root/0", null, "root", 0, { status: 200, outcome: "ok" }),
  ["node.finished", { call_id: "root", parent_call_id: null, node: "root", status: 200, outcome: "ok" }],
]);

describe("nesting from the parent links", () => {
  it("indents each call one level below the nodeName step that led to it", () => {
    const s = reduceEvents(emptyConsole("r"), NESTED);
    expect(stepLines(s).map((l) => [l.callId, l.depth])).toEqual([
      ["root/0", 0],
      ["outer#1/0", 1],
      ["inner#2/0", 2],
    ]);
  });

  it("counts a soft failure two levels down below every step and node that led to it", () => {
    const s = reduceEvents(emptyConsole("r"), NESTED);
    expect(softFailures(s).map((l) => l.callId)).toEqual(["inner#2/0"]);
    const marks = runMarks(s);
    expect(marks.steps.get(issueKey("root", 0))?.softBelow).toBe(1);
    expect(marks.steps.get(issueKey("outer", 0))?.softBelow).toBe(1);
    expect(marks.nodes.get("root")?.softFailures).toBe(1);
    expect(marks.nodes.get("outer")?.softFailures).toBe(1);
    expect(marks.nodes.get("inner")?.softFailures).toBe(1);
  });
});

describe("comparing runs whose nested calls were numbered differently", () => {
  const row = (call_id: string, parent_call_id: string | null, node: string, step_index: number, body: string): RunStepRow =>
    ({
      attempt: 1,
      call_id,
      parent_call_id,
      node,
      step_index,
      step_name: null,
      kind: "node",
      target: "",
      request_headers: [],
      request: null,
      status_code: 200,
      content_type: null,
      response: { body, encoding: "utf-8", size: body.length, truncated: false },
      outcome: "ok",
      error: "",
    }) as unknown as RunStepRow;
  const run = (id: string, steps: RunStepRow[]): Run => ({ id, attempt: 1, steps }) as unknown as Run;

  it("aligns the steps by their place in the graph", () => {
    // An Ensemble's two members each call `leaf`; the second member's leaf started first in b.
    const a = run("a", [
      row("root/0", null, "root", 0, "{}"),
      row("root/1", null, "root", 1, "{}"),
      row("leaf#1/0", "root/0", "leaf", 0, '{"from":"x"}'),
      row("leaf#2/0", "root/1", "leaf", 0, '{"from":"y"}'),
    ]);
    const b = run("b", [
      row("root/0", null, "root", 0, "{}"),
      row("root/1", null, "root", 1, "{}"),
      row("leaf#2/0", "root/0", "leaf", 0, '{"from":"x"}'),
      row("leaf#1/0", "root/1", "leaf", 0, '{"from":"y"}'),
    ]);
    const rows = compareRuns(a, b);
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.a && r.b && !r.outputDiffers && !r.outcomeDiffers)).toBe(true);
    expect(new Set(rows.map((r) => r.position)).size).toBe(4);
  });
});
