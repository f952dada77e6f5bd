import { describe, expect, it } from "vitest";
import type { CompareMarks } from "../canvas/Canvas";
import { indexIssues } from "../graph/queries";
import type { NodeMark, RunMarks, StepMark } from "../graph/runMarks";
import { FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";
import { boxIssues, boxMark, boxRun } from "./marks";
import { project } from "./project";

const step = (status: StepMark["status"], durationMs: number | null = null): StepMark => ({ status, durationMs, statusCode: status === "ok" ? 200 : 500, calls: 1, lineKey: null, condition: null, note: null, softBelow: 0 });
const node = (status: NodeMark["status"], durationMs: number | null = null): NodeMark => ({ status, durationMs, statusCode: 200, route: null, softFailures: 0 });

describe("marks on the Flow view's boxes", () => {
  const model = project(graphOf(FACE_RECOGNITION));
  const box = (id: string) => model.boxes.find((b) => b.id === id)!;

  it("a finished run: outcome and latency per box, soft failures apart, the rest never reached", () => {
    const run: RunMarks = {
      runId: "r",
      finished: true,
      nodes: new Map([
        ["root", node("ok", 40)],
        ["match", node("ok", 12)],
      ]),
      steps: new Map([
        ["root#0", step("ok", 5)],
        ["match#0", step("soft-failed", 3)],
        ["match#1", step("ok", 4)],
      ]),
    };
    expect(boxRun(box("root/0"), run)).toEqual({ status: "ok", durationMs: 5, text: "succeeded (200) in 5 ms" });
    expect(boxRun(box("root/2>match/0"), run)?.status).toBe("soft-failed");
    expect(boxRun(box("root/2>match/0"), run)?.text).toContain("the graph went on (Soft dependency)");
    expect(boxRun(box("root/3"), run)?.status).toBe("not-reached");
    expect(boxRun(box("root/2>match:merge"), run)).toMatchObject({ status: "ok", durationMs: 12 });
    expect(boxRun(box("response"), run)).toMatchObject({ status: "ok", durationMs: 40 });
    expect(boxRun(box("request"), run)).toBeNull();
    expect(boxRun(box("root/0"), null)).toBeNull();
  });

  it("a running run marks only what it reached", () => {
    const run: RunMarks = { runId: "r", finished: false, nodes: new Map(), steps: new Map([["root#0", step("running")]]) };
    expect(boxRun(box("root/0"), run)?.status).toBe("running");
    expect(boxRun(box("root/1"), run)).toBeNull();
    expect(boxRun(box("response"), run)).toBeNull();
  });

  it("comparison marks and issues by step, or by node for decision and merge boxes", () => {
    const compare: CompareMarks = { nodes: new Map([["match", "changed"]]), steps: new Map([["root#1", "added"]]), removedSteps: new Map() };
    expect(boxMark(box("root/1"), compare)).toBe("added");
    expect(boxMark(box("root/0"), compare)).toBeUndefined();
    expect(boxMark(box("root/2>match:merge"), compare)).toBe("changed");
    const state = graphOf(FACE_RECOGNITION);
    const issues = indexIssues(state, [
      { code: "x", severity: "error", message: "bad step", node: "root", step: 1 },
      { code: "y", severity: "warning", message: "node warning", node: "match" },
      { code: "z", severity: "error", message: "graph", node: null },
    ]);
    expect(boxIssues(box("root/1"), issues).map((i) => i.message)).toEqual(["bad step"]);
    expect(boxIssues(box("root/2>match:merge"), issues).map((i) => i.message)).toEqual(["node warning"]);
    expect(boxIssues(box("request"), issues).map((i) => i.message)).toEqual(["graph"]);
    expect(boxIssues(box("root/0"), issues)).toEqual([]);
  });
});
