/**
 * The run console's pure parts: events -> console lines and canvas marks, dedupe and ordering,
 * replay from the stored events, run comparison, and the browser-side samples store.
 *
 * `__fixtures__/events.json` holds the event streams of real runs of the demo graphs
 * (execution/devtools/demo.py) and two small graphs, recorded from the backend with the mock model server
 * (only timestamps, URLs' host and the worker name were made stable). Their `run.finished` carries
 * the graph's answer (the root node's output) as the backend stores it since the events got one
 * declaration (execution/eventschema.py).
 */
import { describe, expect, it } from "vitest";
import type { Run } from "../../api";
import { issueKey } from "../../graph/queries";
import eventsJson from "./__fixtures__/events.json";
import hardRunJson from "./__fixtures__/hard-run.json";
import { compareRuns, sameResponse } from "./compareRuns";
import { formatMs, formatSize } from "../../graph/format";
import { showBody } from "./bodies";
import { emptyConsole, hasGap, reduceEvent, reduceEvents, skipGap } from "./console";
import { runMarks } from "./consoleMarks";
import { failureCause, otherStepFields, progress, stepLines } from "./consoleViews";
import { parseEventData, parseEventLog, type RunEventMsg } from "./events";
import { deleteSample, headersObject, loadDraft, loadSamples, parsePayload, rememberRun, rememberedRun, saveDraft, saveSample } from "./samples";

const streams = eventsJson as unknown as Record<"face-recognition" | "animal-switch" | "hard" | "spl" | "cat-dog-breed", RunEventMsg[]>;
const hardRun = hardRunJson as unknown as Run;

function fold(events: RunEventMsg[], runId = "r1") {
  return reduceEvents(emptyConsole(runId), events);
}

