import { describe, expect, it } from "vitest";
import { budgetsOf, formOf, stepTargets } from "./budgetsForm";

describe("latency budgets form", () => {
  it("reads the stored budgets and writes them back unchanged", () => {
    const stored = { graph_p95_ms: 250, steps: { "root/detect": 120, "root/1": 80 } };
    const form = formOf(stored);
    expect(form).toEqual({ graph: "250", steps: [{ target: "root/detect", ms: "120" }, { target: "root/1", ms: "80" }] });
    expect(budgetsOf(form)).toEqual({ budgets: stored, errors: {} });
  });
  it("none stated: empty fields, and empty fields save as none", () => {
    expect(formOf({})).toEqual({ graph: "", steps: [] });
    expect(formOf(null)).toEqual({ graph: "", steps: [] });
    expect(budgetsOf({ graph: " ", steps: [{ target: "", ms: "" }] })).toEqual({ budgets: { graph_p95_ms: null, steps: {} }, errors: {} });
  });
  it("names each field that does not read", () => {
    const { errors } = budgetsOf({
      graph: "fast",
      steps: [
        { target: "detect", ms: "10" },
        { target: "root/a", ms: "0" },
        { target: "root/b", ms: "5" },
        { target: "root/b", ms: "6" },
        { target: "root/c", ms: "90000000" },
      ],
    });
    expect(errors.graph).toBe('The graph\'s p95 budget must be a number of milliseconds, not "fast"');
    expect(errors["step-0-target"]).toMatch(/"detect" does not name a step/);
    expect(errors["step-1-ms"]).toBe("The p95 budget of root/a must be above 0 and at most 86400000 ms");
    expect(errors["step-2-target"]).toBeUndefined();
    expect(errors["step-3-target"]).toBe("root/b has a budget already");
    expect(errors["step-4-ms"]).toMatch(/at most 86400000 ms/);
  });
  it("lists a manifest's steps by name, else by index", () => {
    const manifest = { spec: { nodes: { root: { steps: [{ name: "detect" }, { serviceName: "x" }] }, other: { steps: [{ name: "" }] } } } };
    expect(stepTargets(manifest)).toEqual(["root/detect", "root/1", "other/0"]);
    expect(stepTargets({})).toEqual([]);
  });
});
