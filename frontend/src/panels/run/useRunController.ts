/**
 * The Run panel's state and actions, lifted into the editor so that the canvas (marks), the
 * toolbar ("Runs", Ctrl+Enter) and the panel share one run: the request form, the run being
 * shown, its live event stream and the console folded from it.
 *
 * The stream: one EventSource per run. The browser reconnects by itself sending Last-Event-ID;
 * the reducer drops repeated events and holds back events after a gap, in which case the stream
 * is reopened from the last event applied. It is closed after `run.finished`, then the run's
 * detail is fetched for the final response body (the event carries only its status).
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApiError, type Api, type Environment, type Page, type Run } from "../../api";
import { describeApiError } from "../../common/ui";
import type { Issue } from "../../graph/types";
import { emptyConsole, eventsFromRun, hasGap, isTerminal, parseEventData, reduceEvent, reduceEvents, runMarks, skipGap, type ConsoleState, type RunEventMsg, type RunMarks } from "./console";
import { deleteSample, headersObject, loadDraft, loadLastPayload, loadSamples, saveLastPayload, parsePayload, rememberRun, rememberedRun, safeStorage, saveDraft, saveSample, type Sample } from "./samples";

/** Every event type the backend sends (execution/events.py, execution/services/, trace.py). */
export const EVENT_TYPES = [
  "run.queued",
  "run.started",
  "run.requeued",
  "run.warning",
  "run.cancel_requested",
  "run.worker_stopping",
  "node.started",
  "node.finished",
  "step.started",
  "step.finished",
  "step.skipped",
  "route.decided",
  "run.finished",
] as const;

const DEFAULT_PAYLOAD = '{\n  "instances": [\n    {}\n  ]\n}';
const NO_SAMPLES: Sample[] = [];
const RETRY_MS = 2000; // the server's own `retry:` hint

export type Connection = "idle" | "connecting" | "open" | "reconnecting" | "closed";

export interface StartProblem {
  message: string;
  issues: Issue[];
}

export interface RunController {
  // the request form
  payload: string;
  setPayload(text: string): void;
  payloadError: string | null;
  environment: string;
  setEnvironment(name: string): void;
  environments: Environment[];
  environmentsError: string | null;
  headers: [string, string][];
  setHeaders(rows: [string, string][]): void;
  samples: Sample[];
  /** The graph's own samples (from its layout), offered before the browser's. */
  graphSamples: Sample[];
  /** The payload of the last run started here, if any. */
  lastPayload: string | null;
  saveSample(name: string): void;
  deleteSample(name: string): void;
  // the run shown
  console: ConsoleState;
  run: Run | null;
  marks: RunMarks | null;
  connection: Connection;
  replay: boolean;
  starting: boolean;
  startProblem: StartProblem | null;
  cancelling: boolean;
  actionError: string | null;
  /** Runs the version `resolveVersion` picks with the form's request. */
  start(): Promise<void>;
  attach(runId: string, options?: { replay?: boolean; run?: Run }): void;
  detach(): void;
  cancel(): Promise<void>;
  rerun(runId: string): Promise<void>;
}

