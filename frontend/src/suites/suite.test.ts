import { describe, expect, it } from "vitest";
import { exportNote } from "./useExportNote";
import { budgetText, budgetVerdict, suiteLabel, countsText, fraction, isTerminalSuite, progressOf, reduceSuiteEvent, resultsToShow, visibleLength, type SuiteEvent, type SuiteProgress, type SuiteRun } from "./suite";

const QUEUED: SuiteRun = {
  id: "s-1",
  graph: "pets",
  version: 3,
  environment: "local",
  status: "queued",
  counts: { total: 2, passed: 0, failed: 0, error: 0, cancelled: 0, finished: 0 },
  cases_digest: "abc",
  created_at: "2026-11-30T22:10:00Z",
  started_at: null,
  finished_at: null,
  duration_ms: null,
  results: [
    { case: 1, name: "cat", outcome: "pending", run: null, duration_ms: null, failures: [], error: null },
    { case: 2, name: "dog", outcome: "pending", run: null, duration_ms: null, failures: [], error: null },
  ],
};

const FAILURE = { index: 1, kind: "path", message: "expected 'cat', got 'dog'", expected: "cat", actual: "dog", diff: [{ path: "$", op: "changed", expected: "cat", actual: "dog" }] };

const EVENTS: SuiteEvent[] = [
  { seq: 1, type: "suite.started", data: { total: 2 } },
  { seq: 2, type: "case.started", data: { case: 1, name: "cat", run: "r-1" } },
  { seq: 3, type: "case.started", data: { case: 2, name: "dog", run: "r-2" } },
  { seq: 4, type: "case.finished", data: { case: 2, name: "dog", outcome: "passed", run: "r-2", failures: [], duration_ms: 12, counts: { total: 2, passed: 1, failed: 0, error: 0, finished: 1 } } },
  { seq: 5, type: "case.finished", data: { case: 1, name: "cat", outcome: "failed", run: "r-1", failures: [FAILURE], duration_ms: 30, counts: { total: 2, passed: 1, failed: 1, error: 0, finished: 2 } } },
  { seq: 6, type: "suite.finished", data: { status: "failed", counts: { total: 2, passed: 1, failed: 1, error: 0, finished: 2 }, duration_ms: 55 } },
];

const fold = (events: SuiteEvent[], from: SuiteProgress = progressOf(QUEUED)) => events.reduce(reduceSuiteEvent, from);

describe("reduceSuiteEvent", () => {
  it("suite.finished brings the budget verdict; none stated is null", () => {
    const verdict = { passed: false, checks: [{ target: "graph", budget_ms: 1, measured_ms: 41.5, passed: false }, { target: "root/bird", budget_ms: 50, measured_ms: null, passed: null }] };
    const finished = { ...EVENTS[5], data: { ...EVENTS[5].data, budgets: verdict } };
    expect(fold([...EVENTS.slice(0, 5), finished]).budgets).toEqual(verdict);
    expect(fold(EVENTS).budgets).toBeNull();
    expect(fold([...EVENTS.slice(0, 5), { ...EVENTS[5], data: { ...EVENTS[5].data, budgets: null } }]).budgets).toBeNull();
  });
  it("fills the counts case by case and ends with the suite's status", () => {
    const steps = EVENTS.map((_, i) => fold(EVENTS.slice(0, i + 1)));
    expect(steps.map((s) => s.counts.finished)).toEqual([0, 0, 0, 1, 2, 2]);
    expect(steps.map((s) => s.status)).toEqual(["running", "running", "running", "running", "running", "failed"]);
    const end = steps[5];
    expect(end.durationMs).toBe(55);
    expect(end.results.map((r) => [r.name, r.outcome, r.run])).toEqual([
      ["cat", "failed", "r-1"],
      ["dog", "passed", "r-2"],
    ]);
    expect(end.results[0].failures).toEqual([FAILURE]);
    expect(isTerminalSuite(end.status)).toBe(true);
  });
  it("a case running shows as running until it finishes", () => {
    expect(fold(EVENTS.slice(0, 2)).results[0]).toMatchObject({ outcome: "running", run: "r-1" });
  });
  it("an event seen before (a reconnection sends it again) changes nothing", () => {
    const once = fold(EVENTS);
    expect(reduceSuiteEvent(once, EVENTS[3])).toBe(once);
    expect(fold([...EVENTS.slice(0, 4), EVENTS[3], ...EVENTS.slice(4)])).toEqual(once);
  });
  it("a case the object did not list is added when its events come", () => {
    const s = fold([{ seq: 1, type: "case.finished", data: { case: 9, name: "new", outcome: "error", run: null, failures: [], error: "no such step", counts: { total: 3, passed: 0, failed: 0, error: 1, finished: 1 } } }]);
    expect(s.results.at(-1)).toMatchObject({ case: 9, outcome: "error", error: "no such step" });
    expect(s.counts.total).toBe(3);
  });
  it("a cancelled suite says how many finished", () => {
    const s = fold([...EVENTS.slice(0, 4), { seq: 5, type: "suite.finished", data: { status: "cancelled", counts: { total: 2, passed: 1, failed: 0, error: 0, cancelled: 1, finished: 1 }, duration_ms: 20 } }]);
    expect(s.status).toBe("cancelled");
    expect(countsText(s.counts)).toBe("1/2 · 1 passed · 0 failed · 0 errors · 1 cancelled");
  });
});