function shuffled<T>(items: T[], seed: number): T[] {
  const out = items.slice();
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe("events -> console lines", () => {
  it("shows every step of the face-recognition run with its position, status, latency and bodies", () => {
    const s = fold(streams["face-recognition"]);
    const steps = stepLines(s);
    expect(steps.map((l) => l.callId)).toEqual(["root/0", "root/1", "root/2", "root/2>match/0", "root/2>match/1", "root/3"]);
    expect(steps.every((l) => l.status === "ok" && l.statusCode === 200 && typeof l.durationMs === "number")).toBe(true);
    const visitors = steps.find((l) => l.callId === "root/2>match/1")!;
    expect(visitors).toMatchObject({ node: "match", stepIndex: 1, stepName: "db-visitors", depth: 1, parentCallId: "root/2", stepKind: "http", method: "POST" });
    expect(visitors.target).toContain("face-db-visitors");
    expect(showBody(visitors.response)!.text).toContain('"database": "visitors"');
    expect(steps[2]).toMatchObject({ stepKind: "node", target: "match", depth: 0 });
    expect(s.status).toBe("succeeded");
    expect(s.finished).toMatchObject({ status: "succeeded", statusCode: 200, contentType: "application/json" });
    expect(s.nodes["root"].output!.body).toContain("identities");
    expect(progress(s)).toEqual({ done: 6, running: 0, failed: 0, skipped: 0 });
    expect(failureCause(s)).toBeNull();
  });

  it("a step is one line from step.started to step.finished, running in between", () => {
    const events = streams["face-recognition"];
    const upToStart = events.slice(0, events.findIndex((e) => e.type === "step.started") + 1);
    const mid = fold(upToStart);
    expect(stepLines(mid)).toHaveLength(1);
    expect(stepLines(mid)[0]).toMatchObject({ status: "running", durationMs: null, response: null });
    expect(stepLines(mid)[0].request!.body).toContain("instances");
    expect(progress(mid)).toMatchObject({ done: 0, running: 1 });
    expect(mid.status).toBe("running");
  });

  it("a Switch run tells which condition matched and what each evaluated to", () => {
    const s = fold(streams["animal-switch"]);
    const route = s.lines.find((l) => l.kind === "route");
    expect(route?.kind === "route" && route.text).toMatch(/Switch root: step 1 "dog" matched \(cat ✗, dog ✓\)/);
    expect(stepLines(s).map((l) => l.callId)).toEqual(["root/1"]);
  });

  it("a Hard failure stops the Sequence and the console says where and why", () => {
    const s = fold(streams.hard);
    const steps = stepLines(s);
    expect(steps.map((l) => [l.callId, l.status, l.statusCode])).toEqual([
      ["root/0", "ok", 200],
      ["root/1", "failed", 404],
      ["root/2", "skipped", null],
    ]);
    expect(steps[2].skipReason).toBe("after-hard-failure");
    expect(s.status).toBe("failed");
    expect(failureCause(s)).toBe("root › b (a Hard dependency) answered 404, so root stopped there.");
    expect(progress(s)).toEqual({ done: 2, running: 0, failed: 1, skipped: 1 });
  });

  it("an unmet Sequence condition skips the step with the condition it evaluated", () => {
    const s = fold(streams["cat-dog-breed"]);
    const breed = stepLines(s).find((l) => l.stepName === "breed")!;
    expect(breed.status).toBe("skipped");
    expect(breed.condition).toMatchObject({ condition: '[@this].#(predictions.0=="dog")', matches: false, reason: "path not found" });
    expect(s.status).toBe("succeeded");
  });

  it("a run cancelled mid-step ends the running step as cancelled and says why", () => {
    const events: RunEventMsg[] = [
      { seq: 1, type: "run.queued", data: { version: 2, environment: "slow" } },
      { seq: 2, type: "run.started", data: { attempt: 1 } },
      { seq: 3, type: "node.started", data: { attempt: 1, call_id: "root", node: "root", router_type: "Sequence" } },
      { seq: 4, type: "step.started", data: { attempt: 1, call_id: "root/0", node: "root", step_index: 0, step_name: "a", kind: "http" } },
      { seq: 5, type: "run.cancel_requested", data: { by: "erin" } },
      { seq: 6, type: "run.finished", data: { status: "cancelled", status_code: null, error: "Cancelled while running.", attempt: 1 } },
    ];
    const s = fold(events);
    expect(s.cancelRequested).toBe(true);
    expect(stepLines(s)[0]).toMatchObject({ status: "cancelled", error: "Cancelled while running." });
    expect(s.nodes.root.status).toBe("cancelled");
    expect(failureCause(s)).toBe("Cancelled while running.");
    expect(runMarks(s).steps.get(issueKey("root", 0))?.status).toBe("cancelled");
  });

  it("a second attempt starts afresh: the first attempt's lines stay, the marks follow the new one", () => {
    const events: RunEventMsg[] = [
      { seq: 1, type: "run.queued", data: {} },
      { seq: 2, type: "run.started", data: { attempt: 1 } },
      { seq: 3, type: "step.started", data: { attempt: 1, call_id: "root/0", node: "root", step_index: 0 } },
      { seq: 4, type: "run.requeued", data: { reason: "The worker stopped responding.", attempt: 1, next_attempt: 2 } },
      { seq: 5, type: "run.started", data: { attempt: 2 } },
      { seq: 6, type: "step.started", data: { attempt: 2, call_id: "root/0", node: "root", step_index: 0 } },
      { seq: 7, type: "step.finished", data: { attempt: 2, call_id: "root/0", node: "root", step_index: 0, status: 200, outcome: "ok", duration_ms: 3 } },
    ];
    const s = fold(events);
    expect(s.attempt).toBe(2);
    expect(stepLines(s).map((l) => [l.attempt, l.status])).toEqual([
      [1, "failed"],
      [2, "ok"],
    ]);
    expect(runMarks(s).steps.get(issueKey("root", 0))).toMatchObject({ status: "ok", calls: 1, durationMs: 3 });
    expect(progress(s)).toMatchObject({ done: 1, running: 0 });
  });
});

describe("dedupe and order", () => {
  it("an event repeated by a reconnect is applied once", () => {
    const events = streams["face-recognition"];
    const once = fold(events);
    const twice = fold([...events.slice(0, 8), ...events.slice(3, 12), ...events.slice(5)]);
    expect(twice.lines).toEqual(once.lines);
    expect(twice.lastSeq).toBe(events.length);
    expect(reduceEvent(once, events[4])).toBe(once);
  });

  it("events that arrive out of order wait for the missing ones; the result is the same", () => {
    const events = streams["face-recognition"];
    const inOrder = fold(events);
    for (const seed of [1, 7, 42]) {
      const s = fold(shuffled(events, seed));
      expect(s.lines).toEqual(inOrder.lines);
      expect(s.finished).toEqual(inOrder.finished);
      expect(hasGap(s)).toBe(false);
    }
  });

  it("a gap is visible until it is filled, and nothing after it is shown before", () => {
    const events = streams.hard;
    let s = fold(events.slice(0, 4));
    s = reduceEvent(s, events[6]);
    expect(hasGap(s)).toBe(true);
    expect(s.lastSeq).toBe(4);
    expect(stepLines(s).map((l) => l.status)).toEqual(["running"]);
    s = reduceEvents(s, events.slice(4, 6));
    expect(hasGap(s)).toBe(false);
    expect(s.lastSeq).toBe(7);
    expect(stepLines(s).map((l) => l.status)).toEqual(["ok", "failed"]);
  });

  it("a gap that is never filled can be skipped: what waited is applied in order", () => {
    const events = streams.hard;
    const s = skipGap(fold([...events.slice(0, 4), ...events.slice(5)]));
    expect(hasGap(s)).toBe(false);
    expect(s.lastSeq).toBe(events.length);
    expect(s.finished?.status).toBe("failed");
    expect(skipGap(s)).toBe(s);
  });

  it("parses SSE data lines and refuses what is not an event", () => {
    expect(parseEventData('{"run":"x","seq":3,"type":"step.started","created_at":null,"data":{"node":"root"}}')).toEqual({ run: "x", seq: 3, type: "step.started", created_at: null, data: { node: "root" } });
    expect(parseEventData("not json")).toBeNull();
    expect(parseEventData('{"type":"x"}')).toBeNull();
  });
});

describe("canvas marks", () => {
  it("marks every step that ran with its status and latency, and each node", () => {
    const m = runMarks(fold(streams["face-recognition"]));
    for (const [node, i] of [["root", 0], ["root", 1], ["root", 2], ["root", 3], ["match", 0], ["match", 1]] as const) {
      const mark = m.steps.get(issueKey(node, i));
      expect(mark?.status).toBe("ok");
      expect(mark?.durationMs).toBeGreaterThan(0);
      expect(mark?.lineKey).toBeTruthy();
    }
    expect(m.nodes.get("root")?.status).toBe("ok");
    expect(m.nodes.get("match")?.status).toBe("ok");
  });

  it("a Switch shows the matched condition on the chosen step and the others as not taken", () => {
    const m = runMarks(fold(streams["animal-switch"]));
    expect(m.steps.get(issueKey("root", 0))).toMatchObject({ status: "not-taken", condition: { matches: false, reason: "path not found" } });
    expect(m.steps.get(issueKey("root", 1))).toMatchObject({ status: "ok", condition: { matches: true, raw: '{"animal":"dog"}' } });
    expect(m.nodes.get("root")?.route?.router).toBe("Switch");
  });

  it("a Splitter shows its draw and which step it chose", () => {
    const m = runMarks(fold(streams.spl));
    const route = m.nodes.get("root")?.route;
    expect(route).toMatchObject({ router: "Splitter", draw: 63, weights: [50, 50], chosen: 1 });
    expect(m.steps.get(issueKey("root", 0))?.status).toBe("not-taken");
    expect(m.steps.get(issueKey("root", 1))).toMatchObject({ status: "ok" });
    expect(m.steps.get(issueKey("root", 1))?.note).toContain("drew 63");
  });

  it("skipped and failed steps are marked as such", () => {
    const m = runMarks(fold(streams.hard));
    expect(m.steps.get(issueKey("root", 1))).toMatchObject({ status: "failed", statusCode: 404 });
    expect(m.steps.get(issueKey("root", 2))?.status).toBe("skipped");
    expect(m.nodes.get("root")?.status).toBe("failed");
  });

  it("marks do not depend on the order events came in", () => {
    const a = runMarks(fold(streams["face-recognition"]));
    const b = runMarks(fold(shuffled(streams["face-recognition"], 3)));
    expect([...b.steps]).toEqual([...a.steps]);
    expect([...b.nodes]).toEqual([...a.nodes]);
  });
});

describe("replay from the stored events", () => {
  it("the JSON listing folds into the same console as the live stream, answer included", () => {
    const events = streams.hard;
    const live = events.reduce((s, e) => reduceEvent(s, e), emptyConsole("h"));
    const log = parseEventLog(JSON.parse(JSON.stringify({ run: "h", finished: true, events })));
    expect(log?.finished).toBe(true);
    const replayed = fold(log!.events, "h");
    expect(replayed).toEqual(live);
    expect(stepLines(replayed).map((l) => [l.callId, l.status, l.statusCode])).toEqual([
      ["root/0", "ok", 200],
      ["root/1", "failed", 404],
      ["root/2", "skipped", null],
    ]);
    expect(replayed.finished).toMatchObject({ status: "failed", statusCode: 404, warnings: [] });
    expect(replayed.finished?.response?.body).toEqual({ detail: "Intentional 404 code" });
    expect(failureCause(replayed)).toContain("root › b (a Hard dependency) answered 404");
    expect(runMarks(replayed).steps.get(issueKey("root", 2))?.status).toBe("skipped");
  });

  it("a listing that is not one is refused, and what is not an event in it is left out", () => {
    expect(parseEventLog(null)).toBeNull();
    expect(parseEventLog({ run: "r", events: [] })).toBeNull();
    expect(parseEventLog({ run: "r", finished: false, events: [{ seq: 1, type: "run.queued", data: {} }, { nope: 1 }] })?.events).toHaveLength(1);
  });

  it("replaying the stored stream gives the same console as watching it live", () => {
    const events = streams["animal-switch"];
    const live = events.reduce((s, e) => reduceEvent(s, e), emptyConsole("x"));
    const replayed = fold(events, "x");
    expect(replayed).toEqual(live);
  });
});

describe("one event schema", () => {
  const finished = (data: Record<string, unknown>): RunEventMsg => ({ seq: 3, type: "run.finished", data: { attempt: 1, status: "succeeded", status_code: 200, content_type: "application/json", error: "", duration_ms: 5, warnings: [], ...data } });
  const start: RunEventMsg[] = [
    { seq: 1, type: "run.queued", data: { version: 1, environment: "local" } },
    { seq: 2, type: "run.started", data: { attempt: 1 } },
  ];

  it("run.finished carries the answer as the run API shows it, and the engine's warnings", () => {
    const response = { status_code: 200, content_type: "application/json", body: { predictions: [1] }, encoding: "utf-8", size: 19, truncated: false };
    const s = fold([...start, finished({ response, warnings: ["header pattern '[' skipped: missing ]"] })]);
    expect(s.finished?.response).toEqual(response);
    expect(s.finished?.warnings).toEqual(["header pattern '[' skipped: missing ]"]);
    expect(s.lines.filter((l) => l.kind === "note" && l.level === "warn").map((l) => (l as { text: string }).text)).toEqual(["header pattern '[' skipped: missing ]"]);
    expect(fold([...start, finished({ status: "cancelled", status_code: null, response: null })]).finished?.response).toBeNull();
  });

  it("an event type the console does not know is shown, not dropped", () => {
    const s = fold([...start, { seq: 3, type: "run.paused", data: { why: "a newer server" } }]);
    expect(s.lastSeq).toBe(3);
    const last = s.lines[s.lines.length - 1];
    expect(last).toMatchObject({ kind: "note", level: "warn" });
    expect((last as { text: string }).text).toContain("run.paused");
    expect((last as { text: string }).text).toContain("a newer server");
  });

  it("a field the engine adds to its step events reaches the step view, live and replayed", () => {
    const where = { attempt: 1, call_id: "root/0", parent_call_id: null, node: "root", step_index: 0, step_name: "a", target: "http://m/a", at: 1 };
    const events: RunEventMsg[] = [
      ...start,
      { seq: 3, type: "step.started", data: { ...where, kind: "http", method: "POST", url: "http://m/a", headers: [], request: null, timeout_s: 30 } },
      { seq: 4, type: "step.finished", data: { ...where, status: 200, response: null, content_type: null, duration_ms: 2, outcome: "ok", error: null, probe: { retries: 2 } } },
    ];
    const live = events.reduce((s, e) => reduceEvent(s, e), emptyConsole("p"));
    const replayed = fold(parseEventLog({ run: "p", finished: false, events })!.events, "p");
    for (const s of [live, replayed]) {
      const [step] = stepLines(s);
      expect(step.fields.probe).toEqual({ retries: 2 });
      expect(otherStepFields(step)).toEqual([
        ["probe", { retries: 2 }],
        ["timeout_s", 30],
      ]);
    }
  });
});

describe("bodies and numbers", () => {
  it("pretty-prints JSON (an array of numbers on one line), keeps text as it is, and reports sizes", () => {
    expect(showBody({ body: '{"a":[1,2]}', encoding: "utf-8", size: 11, truncated: false })).toEqual({ text: '{\n  "a": [1, 2]\n}', json: true, size: 11, truncated: false, binary: false, value: { a: [1, 2] } });
    expect(showBody({ body: "plain <b>", encoding: "utf-8", size: 9, truncated: false })).toMatchObject({ text: "plain <b>", json: false });
    expect(showBody({ body: '{"a":', encoding: "utf-8", size: 900, truncated: true })).toMatchObject({ json: false, truncated: true });
    expect(showBody({ body: "AAE=", encoding: "base64", size: 2, truncated: false })).toMatchObject({ binary: true });
    expect(formatSize(181)).toBe("181 B");
    expect(formatSize(2048)).toBe("2.0 kB");
    expect(formatMs(0.4)).toBe("<1 ms");
    expect(formatMs(12.6)).toBe("13 ms");
    expect(formatMs(1234)).toBe("1.23 s");
  });
});

describe("compare two runs", () => {
  it("aligns steps by position and flags differing outcomes and outputs", () => {
    const ok: Run = {
      ...hardRun,
      id: "other",
      status: "succeeded",
      response: { status_code: 200, content_type: "application/json", body: { x: 1 } },
      steps: hardRun.steps!.map((s) =>
        s.call_id === "root/1"
          ? { ...s, status_code: 200, outcome: "ok", response: { body: '{"ok" : true}', encoding: "utf-8", size: 13, truncated: false } }
          : s.call_id === "root/2"
            ? { ...s, outcome: "ok", status_code: 200, error: "", response: { body: '{"x":1}', encoding: "utf-8", size: 7, truncated: false } }
            : s,
      ),
    };
    const rows = compareRuns(hardRun, ok);
    expect(rows.map((r) => [r.callId, r.outcomeDiffers, r.outputDiffers])).toEqual([
      ["root/0", false, false],
      ["root/1", true, true],
      ["root/2", true, true],
    ]);
    expect(rows[1].b?.output).toBe('{"ok":true}');
    expect(sameResponse(hardRun, ok)).toBe(false);
    expect(sameResponse(hardRun, { ...hardRun, response: { ...hardRun.response, body: { detail: "Intentional 404 code" } } })).toBe(true);
  });
});

describe("samples, draft and the remembered run", () => {
  function memory() {
    const m = new Map<string, string>();
    return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k), m };
  }

  it("saves, replaces by name, lists sorted per graph, and deletes samples", () => {
    const store = memory();
    saveSample(store, "g", "dog", '{"a":1}');
    saveSample(store, "g", "cat", '{"a":2}');
    saveSample(store, "g", "dog", '{"a":3}');
    saveSample(store, "other", "x", "1");
    expect(loadSamples(store, "g")).toEqual([
      { name: "cat", payload: '{"a":2}' },
      { name: "dog", payload: '{"a":3}' },
    ]);
    expect(deleteSample(store, "g", "cat")).toEqual([{ name: "dog", payload: '{"a":3}' }]);
    expect(loadSamples(store, "other")).toHaveLength(1);
    deleteSample(store, "other", "x");
    expect(loadSamples(store, "other")).toEqual([]);
  });

  it("survives broken storage contents and throwing storage", () => {
    const store = memory();
    store.m.set("inference-graph-studio:samples:g", "{not json");
    expect(loadSamples(store, "g")).toEqual([]);
    const broken = { getItem: () => null, setItem: () => { throw new Error("full"); }, removeItem: () => undefined };
    // A full storage does not throw: the sample stays in the page's list.
    expect(saveSample(broken, "g", "a", "1")).toEqual([{ name: "a", payload: "1" }]);
    expect(loadSamples(null, "g")).toEqual([]);
  });

  it("keeps the draft and the current run per graph", () => {
    const store = memory();
    saveDraft(store, "g", { payload: "{}", environment: "local", headers: [["X-A", "1"]] });
    expect(loadDraft(store, "g")).toEqual({ payload: "{}", environment: "local", headers: [["X-A", "1"]] });
    expect(loadDraft(store, "h")).toBeNull();
    rememberRun(store, "g", "abc");
    expect(rememberedRun(store, "g")).toBe("abc");
    rememberRun(store, "g", null);
    expect(rememberedRun(store, "g")).toBeNull();
  });

  it("validates the payload and builds the headers object", () => {
    expect(parsePayload('{"instances": []}')).toEqual({ ok: true, value: { instances: [] } });
    expect(parsePayload("{oops").ok).toBe(false);
    expect(parsePayload("  ").ok).toBe(false);
    expect(headersObject([["X-A", "1"], ["", "dropped"], [" X-B ", "2"], ["X-A", "3"]])).toEqual({ "X-A": "3", "X-B": "2" });
  });
});
