/**
 * Following a stored event log over Server-Sent Events: the one protocol the server has for a
 * run's, a suite run's and a load test's events (execution/apis.py `event_log_response`,
 * docs/architecture.md "Events"). Every event carries its number (`seq`, also the SSE `id:`), so a
 * follower that remembers the last number it applied can resume after it, and drop what it has
 * already seen when a stream starts over; each owner's log ends with one final event type.
 *
 * `EventLogFollower` is the part that needs no browser: it opens the stream through a `connect`
 * function (the real one returns an `EventSource`, the tests a fake), parses each `data:` line,
 * hands each new event on in order, closes the stream after the final event, and tells the caller
 * whether an error is the browser reconnecting by itself (with Last-Event-ID) or the end of the
 * stream (the server refused it, e.g. 429 when too many streams are open, or it keeps failing),
 * when the caller decides: read the stored events, poll, or reopen after the last number.
 * `useEventLog` (./useEventLog.ts) holds one for a component and closes it on unmount.
 */

/** One event as the SSE `data:` line and the JSON listing carry it (execution/events.py). */
export interface LogEvent {
  seq: number;
  type: string;
  run?: string;
  created_at?: string | null;
  data: Record<string, unknown>;
}

/** An event from its JSON value; null for anything that is not an event. */
export function parseEvent(v: unknown): LogEvent | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  if (typeof o.seq !== "number" || typeof o.type !== "string") return null;
  return {
    seq: o.seq,
    type: o.type,
    run: typeof o.run === "string" ? o.run : undefined,
    created_at: typeof o.created_at === "string" ? o.created_at : null,
    data: o.data && typeof o.data === "object" ? (o.data as Record<string, unknown>) : {},
  };
}

/** Parses an SSE `data:` payload; null for anything that is not an event. */
export function parseEventData(text: string): LogEvent | null {
  try {
    return parseEvent(JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

/** What the follower needs of an `EventSource` (so that tests can hand it a fake). */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (msg: MessageEvent) => void): void;
  onmessage: ((msg: MessageEvent) => unknown) | null;
  onopen: ((ev: Event) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
  close(): void;
}

/** `EventSource.CLOSED`, spelled out so that this file runs without a browser. */
export const SOURCE_CLOSED = 2;

/** What to follow, and what to tell the caller. */
export interface EventLogSpec {
  /** Opens the stream of events after `after` (0: from the start). */
  connect(after: number): EventSourceLike;
  /** The event types the server names (`event:` lines); unnamed events are read too. */
  types: readonly string[];
  /** The owner's last event: the stream is closed once it has been handed on. */
  finalType: string | null;
  /** Consecutive errors after which the stream is given up (the browser otherwise retries forever). */
  maxErrors?: number;
  /** Each event after the last one handed on, in order. */
  onEvent(event: LogEvent): void;
  onOpen?(): void;
  /** The browser lost the stream and reconnects by itself (sending Last-Event-ID). */
  onRetrying?(): void;
  /** The stream ended without the final event and is closed; `lastSeq` is the last event handed on. */
  onFailed?(lastSeq: number): void;
}

export class EventLogFollower {
  private spec: EventLogSpec | null = null;
  private source: EventSourceLike | null = null;
  private errors = 0;
  private seq = 0;
  private done = false;

  /** The number of the last event handed on (or the `after` it was opened with). */
  get lastSeq(): number {
    return this.seq;
  }

  /** Whether the final event has been handed on. */
  get finished(): boolean {
    return this.done;
  }

  /** Whether a stream is open (or being reconnected by the browser). */
  get open(): boolean {
    return this.source !== null;
  }

  /** Follows `spec`'s log from after event `after`, closing whatever was followed before. */
  follow(spec: EventLogSpec, after = 0): void {
    this.close();
    this.spec = spec;
    this.reopen(after);
  }

  /** Opens the same log again after event `after` (a gap to fill, or a retry after a failure). */
  reopen(after = this.seq): void {
    const spec = this.spec;
    if (!spec) return;
    this.closeSource();
    this.seq = after;
    this.errors = 0;
    this.done = false;
    const source = spec.connect(after);
    this.source = source;
    const onEvent = (msg: MessageEvent) => {
      if (this.source === source && typeof msg.data === "string") this.receive(msg.data);
    };
    for (const type of spec.types) source.addEventListener(type, onEvent);
    source.onmessage = onEvent;
    source.onopen = () => {
      if (this.source === source) spec.onOpen?.();
    };
    source.onerror = () => {
      if (this.source === source) this.fail(source.readyState);
    };
  }

  /**
   * One `data:` line of the current stream: an event after the last one is handed on (a repeat,
   * as when the browser's reconnect starts earlier than needed, is dropped); after the final
   * event the stream is closed. Returns whether the event was handed on.
   */
  receive(text: string): boolean {
    const spec = this.spec;
    const event = parseEventData(text);
    if (!spec || !event || this.done || event.seq <= this.seq) return false;
    this.errors = 0;
    this.seq = event.seq;
    if (event.type === spec.finalType) {
      this.done = true;
      this.closeSource();
    }
    spec.onEvent(event);
    return true;
  }

  /** An error on the current stream, with the source's `readyState` at the time. */
  fail(readyState: number): void {
    const spec = this.spec;
    if (!spec) return;
    this.errors += 1;
    if (readyState === SOURCE_CLOSED || this.errors >= (spec.maxErrors ?? Infinity)) {
      this.closeSource();
      spec.onFailed?.(this.seq);
    } else {
      spec.onRetrying?.();
    }
  }

  /** Stops following: nothing more is handed on. */
  close(): void {
    this.closeSource();
    this.spec = null;
  }

  private closeSource(): void {
    this.source?.close();
    this.source = null;
  }
}