describe("helpers", () => {
  it("fraction and text of the counts", () => {
    expect(fraction({ total: 0, passed: 0, failed: 0, error: 0, cancelled: 0, finished: 0 })).toBe(0);
    expect(fraction({ total: 4, passed: 1, failed: 0, error: 0, cancelled: 0, finished: 1 })).toBe(0.25);
    expect(countsText({ total: 4, passed: 2, failed: 1, error: 1, cancelled: 0, finished: 4 })).toBe("4/4 · 2 passed · 1 failed · 1 error");
  });
  it("failed and errored cases come first", () => {
    const s = fold(EVENTS);
    expect(resultsToShow(s.results).map((r) => r.name)).toEqual(["cat", "dog"]);
    const mixed = [
      { ...s.results[1], name: "a" },
      { ...s.results[1], name: "b", outcome: "error" as const },
      { ...s.results[0], name: "c" },
    ];
    expect(resultsToShow(mixed).map((r) => r.name)).toEqual(["c", "b", "a"]);
  });
});

describe("suiteLabel", () => {
  it("says a version's latest suite result", () => {
    const counts = { total: 3, passed: 2, failed: 1, error: 0, finished: 3 };
    expect(suiteLabel({ status: "failed", counts, environment: "local", current: true })).toBe("1/3 failed · local");
    expect(suiteLabel({ status: "passed", counts: { ...counts, passed: 3, failed: 0 }, environment: null, current: false })).toBe("3/3 passed · older cases");
    expect(suiteLabel({ status: "cancelled", counts: { ...counts, finished: 1 }, environment: null, current: true })).toBe("cancelled at 1/3");
    expect(suiteLabel({ status: "running", counts, environment: null, current: true })).toBe("running");
    expect(suiteLabel({ status: "passed", counts: { ...counts, passed: 3, failed: 0 }, environment: "bobs-box", current: true, gate: false })).toBe("3/3 passed · bobs-box · not trusted");
  });
});

describe("exportNote", () => {
  const counts = { total: 2, passed: 2, failed: 0, error: 0, finished: 2 };
  it("says whether the version passed on the current cases and whether the gate will ask", () => {
    expect(exportNote(3, null, true)).toBe("v3 has no suite run; exporting asks for a reason.");
    expect(exportNote(3, { suite_run: "s", status: "passed", counts, environment: "local", current: true, gate: true, finished_at: null }, true)).toBe("v3 passed its suite (2/2 passed · local)");
    expect(exportNote(3, { suite_run: "s", status: "passed", counts, environment: null, current: false, gate: true, finished_at: null }, false)).toBe("v3 has no passing suite run (latest: 2/2 passed · older cases).");
  });
  it("does not call a pass green when the gate does not trust it", () => {
    expect(exportNote(3, { suite_run: "s", status: "passed", counts, environment: "bobs-box", current: true, gate: false, finished_at: null }, true)).toBe(
      "v3 has no passing suite run (latest: 2/2 passed · bobs-box · not trusted); exporting asks for a reason.",
    );
  });
});

describe("visibleLength", () => {
  it("counts what prints, as the server counts a forced export's reason", () => {
    expect(visibleLength("hotfix #12")).toBe(9);
    expect(visibleLength("\u200b\u2060\ufeff\u00a0 \u202e\u2066")).toBe(0);
    expect(visibleLength("x\u200by\u200bz")).toBe(3);
    expect(visibleLength("e\u0301té")).toBe(3); // a combining accent is not a character of its own
  });
});

describe("budgetVerdict", () => {
  it("reads the stored object's verdict, {} as none, and drops malformed checks", () => {
    expect(progressOf({ ...QUEUED, budgets: {} }).budgets).toBeNull();
    expect(budgetVerdict({ passed: true, checks: [{ target: "graph", budget_ms: 250, measured_ms: 12, passed: true }, { target: 3 }, null] })).toEqual({ passed: true, checks: [{ target: "graph", budget_ms: 250, measured_ms: 12, passed: true }] });
    expect(budgetVerdict("nonsense")).toBeNull();
  });
  it("says each budget in a line", () => {
    expect(budgetText({ target: "root/cat", budget_ms: 120, measured_ms: 41.5, passed: true })).toBe("p95 of root/cat: 41.50 ms, budget 120 ms");
    expect(budgetText({ target: "root/bird", budget_ms: 50, measured_ms: null, passed: null })).toBe("p95 of root/bird: not measured (never called), budget 50 ms");
  });
});
