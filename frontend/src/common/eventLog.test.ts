import { describe, expect, it } from "vitest";
import { EventLogFollower, SOURCE_CLOSED, type EventLogSpec, type EventSourceLike, type LogEvent } from "./eventLog";

/** A stand-in for the browser's EventSource: the test sends its `data:` lines and errors. */
class FakeSource implements EventSourceLike {
  readyState = 1;
  closed = false;
  onmessage: ((msg: MessageEvent) => unknown) | null = null;
  onopen: ((ev: Event) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  private listeners = new Map<string, (msg: MessageEvent) => void>();

  constructor(readonly after: number) {}

  addEventListener(type: string, listener: (msg: MessageEvent) => void): void {
    this.listeners.set(type, listener);
  }

  /** An event as the server writes it (`event:` named by its type, as execution/apis.py does). */
  send(seq: number, type = "step.started", named = true): void {
    const msg = { data: JSON.stringify({ seq, type, data: { n: seq } }) } as MessageEvent;
    const listener = named ? this.listeners.get(type) : this.onmessage;
    listener?.(msg);
  }

  error(readyState: number): void {
    this.readyState = readyState;
    this.onerror?.({} as Event);
  }

  close(): void {
    this.closed = true;
    this.readyState = SOURCE_CLOSED;
  }
}

function setUp(overrides: Partial<EventLogSpec> = {}) {
  const sources: FakeSource[] = [];
  const events: LogEvent[] = [];
  const calls: string[] = [];
  const spec: EventLogSpec = {
    connect: (after) => {
      const source = new FakeSource(after);
      sources.push(source);
      return source;
    },
    types: ["step.started", "run.finished"],
    finalType: "run.finished",
    onEvent: (event) => events.push(event),
    onOpen: () => calls.push("open"),
    onRetrying: () => calls.push("retrying"),
    onFailed: (lastSeq) => calls.push(`failed after ${lastSeq}`),
    ...overrides,
  };
  return { follower: new EventLogFollower(), spec, sources, events, calls, seqs: () => events.map((e) => e.seq) };
}

describe("EventLogFollower", () => {
  it("hands each event on in order and tracks the last number", () => {
    const { follower, spec, sources, seqs } = setUp();
    follower.follow(spec);
    expect(sources[0].after).toBe(0);
    sources[0].send(1);
    sources[0].send(2, "step.started", false); // an event without an `event:` name is read too
    expect(seqs()).toEqual([1, 2]);
    expect(follower.lastSeq).toBe(2);
  });

  it("drops events it has already handed on, as when a stream starts over", () => {
    const { follower, spec, sources, seqs } = setUp();
    follower.follow(spec);
    for (const seq of [1, 2, 3, 2, 3, 4]) sources[0].send(seq);
    expect(seqs()).toEqual([1, 2, 3, 4]);
    expect(follower.receive("not json")).toBe(false);
    expect(follower.receive('{"type":"x"}')).toBe(false);
  });

  it("resumes after the number it is opened with, and takes events after it again", () => {
    const { follower, spec, sources, seqs } = setUp();
    follower.follow(spec, 5);
    expect(sources[0].after).toBe(5);
    sources[0].send(5);
    sources[0].send(7);
    // The caller saw a gap (6 is missing): it opens the log again after 5, and 6 and 7 come.
    follower.reopen(5);
    expect(sources[0].closed).toBe(true);
    expect(sources[1].after).toBe(5);
    sources[0].send(8); // the old stream is no longer read
    sources[1].send(6);
    sources[1].send(7);
    expect(seqs()).toEqual([7, 6, 7]);
    expect(follower.lastSeq).toBe(7);
  });

  it("closes the stream after the final event and hands nothing on afterwards", () => {
    const { follower, spec, sources, seqs, calls } = setUp();
    follower.follow(spec);
    sources[0].send(1);
    sources[0].send(2, "run.finished");
    expect(follower.finished).toBe(true);
    expect(follower.open).toBe(false);
    expect(sources[0].closed).toBe(true);
    expect(follower.receive(JSON.stringify({ seq: 3, type: "step.started", data: {} }))).toBe(false);
    expect(seqs()).toEqual([1, 2]);
    expect(calls).toEqual([]);
  });

  it("tells a reconnect by the browser from a stream that ended", () => {
    const { follower, spec, sources, calls } = setUp();
    follower.follow(spec);
    sources[0].onopen?.({} as Event);
    sources[0].send(1);
    sources[0].error(0); // CONNECTING: the browser retries with Last-Event-ID
    expect(calls).toEqual(["open", "retrying"]);
    expect(sources[0].closed).toBe(false);
    sources[0].error(SOURCE_CLOSED); // refused (a 429 when too many streams are open)
    expect(calls).toEqual(["open", "retrying", "failed after 1"]);
    expect(follower.open).toBe(false);
    sources[0].onerror?.({} as Event); // the closed stream says nothing more
    expect(calls).toHaveLength(3);
  });

  it("gives a stream up after `maxErrors` errors in a row, an event in between starting the count again", () => {
    const { follower, spec, sources, calls } = setUp({ maxErrors: 3 });
    follower.follow(spec);
    sources[0].error(0);
    sources[0].error(0);
    sources[0].send(1);
    sources[0].error(0);
    sources[0].error(0);
    expect(calls).toEqual(["retrying", "retrying", "retrying", "retrying"]);
    sources[0].error(0);
    expect(calls.at(-1)).toBe("failed after 1");
    expect(sources[0].closed).toBe(true);
  });

  it("follows one log at a time: another owner's, or none after close", () => {
    const { follower, spec, sources, seqs } = setUp();
    follower.follow(spec);
    sources[0].send(1);
    follower.follow(spec); // another owner: its log starts from the beginning
    expect(sources[0].closed).toBe(true);
    sources[0].send(2);
    sources[1].send(1);
    expect(seqs()).toEqual([1, 1]);
    follower.close();
    expect(sources[1].closed).toBe(true);
    sources[1].send(2);
    follower.reopen(0); // nothing to reopen once closed
    expect(sources).toHaveLength(2);
    expect(seqs()).toEqual([1, 1]);
  });
});
