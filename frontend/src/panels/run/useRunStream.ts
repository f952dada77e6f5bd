/**
 * The run being shown and its console, folded from the run's stored events by one reducer.
 *
 * Live: one EventSource per run, subscribed to every declared event type (generated from
 * execution/eventschema.py), followed by the editor's one event-log follower
 * (../../common/useEventLog.ts, as the suite run and the load test are). The browser reconnects by
 * itself sending Last-Event-ID, and the follower drops what it has already handed on; the reducer
 * drops repeated events and holds back events after a gap, in which case the stream is reopened
 * from the last event applied. The stream is closed after `run.finished`, which carries the
 * graph's answer: nothing is fetched afterwards. Events that arrive together are folded together
 * (one render per `LIVE_BATCH_MS`), so a fast run's thousands of events do not cost a render each.
 *
 * Replay: the stored events as JSON (`GET /api/runs/{id}/events/?format=json`), a page at a time,
 * through the same reducer (one render per page, with how far it got in `loading`): when a run is
 * opened that this tab did not just start (from the list, or after a reload; a stream follows if
 * it is still going on), when the stream fails, and when a gap stays after the stream was reopened
 * (an event whose type the stream was not subscribed to: the console then shows it as unknown
 * instead of losing it). The run's detail is read alongside, so a run that has ended shows so at
 * once, before its events are read.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Api, Run } from "../../api";
import { describeApiError } from "../../common/ui";
import { useEventLog } from "../../common/useEventLog";
import { RUN_EVENT_TYPES } from "../../generated/events";
import type { RunMarks } from "../../graph/runMarks";
import { emptyConsole, hasGap, reduceEvents, skipGap, type ConsoleState } from "./console";
import { runMarks } from "./consoleMarks";
import { parseEventLog, type RunEventMsg } from "./events";
import { readEventPages } from "./eventPages";
import { rememberRun, rememberedRun, safeStorage } from "./samples";

const RETRY_MS = 2000; // the server's own `retry:` hint
// Live events arriving within this many ms are folded and rendered together: a run's events come
// in bursts (an Ensemble's members, a looping graph), and 20 renders a second is smooth enough.
const LIVE_BATCH_MS = 50;

/** How far the replay of a run's stored events got: events applied, of how many are stored. */
export interface Loading {
  loaded: number;
  total: number | null;
}

export type Connection = "idle" | "connecting" | "open" | "reconnecting" | "closed";

export interface RunStream {
  console: ConsoleState;
  run: Run | null;
  setRun(run: Run): void;
  marks: RunMarks | null;
  connection: Connection;
  replay: boolean;
  /** While stored events are being read: how far it got; null otherwise. */
  loading: Loading | null;
  actionError: string | null;
  setActionError(message: string | null): void;
  /** The id of the run shown, at the moment of the call. */
  currentRunId(): string | null;
  attach(runId: string, options?: { replay?: boolean; run?: Run }): void;
  detach(): void;
}

interface Live {
  runId: string | null;
  state: ConsoleState;
  retry: ReturnType<typeof setTimeout> | null;
  reopenedAt: number;
  /** Live events waiting to be folded together, and the timer that will. */
  queued: RunEventMsg[];
  flush: ReturnType<typeof setTimeout> | null;
}

