import { describe, expect, it } from "vitest";
import { fractionDone, isTerminalLoad, liveOf, ms, reduceLoadEvent, seriesRows, summaryOf, warningsByField } from "./loadTest";

const queued = liveOf({ id: "x", status: "queued", requests: 100 });

describe("a load test's live progress", () => {
  it("follows its events in order and ends with the final one", () => {
    let s = reduceLoadEvent(queued, { seq: 1, type: "load.queued", data: { requests: 100, concurrency: 4 } });
    s = reduceLoadEvent(s, { seq: 2, type: "load.started", data: { worker: "w" } });
    expect(s.status).toBe("running");
    const progress = { requests: 100, completed: 40, errors: 1, elapsed_s: 1, throughput_rps: 40, p50_ms: 10, p95_ms: 20 };
    s = reduceLoadEvent(s, { seq: 3, type: "load.progress", data: { progress } });
    expect(fractionDone(s.progress)).toBe(0.4);
    expect(reduceLoadEvent(s, { seq: 3, type: "load.progress", data: { progress: { ...progress, completed: 99 } } })).toBe(s);
    s = reduceLoadEvent(s, { seq: 4, type: "load.finished", data: { status: "cancelled", progress: { ...progress, completed: 50 }, budget_passed: false, error: null } });
    expect([s.status, s.progress.completed, s.budgetPassed, isTerminalLoad(s.status)]).toEqual(["cancelled", 50, false, true]);
  });
});

describe("summaries and budgets", () => {
  it("reads a summary only once there is one, graph row first", () => {
    expect(summaryOf({})).toBeNull();
    const series = { count: 1, p50_ms: 1, p95_ms: 2, p99_ms: 3, histogram: [], statuses: {}, errors: 0, error_rate: 0, mean_ms: 1, min_ms: 1, max_ms: 1 };
    const summary = summaryOf({ completed: 1, elapsed_s: 1, throughput_rps: 1, errors: 0, error_rate: 0, graph: series, steps: { "root/a": series } });
    expect(summary && seriesRows(summary).map((r) => r.name)).toEqual(["whole graph", "root/a"]);
  });

  it("pins each budget warning to its field", () => {
    const byField = warningsByField([
      { code: "budget.timeout", severity: "warning", message: "serverWrite 60 s leaves no room", path: "spec.routerTimeouts.serverWrite" },
      { code: "budget.timeout", severity: "warning", message: "and again", path: "spec.routerTimeouts.serverWrite" },
    ]);
    expect(byField.get("spec.routerTimeouts.serverWrite")).toBe("serverWrite 60 s leaves no room and again");
  });

  it("formats milliseconds to a sensible precision", () => {
    expect([ms(null), ms(0.456), ms(12.34), ms(1234.5)]).toEqual(["–", "0.46", "12.3", "1235"]);
  });
});
