import { describe, expect, it } from "vitest";
import { caseMarks, casesToShow, stepOfLabel, type CaseComparison, type RunComparison } from "./compare";

const side = (status: number, outcome = "ok") => ({ status, outcome, duration_ms: 3 });
const step = (label: string, changed: string[]) => ({ label, node: null, a: side(200), b: side(changed.includes("status") ? 500 : 200), changed, request_diff: [], response_diff: [] });

const NODES = [
  { name: "root", steps: ["pick", "echo"] },
  { name: "pets", steps: ["cat", null] },
];

describe("stepOfLabel", () => {
  it("reads the last level of a label path", () => {
    expect(stepOfLabel("root/pick>pets/cat")).toEqual({ node: "pets", step: "cat" });
    expect(stepOfLabel("root/1")).toEqual({ node: "root", step: "1" });
    expect(stepOfLabel("root")).toBeNull();
    expect(stepOfLabel("root/")).toBeNull();
  });
});

describe("caseMarks", () => {
  it("marks the changed steps (by name or index) and their nodes, and nodes that routed differently", () => {
    const cmp: RunComparison = {
      same: false,
      status: [200, 200],
      duration_ms: [10, 12],
      body_diff: [],
      routes: [{ node: "root/pick>pets", a: ["cat"], b: ["1"] }],
      steps: [step("root/pick", []), step("root/pick>pets/cat", ["response"]), step("root/pick>pets/1", ["presence"]), step("root/echo", [])],
    };
    const marks = caseMarks(cmp, NODES);
    expect([...marks.steps.keys()]).toEqual(["pets#0", "pets#1"]);
    expect([...marks.nodes.keys()]).toEqual(["pets"]);
  });
  it("a step version B does not have is skipped; no comparison marks nothing", () => {
    const cmp: RunComparison = { same: false, status: [200, 500], duration_ms: [1, 1], body_diff: [], routes: [], steps: [step("root/gone", ["presence"]), step("root/echo", ["status"])] };
    const marks = caseMarks(cmp, NODES);
    expect([...marks.steps.keys()]).toEqual(["root#1"]);
    expect(caseMarks(null, NODES).nodes.size).toBe(0);
  });
});

describe("casesToShow", () => {
  it("puts the changed cases first", () => {
    const c = (name: string, changed: boolean): CaseComparison => ({ case: name.length, name, a: null, b: null, changed, comparison: null });
    expect(casesToShow([c("a", false), c("b", true), c("c", false), c("d", true)]).map((x) => x.name)).toEqual(["b", "d", "a", "c"]);
  });
});
