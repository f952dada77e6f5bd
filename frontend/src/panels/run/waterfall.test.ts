/** The waterfall's pure model: bars on one time axis, nesting, parallel calls and the critical path. */
import { describe, expect, it } from "vitest";
import { emptyConsole, reduceEvents } from "./console";
import type { RunEventMsg } from "./events";
import { buildWaterfall, overlaps, tickStep } from "./waterfall";

const T0 = 1_700_000_000;

/** Events of one run: each call as [callId, parentCallId, node, index, name, kind, startMs, endMs | null]. */
function runEvents(calls: [string, string | null, string, number, string, "http" | "node", number, number | null][], nodes: Record<string, string> = {}): RunEventMsg[] {
  const timeline: { at: number; type: string; data: Record<string, unknown> }[] = [];
  for (const [callId, parent, node, index, name, kind, start, end] of calls) {
    const where = { attempt: 1, call_id: callId, parent_call_id: parent, node, step_index: index, step_name: name, target: kind === "http" ? `http://m/${name}` : name };
    timeline.push({ at: start, type: "step.started", data: { ...where, kind, request: { body: "{}", encoding: "utf-8", size: 2, truncated: false } } });
    if (end !== null) timeline.push({ at: end, type: "step.finished", data: { ...where, status: 200, outcome: "ok", duration_ms: end - start, response: null, content_type: null, error: null } });
  }
  for (const [callId, router] of Object.entries(nodes)) timeline.push({ at: -1, type: "node.started", data: { attempt: 1, call_id: callId, node: callId.split("#")[0], router_type: router } });
  timeline.sort((a, b) => a.at - b.at);
  const events: RunEventMsg[] = [{ seq: 1, type: "run.started", data: { attempt: 1, worker: "w" } }];
  for (const item of timeline) events.push({ seq: events.length + 1, type: item.type, data: { ...item.data, at: T0 + Math.max(0, item.at) / 1000 } });
  return events;
}

// A Sequence: detect, then a nodeName step into an Ensemble of a (slow) and b (fast), then merge.
const FACE = runEvents(
  [
    ["root/0", null, "root", 0, "detect", "http", 0, 10],
    ["root/1", null, "root", 1, "match", "node", 10, 62],
    ["match#1/0", "root/1", "match", 0, "a", "http", 11, 60],
    ["match#1/1", "root/1", "match", 1, "b", "http", 11, 40],
    ["root/2", null, "root", 2, "merge", "http", 62, 70],
  ],
  { root: "Sequence", "match#1": "Ensemble" },
);

describe("the waterfall", () => {
  it("nests each node's steps under it and a nodeName step's node under that step", () => {
    const w = buildWaterfall(reduceEvents(emptyConsole("r"), FACE));
    expect(w.rows.map((r) => [r.kind, r.callId, r.depth])).toEqual([
      ["node", "root", 0],
      ["step", "root/0", 1],
      ["step", "root/1", 1],
      ["node", "match#1", 2],
      ["step", "match#1/0", 3],
      ["step", "match#1/1", 3],
      ["step", "root/2", 1],
    ]);
    expect(w.rows[0].label).toBe("root (Sequence)");
    expect(w.rows[3].label).toBe("match (Ensemble)");
  });

  it("puts every bar on one time axis from the first call's start", () => {
    const w = buildWaterfall(reduceEvents(emptyConsole("r"), FACE));
    const bar = Object.fromEntries(w.rows.map((r) => [r.callId, [Math.round(r.startMs!), Math.round(r.endMs!)]]));
    expect(bar).toEqual({ root: [0, 70], "root/0": [0, 10], "root/1": [10, 62], "match#1": [11, 60], "match#1/0": [11, 60], "match#1/1": [11, 40], "root/2": [62, 70] });
    expect(Math.round(w.totalMs)).toBe(70);
    expect(w.ticks[0]).toBe(0);
    expect(w.ticks.at(-1)!).toBeLessThanOrEqual(70);
  });

  it("shows an Ensemble's branches side by side and marks only its slowest as critical", () => {
    const w = buildWaterfall(reduceEvents(emptyConsole("r"), FACE));
    const row = (id: string) => w.rows.find((r) => r.callId === id)!;
    expect(overlaps(row("match#1/0"), row("match#1/1"))).toBe(true);
    expect(overlaps(row("root/0"), row("root/2"))).toBe(false);
    expect(w.rows.filter((r) => r.critical).map((r) => r.callId)).toEqual(["root", "root/0", "root/1", "match#1", "match#1/0", "root/2"]);
    expect(w.criticalPath).toEqual(["root › detect", "match › a", "root › merge"]);
  });

  it("follows the branch that was slower whichever it is", () => {
    const swapped = runEvents([
      ["root/0", null, "root", 0, "a", "http", 0, 20],
      ["root/1", null, "root", 1, "b", "http", 0, 35],
    ]);
    const w = buildWaterfall(reduceEvents(emptyConsole("r"), swapped));
    expect(w.rows.filter((r) => r.kind === "step" && r.critical).map((r) => r.label)).toEqual(["root › b"]);
  });

  it("draws a call still running up to now", () => {
    const running = runEvents([["root/0", null, "root", 0, "slow", "http", 0, null]]);
    const w = buildWaterfall(reduceEvents(emptyConsole("r"), running), T0 + 0.5);
    const step = w.rows.find((r) => r.kind === "step")!;
    expect(step.status).toBe("running");
    expect(Math.round(step.endMs!)).toBe(500);
  });

  it("is empty before any step", () => {
    const w = buildWaterfall(emptyConsole("r"));
    expect(w.rows).toEqual([]);
    expect(w.totalMs).toBe(0);
  });

  it("spaces ticks 1, 2 or 5 times a power of ten apart", () => {
    expect(tickStep(70)).toBe(20);
    expect(tickStep(1000)).toBe(500);
    expect(tickStep(4)).toBe(1);
    expect(tickStep(0)).toBe(1);
    expect(tickStep(70, 10)).toBe(10);
  });
});
