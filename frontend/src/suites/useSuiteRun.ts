/**
 * The suite run the Tests panel shows, owned by the editor so that it keeps streaming while
 * another tab is open: start one, follow its events (the browser reconnects by itself with
 * Last-Event-ID; a stream that cannot be read falls back to reading the suite run every second),
 * cancel it, or show the latest one of a version. The stream is followed by the editor's one
 * event-log follower (../common/useEventLog.ts), as the run console and the Load panel do.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Api } from "../api";
import { describeApiError } from "../common/ui";
import { useEventLog } from "../common/useEventLog";
import { SUITE_EVENT_TYPES } from "../generated/events";
import { isTerminalSuite, progressOf, reduceSuiteEvent, type SuiteProgress, type SuiteRun } from "./suite";

const POLL_MS = 1000;

export interface SuiteController {
  progress: SuiteProgress | null;
  starting: boolean;
  cancelling: boolean;
  error: string | null;
  /** The stream could not be read; the suite run is read every second instead. */
  polling: boolean;
  start(version: number, environment: string | null): Promise<void>;
  cancel(): Promise<void>;
  /** Shows the latest suite run of `version` (none: nothing shown). */
  showLatest(version: number): Promise<void>;
}

export function useSuiteRun(api: Api, graph: string): SuiteController {
  const [progress, setProgress] = useState<SuiteProgress | null>(null);
  const [starting, setStarting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [polling, setPolling] = useState(false);
  const live = useRef<{ id: string | null; state: SuiteProgress | null; timer: ReturnType<typeof setTimeout> | null }>({ id: null, state: null, timer: null });
  const log = useEventLog();

  const stop = useCallback(() => {
    log.close();
    const l = live.current;
    if (l.timer) clearTimeout(l.timer);
    l.timer = null;
  }, [log]);

  const commit = useCallback((state: SuiteProgress) => {
    live.current.state = state;
    setProgress(state);
  }, []);

  /** The stored object is the truth at the end: its results carry every case's final verdict. */
  const settle = useCallback(
    async (id: string) => {
      try {
        const run = await api.getSuiteRun(id);
        if (live.current.id !== id) return;
        commit({ ...progressOf(run), lastSeq: live.current.state?.lastSeq ?? 0 });
        if (!isTerminalSuite(run.status)) live.current.timer = setTimeout(() => void settle(id), POLL_MS);
      } catch (err) {
        if (live.current.id === id) setError(describeApiError(err));
      }
    },
    [api, commit],
  );

  const follow = useCallback(
    (run: SuiteRun) => {
      stop();
      const l = live.current;
      l.id = run.id;
      setError(null);
      setPolling(false);
      commit(progressOf(run));
      if (isTerminalSuite(run.status)) return;
      log.follow({
        connect: (after) => api.suiteEvents(run.id, after),
        types: SUITE_EVENT_TYPES,
        finalType: "suite.finished",
        onEvent: (event) => {
          if (!l.state) return;
          const next = reduceSuiteEvent(l.state, { seq: event.seq, type: event.type, data: event.data });
          if (next === l.state) return;
          commit(next);
          if (event.type === "suite.finished") void settle(run.id); // the stream is closed by now
        },
        onFailed: () => {
          // The stream cannot be read (the browser gave up, or the server refused it).
          stop();
          setPolling(true);
          void settle(run.id);
        },
      });
    },
    [api, commit, log, settle, stop],
  );

  useEffect(() => stop, [stop]);

  const start = useCallback(
    async (version: number, environment: string | null) => {
      setStarting(true);
      setError(null);
      try {
        follow(await api.startSuite(graph, { version, ...(environment ? { environment } : {}) }));
      } catch (err) {
        setError(describeApiError(err));
      } finally {
        setStarting(false);
      }
    },
    [api, follow, graph],
  );

  const cancel = useCallback(async () => {
    const id = live.current.id;
    if (!id) return;
    setCancelling(true);
    try {
      await api.cancelSuiteRun(id);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setCancelling(false);
    }
  }, [api]);

  const showLatest = useCallback(
    async (version: number) => {
      try {
        const page = await api.listSuiteRuns(graph, version);
        const latest = page.results[0];
        if (!latest) {
          stop();
          live.current.id = null;
          live.current.state = null;
          setProgress(null);
          return;
        }
        if (latest.id === live.current.id) return;
        follow(await api.getSuiteRun(latest.id));
      } catch (err) {
        setError(describeApiError(err));
      }
    },
    [api, follow, graph, stop],
  );

  return { progress, starting, cancelling, error, polling, start, cancel, showLatest };
}
