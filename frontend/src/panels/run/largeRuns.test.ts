/**
 * A long run stays usable in the console: its events are read a page at a time (every event once,
 * in order, stopping when another run is opened), folded in time linear in their number (a
 * batch never copies the lines once per event) without changing a state passed in, only the rows
 * in view are rendered, and a finished run shows how it ended from its detail alone.
 */
import { describe, expect, it } from "vitest";
import type { Run } from "../../api";
import { emptyConsole, finishedFromRun, reduceEvent, reduceEvents } from "./console";
import { progress, stepLines } from "./consoleViews";
import { parseEventLog, type RunEventMsg } from "./events";
import { readEventPages, type EventPage } from "./eventPages";
import { OVERSCAN, rowAt, rowOffsets, visibleWindow } from "./windowing";

/** A runaway run's events: queued, started, `steps` calls (two events each), finished (failed). */
function runawayEvents(steps: number): RunEventMsg[] {
  const events: RunEventMsg[] = [];
  const add = (type: string, data: Record<string, unknown>) => events.push({ seq: events.length + 1, type, created_at: null, data });
  add("run.queued", { version: 1, environment: "local" });
  add("run.started", { attempt: 1 });
  for (let i = 0; i < steps; i++) {
    const where = { attempt: 1, call_id: `root/${i % 2}>n${i}`, node: i % 2 ? "b" : "root", step_index: i % 2, step_name: null };
    add("node.started", { ...where, call_id: `n${i}` });
    add("step.started", { ...where, kind: "http", request: { body: { i }, encoding: "utf-8", size: 8, truncated: false } });
    add("step.finished", { ...where, status: 200, outcome: "ok", duration_ms: 1, response: { body: { i }, encoding: "utf-8", size: 8, truncated: false } });
  }
  add("run.finished", { attempt: 1, status: "failed", status_code: 500, error: "deadline", duration_ms: 30000, warnings: [] });
  return events;
}

describe("folding a long run", () => {
  it("folds 10,000 steps in one batch to the same state as one event at a time", () => {
    const events = runawayEvents(10_000);
    const batch = reduceEvents(emptyConsole("r"), events);
    expect(stepLines(batch)).toHaveLength(10_000);
    expect(batch.status).toBe("failed");
    expect(batch.lastSeq).toBe(events.length);
    expect(progress(batch).done).toBe(10_000);
    const small = events.slice(0, 400);
    const one = small.reduce(reduceEvent, emptyConsole("r"));
    expect(reduceEvents(emptyConsole("r"), small)).toEqual(one);
  });

  it("never changes a state passed in, in a batch or one event at a time", () => {
    const events = runawayEvents(50);
    const before = reduceEvents(emptyConsole("r"), events.slice(0, 60));
    const snapshot = JSON.parse(JSON.stringify(before)) as unknown;
    const lines = before.lines;
    const after = reduceEvents(before, events.slice(60));
    reduceEvent(before, events[60]);
    expect(JSON.parse(JSON.stringify(before))).toEqual(snapshot);
    expect(before.lines).toBe(lines);
    expect(after.lines).not.toBe(lines);
    expect(stepLines(after)).toHaveLength(50);
  });

  it("reads a page that says how many events there are and whether more follow", () => {
    const page = parseEventLog({ run: "r", finished: true, events: [], total: 32505, next: "http://x/?after=500" });
    expect(page).toMatchObject({ total: 32505, more: true });
    expect(parseEventLog({ run: "r", finished: false, events: [] })).toMatchObject({ total: null, more: false });
  });
});

describe("reading the events a page at a time", () => {
  const all = runawayEvents(300); // 903 events
  const server = (size: number) => {
    const asked: number[] = [];
    const fetchPage = async (after: number): Promise<EventPage> => {
      asked.push(after);
      const events = all.filter((e) => e.seq > after).slice(0, size);
      const last = events.length ? events[events.length - 1].seq : after;
      return { events, finished: true, total: all.length, more: last < all.length };
    };
    return { asked, fetchPage };
  };

  it("walks every page once, in order, and ends with the run's last event", async () => {
    const { asked, fetchPage } = server(250);
    let state = emptyConsole("r");
    const seen: number[] = [];
    const last = await readEventPages(0, fetchPage, (page) => {
      seen.push(page.events.length);
      state = reduceEvents(state, page.events);
      return state.lastSeq;
    }, () => true);
    expect(asked).toEqual([0, 250, 500, 750]);
    expect(seen).toEqual([250, 250, 250, 153]);
    expect(last?.more).toBe(false);
    expect(state.lastSeq).toBe(all.length);
    expect(state.status).toBe("failed");
  });

  it("stops as soon as another run is opened, handing nothing over after", async () => {
    const { asked, fetchPage } = server(100);
    let wanted = true;
    let pages = 0;
    const result = await readEventPages(0, fetchPage, (page) => {
      pages += 1;
      if (pages === 2) wanted = false;
      return page.events[page.events.length - 1].seq;
    }, () => wanted);
    expect(result).toBeNull();
    expect(pages).toBe(2);
    expect(asked).toEqual([0, 100, 200]);
  });

  it("ends on a page that brings nothing new, whatever it says of more", async () => {
    let calls = 0;
    const result = await readEventPages(5, async () => {
      calls += 1;
      return { events: [], finished: false, total: 9, more: true };
    }, () => 5, () => true);
    expect(calls).toBe(1);
    expect(result?.events).toEqual([]);
  });
});

describe("rendering only the rows in view", () => {
  it("renders a screenful (and the overscan) of 10,000 rows, with spacers for the rest", () => {
    const offsets = rowOffsets(10_000, () => 27);
    const top = visibleWindow(offsets, 0, 270);
    expect(top).toEqual({ start: 0, end: 11 + OVERSCAN, before: 0, after: (10_000 - 11 - OVERSCAN) * 27 });
    const middle = visibleWindow(offsets, 27 * 5000, 270);
    expect(middle.start).toBe(5000 - OVERSCAN);
    expect(middle.end).toBe(5011 + OVERSCAN);
    expect(middle.before + (middle.end - middle.start) * 27 + middle.after).toBe(offsets[10_000]);
    const bottom = visibleWindow(offsets, 27 * 10_000, 270);
    expect(bottom.end).toBe(10_000);
    expect(bottom.after).toBe(0);
  });

  it("places rows of different heights (an expanded line) where they are", () => {
    const offsets = rowOffsets(100, (i) => (i === 3 ? 500 : 20));
    expect(rowAt(offsets, 0)).toBe(0);
    expect(rowAt(offsets, 60)).toBe(3);
    expect(rowAt(offsets, 559)).toBe(3);
    expect(rowAt(offsets, 560)).toBe(4);
    expect(visibleWindow(offsets, 600, 40, 0)).toMatchObject({ start: 6, end: 9, before: 600 });
    expect(visibleWindow(rowOffsets(0, () => 20), 0, 100)).toEqual({ start: 0, end: 0, before: 0, after: 0 });
  });
});

describe("a finished run before its events", () => {
  it("shows how it ended from its detail alone", () => {
    const run = { status: "failed", error: "the deadline passed", duration_ms: 30000, response: { status_code: 504, content_type: "application/json", body: { error: "x" } } } as unknown as Run;
    expect(finishedFromRun(run)).toMatchObject({ status: "failed", statusCode: 504, error: "the deadline passed", durationMs: 30000 });
    expect(finishedFromRun({ ...run, status: "running" } as Run)).toBeNull();
    expect(finishedFromRun(null)).toBeNull();
  });
});
