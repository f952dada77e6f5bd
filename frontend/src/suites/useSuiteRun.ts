/**
 * The suite run the Tests panel shows, owned by the editor so that it keeps streaming while
 * another tab is open: start one, follow its events (the browser reconnects by itself with
 * Last-Event-ID; a stream that cannot be read falls back to reading the suite run every second),
 * cancel it, or show the latest one of a version.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Api } from "../api";
import { describeApiError } from "../common/ui";
import { SUITE_EVENT_TYPES } from "../generated/events";
import { parseEventData } from "../panels/run/events";
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
  const live = useRef<{ id: string | null; state: SuiteProgress | null; source: EventSource | null; timer: ReturnType<typeof setTimeout> | null }>({ id: null, state: null, source: null, timer: null });

  const stop = useCallback(() => {
    const l = live.current;
    l.source?.close();
    l.source = null;
    if (l.timer) clearTimeout(l.timer);
    l.timer = null;
  }, []);

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
      const source = api.suiteEvents(run.id);
      l.source = source;
      const onEvent = (msg: MessageEvent<string>) => {
        if (l.source !== source || !l.state) return;
        const event = parseEventData(msg.data);
        if (!event) return;
        const next = reduceSuiteEvent(l.state, { seq: event.seq, type: event.type, data: event.data });
        if (next === l.state) return;
        commit(next);
        if (event.type === "suite.finished") {
          stop();
          void settle(run.id);
        }
      };
      for (const type of SUITE_EVENT_TYPES) source.addEventListener(type, onEvent as EventListener);
      source.onmessage = onEvent;
      source.onerror = () => {
        if (l.source !== source || source.readyState !== EventSource.CLOSED) return; // the browser retries
        stop();
        setPolling(true);
        void settle(run.id);
      };
    },
    [api, commit, settle, stop],
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