export function useRunController({
  api,
  graph,
  resolveVersion,
  graphSamples = NO_SAMPLES,
}: {
  api: Api;
  graph: string;
  resolveVersion: () => Promise<number | null>;
  graphSamples?: Sample[];
}): RunController {
  const local = useMemo(() => safeStorage("local"), []);
  const session = useMemo(() => safeStorage("session"), []);
  const draft = useMemo(() => loadDraft(local, graph), [local, graph]);

  const [payload, setPayload] = useState(draft?.payload ?? DEFAULT_PAYLOAD);
  const [environment, setEnvironment] = useState(draft?.environment || "local");
  const [headers, setHeaders] = useState<[string, string][]>(draft?.headers ?? []);
  const [environments, setEnvironments] = useState<Environment[]>([]);
  const [environmentsError, setEnvironmentsError] = useState<string | null>(null);
  const [samples, setSamples] = useState<Sample[]>(() => loadSamples(local, graph));
  const [lastPayload, setLastPayload] = useState<string | null>(() => loadLastPayload(local, graph));

  // With nothing typed before (no draft), the form starts with the graph's first sample once the
  // graph has loaded, instead of the bare default.
  const firstSample = graphSamples[0]?.payload ?? null;
  useEffect(() => {
    if (firstSample !== null && !draft) setPayload((p) => (p === DEFAULT_PAYLOAD ? firstSample : p));
  }, [firstSample, draft]);

  const [consoleState, setConsoleState] = useState<ConsoleState>(() => emptyConsole());
  const [run, setRun] = useState<Run | null>(null);
  const [connection, setConnection] = useState<Connection>("idle");
  const [replay, setReplay] = useState(false);
  const [starting, setStarting] = useState(false);
  const [startProblem, setStartProblem] = useState<StartProblem | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);

  const payloadCheck = useMemo(() => parsePayload(payload), [payload]);

  // The request form outlives reloads (per graph).
  useEffect(() => {
    const t = setTimeout(() => saveDraft(local, graph, { payload, environment, headers }), 300);
    return () => clearTimeout(t);
  }, [local, graph, payload, environment, headers]);

  // Listed again whenever the window regains focus: "Manage environments" opens the
  // environments page in another tab, and what is changed there shows up here on return.
  useEffect(() => {
    let cancelled = false;
    const refresh = () => {
      api
        .listEnvironments()
        .then((page: Page<Environment>) => {
          if (cancelled) return;
          const list = page.results;
          setEnvironments(list);
          setEnvironmentsError(null);
          setEnvironment((current) => (list.some((e) => e.name === current) ? current : (list.find((e) => e.name === "local") ?? list[0])?.name ?? current));
        })
        .catch((err: unknown) => {
          if (!cancelled) setEnvironmentsError(describeApiError(err));
        });
    };
    refresh();
    window.addEventListener("focus", refresh);
    return () => {
      cancelled = true;
      window.removeEventListener("focus", refresh);
    };
  }, [api]);

  // ---- the stream ---------------------------------------------------------------------------
  const live = useRef<{ runId: string | null; source: EventSource | null; state: ConsoleState; retry: ReturnType<typeof setTimeout> | null; reopenedAt: number; errors: number }>({
    runId: null,
    source: null,
    state: emptyConsole(),
    retry: null,
    reopenedAt: -1,
    errors: 0,
  });

  const close = useCallback(() => {
    const l = live.current;
    l.source?.close();
    l.source = null;
    if (l.retry) clearTimeout(l.retry);
    l.retry = null;
  }, []);

  const commit = useCallback((next: ConsoleState) => {
    live.current.state = next;
    setConsoleState(next);
  }, []);

  const fetchDetail = useCallback(
    async (runId: string): Promise<Run | null> => {
      try {
        const detail = await api.getRun(runId);
        if (live.current.runId === runId) setRun(detail);
        return detail;
      } catch (err) {
        if (live.current.runId === runId) setActionError(`Could not load run ${runId.slice(0, 8)}: ${describeApiError(err)}`);
        return null;
      }
    },
    [api],
  );

  /** The run ended but its stream did not say so: finish the console from the stored run. */
  const finishFromDetail = useCallback(
    (detail: Run) => {
      const l = live.current;
      if (l.state.finished) return;
      if (l.state.lastSeq === 0) {
        commit(reduceEvents(emptyConsole(detail.id), eventsFromRun(detail)));
      } else {
        const end: RunEventMsg = {
          seq: l.state.lastSeq + 1,
          type: "run.finished",
          data: { status: detail.status, status_code: detail.response?.status_code ?? null, content_type: detail.response?.content_type ?? null, error: detail.error ?? "", duration_ms: detail.duration_ms },
        };
        commit(reduceEvent({ ...l.state, pending: [] }, end));
      }
      close();
      setConnection("closed");
    },
    [close, commit],
  );

  const open = useCallback(
    (runId: string, after: number) => {
      close();
      const l = live.current;
      if (l.runId !== runId) return;
      setConnection(after > 0 ? "reconnecting" : "connecting");
      const source = api.runEvents(runId, after);
      l.source = source;
      const onEvent = (msg: MessageEvent<string>) => {
        if (l.source !== source) return;
        const event = parseEventData(msg.data);
        if (!event) return;
        l.errors = 0;
        let next = reduceEvent(l.state, event);
        if (next === l.state) return;
        if (hasGap(next)) {
          if (l.reopenedAt !== next.lastSeq) {
            // Something between lastSeq and the event that came is missing: ask for it again.
            l.reopenedAt = next.lastSeq;
            commit(next);
            open(runId, next.lastSeq);
            return;
          }
          // Asked again and it is still not there: it was never stored; carry on without it.
          next = skipGap(next);
        }
        commit(next);
        if (next.finished) {
          close();
          setConnection("closed");
          void fetchDetail(runId);
        }
      };
      for (const type of EVENT_TYPES) source.addEventListener(type, onEvent as EventListener);
      source.onmessage = onEvent; // an event without an `event:` name
      source.onopen = () => {
        if (l.source === source) setConnection("open");
      };
      source.onerror = () => {
        if (l.source !== source) return;
        l.errors += 1;
        if (source.readyState === EventSource.CLOSED || l.errors >= 3) {
          // The server refused the stream (or keeps closing it at once): look at the run itself.
          source.close();
          l.source = null;
          setConnection("reconnecting");
          void fetchDetail(runId).then((detail) => {
            if (live.current.runId !== runId) return;
            if (!detail) {
              setConnection("closed");
              return;
            }
            if (isTerminal(detail.status)) {
              // Its stored events are all there is: one more read, then the stored run decides.
              if (l.errors < 3) {
                l.retry = setTimeout(() => open(runId, live.current.state.lastSeq), RETRY_MS);
              } else finishFromDetail(detail);
            } else {
              l.errors = 0;
              l.retry = setTimeout(() => open(runId, live.current.state.lastSeq), RETRY_MS);
            }
          });
        } else {
          setConnection("reconnecting"); // the browser retries by itself with Last-Event-ID
        }
      };
    },
    [api, close, commit, fetchDetail, finishFromDetail],
  );

  const attach = useCallback(
    (runId: string, options: { replay?: boolean; run?: Run } = {}) => {
      close();
      const l = live.current;
      l.runId = runId;
      l.reopenedAt = -1;
      l.errors = 0;
      commit(emptyConsole(runId));
      setRun(options.run ?? null);
      setReplay(!!options.replay);
      setActionError(null);
      setStartProblem(null);
      rememberRun(session, graph, runId);
      open(runId, 0);
      if (!options.run) void fetchDetail(runId);
    },
    [close, commit, fetchDetail, graph, open, session],
  );

  const detach = useCallback(() => {
    close();
    live.current.runId = null;
    commit(emptyConsole());
    setRun(null);
    setConnection("idle");
    setReplay(false);
    setActionError(null);
    rememberRun(session, graph, null);
  }, [close, commit, graph, session]);

  // A reload re-attaches to the run the console showed (its stream replays and goes on live).
  useEffect(() => {
    const id = rememberedRun(session, graph);
    if (id) attach(id);
    return () => close();
  }, [session, graph, attach, close]); // once per page: all four are stable for a page's graph

  // ---- actions ------------------------------------------------------------------------------
  const resolveRef = useRef(resolveVersion);
  resolveRef.current = resolveVersion;
  const formRef = useRef({ payloadCheck, payloadText: payload, environment, headers });
  formRef.current = { payloadCheck, payloadText: payload, environment, headers };
  const startingRef = useRef(false);

  const runNow = useCallback(async () => {
    if (startingRef.current) return;
    const form = formRef.current;
    if (!form.payloadCheck.ok) {
      setStartProblem({ message: form.payloadCheck.error, issues: [] });
      return;
    }
    startingRef.current = true;
    setStarting(true);
    setStartProblem(null);
    try {
      const version = await resolveRef.current();
      if (version === null) return;
      saveLastPayload(local, graph, form.payloadText);
      setLastPayload(form.payloadText);
      const hdrs = headersObject(form.headers);
      const started = await api.startRun(graph, {
        version,
        payload: form.payloadCheck.value,
        environment: form.environment || undefined,
        ...(Object.keys(hdrs).length ? { headers: hdrs } : {}),
      });
      attach(started.id, { run: started });
    } catch (err) {
      setStartProblem({ message: `Could not start the run: ${describeApiError(err)}`, issues: err instanceof ApiError ? err.issues : [] });
    } finally {
      startingRef.current = false;
      setStarting(false);
    }
  }, [api, attach, graph, local]);

  const cancel = useCallback(async () => {
    const id = live.current.runId;
    if (!id) return;
    setCancelling(true);
    setActionError(null);
    try {
      const updated = await api.cancelRun(id);
      if (live.current.runId === id) setRun(updated);
    } catch (err) {
      setActionError(`Could not cancel: ${describeApiError(err)}`);
    } finally {
      setCancelling(false);
    }
  }, [api]);

  const rerun = useCallback(
    async (runId: string) => {
      setActionError(null);
      try {
        const started = await api.rerun(runId);
        attach(started.id, { run: started });
      } catch (err) {
        setActionError(`Could not run it again: ${describeApiError(err)}`);
      }
    },
    [api, attach],
  );

  const marks = useMemo(() => (consoleState.runId ? runMarks(consoleState) : null), [consoleState]);

  return {
    payload,
    setPayload,
    payloadError: payloadCheck.ok ? null : payloadCheck.error,
    environment,
    setEnvironment,
    environments,
    environmentsError,
    headers,
    setHeaders,
    samples,
    graphSamples,
    lastPayload,
    saveSample: (name: string) => setSamples(saveSample(local, graph, name, payload)),
    deleteSample: (name: string) => setSamples(deleteSample(local, graph, name)),
    console: consoleState,
    run,
    marks,
    connection,
    replay,
    starting,
    startProblem,
    cancelling,
    actionError,
    start: runNow,
    attach,
    detach,
    cancel,
    rerun,
  };
}