export function useRunStream({ api, graph }: { api: Api; graph: string }): RunStream {
  const session = useMemo(() => safeStorage("session"), []);
  const [consoleState, setConsoleState] = useState<ConsoleState>(() => emptyConsole());
  const [run, setRunState] = useState<Run | null>(null);
  const [connection, setConnection] = useState<Connection>("idle");
  const [replay, setReplay] = useState(false);
  const [loading, setLoading] = useState<Loading | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);

  const live = useRef<Live>({ runId: null, state: emptyConsole(), retry: null, reopenedAt: -1, queued: [], flush: null });
  const log = useEventLog();

  const close = useCallback(() => {
    log.close();
    const l = live.current;
    if (l.retry) clearTimeout(l.retry);
    l.retry = null;
    if (l.flush) clearTimeout(l.flush);
    l.flush = null;
    l.queued = [];
  }, [log]);

  const commit = useCallback((next: ConsoleState) => {
    live.current.state = next;
    setConsoleState(next);
  }, []);

  const fetchDetail = useCallback(
    async (runId: string) => {
      try {
        const detail = await api.getRun(runId);
        if (live.current.runId === runId) setRunState(detail);
      } catch (err) {
        if (live.current.runId === runId) setActionError(`Could not load run ${runId.slice(0, 8)}: ${describeApiError(err)}`);
      }
    },
    [api],
  );

  /**
   * Feeds the stored events after the last one applied through the reducer, a page at a time
   * (each page rendered as it comes, with the progress in `loading`). Resolves whether the run
   * has ended, or null when the events could not be read (the reason is shown) or another run
   * was opened meanwhile.
   */
  const replayStored = useCallback(
    async (runId: string): Promise<boolean | null> => {
      const wanted = () => live.current.runId === runId;
      try {
        setLoading({ loaded: live.current.state.lastSeq, total: null });
        const last = await readEventPages(
          live.current.state.lastSeq,
          async (after) => {
            const log = parseEventLog(await api.runEventLog(runId, after));
            if (!log) throw new Error("the answer is not a list of events");
            return log;
          },
          (page) => {
            let next = reduceEvents(live.current.state, page.events);
            // The last page ends the stored events: what is still missing before the events
            // that wait was never stored.
            if (!page.more) next = skipGap(next);
            commit(next);
            setLoading({ loaded: next.lastSeq, total: page.total });
            return next.lastSeq;
          },
          wanted,
        );
        if (!last) return null;
        return live.current.state.finished !== null || last.finished;
      } catch (err) {
        if (wanted()) setActionError(`Could not load the events of run ${runId.slice(0, 8)}: ${describeApiError(err)}`);
        return null;
      } finally {
        if (wanted()) setLoading(null);
      }
    },
    [api, commit],
  );

  const open = useCallback(
    (runId: string, after: number) => {
      close();
      const l = live.current;
      if (l.runId !== runId) return;
      setConnection(after > 0 ? "reconnecting" : "connecting");

      /** The stored events decide: done when the run ended, else the stream goes on after `wait` ms. */
      const fromStorage = (wait: number) => {
        close();
        setConnection("reconnecting");
        void replayStored(runId).then((finished) => {
          if (live.current.runId !== runId) return;
          if (finished === null || finished) {
            setConnection("closed");
            return;
          }
          l.retry = setTimeout(() => open(runId, live.current.state.lastSeq), wait);
        });
      };

      const flush = () => {
        l.flush = null;
        const events = l.queued;
        l.queued = [];
        if (!events.length) return; // (closing the stream drops the queue and this timer)
        const next = reduceEvents(l.state, events);
        if (next === l.state) return;
        commit(next);
        if (hasGap(next)) {
          if (l.reopenedAt !== next.lastSeq) {
            // Something between lastSeq and the event that came is missing: ask for it again.
            l.reopenedAt = next.lastSeq;
            open(runId, next.lastSeq);
          } else {
            // Asked again and it still did not come (a type this stream does not subscribe to).
            fromStorage(0);
          }
          return;
        }
        if (next.finished) {
          close();
          setConnection("closed");
        }
      };

      log.follow(
        {
          connect: (from) => api.runEvents(runId, from),
          types: RUN_EVENT_TYPES,
          finalType: "run.finished",
          // A stream the browser keeps losing at once is given up, as one the server refused.
          maxErrors: 3,
          onEvent: (event) => {
            l.queued.push(event);
            if (!l.flush) l.flush = setTimeout(flush, LIVE_BATCH_MS);
          },
          onOpen: () => setConnection("open"),
          onRetrying: () => setConnection("reconnecting"), // the browser retries by itself with Last-Event-ID
          // The server refused the stream (or keeps closing it at once): read the stored events.
          onFailed: () => fromStorage(RETRY_MS),
        },
        after,
      );
    },
    [api, close, commit, log, replayStored],
  );

  const attach = useCallback(
    (runId: string, options: { replay?: boolean; run?: Run } = {}) => {
      close();
      const l = live.current;
      l.runId = runId;
      l.reopenedAt = -1;
      commit(emptyConsole(runId));
      setRunState(options.run ?? null);
      setReplay(!!options.replay);
      setActionError(null);
      rememberRun(session, graph, runId);
      setLoading(null);
      if (!options.run) {
        // A run this tab did not just start (from the list, or after a reload): its detail says
        // at once whether it has ended; its stored events are read a page at a time, and a
        // stream follows only if it is still going on.
        setConnection("connecting");
        void replayStored(runId).then((finished) => {
          if (live.current.runId !== runId) return;
          if (finished === false) open(runId, live.current.state.lastSeq);
          else setConnection("closed");
        });
      } else {
        open(runId, 0);
      }
      if (!options.run) void fetchDetail(runId);
    },
    [close, commit, fetchDetail, graph, open, replayStored, session],
  );

  const detach = useCallback(() => {
    close();
    live.current.runId = null;
    commit(emptyConsole());
    setRunState(null);
    setConnection("idle");
    setReplay(false);
    setLoading(null);
    setActionError(null);
    rememberRun(session, graph, null);
  }, [close, commit, graph, session]);

  // A reload re-attaches to the run the console showed (its stream replays and goes on live).
  useEffect(() => {
    const id = rememberedRun(session, graph);
    if (id) attach(id);
    return () => close();
  }, [session, graph, attach, close]); // once per page: all four are stable for a page's graph

  const setRun = useCallback((updated: Run) => {
    if (live.current.runId === updated.id) setRunState(updated);
  }, []);

  const marks = useMemo(() => (consoleState.runId ? runMarks(consoleState) : null), [consoleState]);

  return {
    console: consoleState,
    run,
    setRun,
    marks,
    connection,
    replay,
    loading,
    actionError,
    setActionError,
    currentRunId: () => live.current.runId,
    attach,
    detach,
  };
}
