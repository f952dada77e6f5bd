/**
 * The Run panel's state and actions, lifted into the editor so that the canvas (marks), the
 * toolbar ("Runs", Ctrl+Enter) and the panel share one run: the request form (`useRunForm`), the
 * run being shown with its console (`useRunStream`), and the actions that join them (start,
 * cancel, run again).
 */
import { useCallback, useRef, useState } from "react";
import { ApiError, type Api, type Run } from "../../api";
import { describeApiError } from "../../common/ui";
import { useLatest } from "../../common/useLatest";
import type { Issue } from "../../graph/types";
import { headersObject, type Sample } from "./samples";
import { useRunForm, type RunForm } from "./useRunForm";
import { useRunStream, type RunStream } from "./useRunStream";

export type { Connection } from "./useRunStream";

export interface StartProblem {
  message: string;
  issues: Issue[];
}

/** The form's fields as the panel uses them (parsing and remembering stay inside). */
type FormView = Omit<RunForm, "payloadCheck" | "rememberPayload">;
/** The run shown, as the panel and the canvas use it. */
type StreamView = Pick<RunStream, "console" | "run" | "marks" | "connection" | "replay" | "loading" | "actionError" | "detach">;

export interface RunController extends FormView, StreamView {
  starting: boolean;
  startProblem: StartProblem | null;
  cancelling: boolean;
  /** Runs the version `resolveVersion` picks with the form's request. */
  start(): Promise<void>;
  attach(runId: string, options?: { replay?: boolean; run?: Run }): void;
  cancel(): Promise<void>;
  rerun(runId: string): Promise<void>;
}

export function useRunController({
  api,
  graph,
  resolveVersion,
  graphSamples,
}: {
  api: Api;
  graph: string;
  resolveVersion: () => Promise<number | null>;
  graphSamples?: Sample[];
}): RunController {
  const form = useRunForm({ api, graph, graphSamples });
  const stream = useRunStream({ api, graph });
  const [starting, setStarting] = useState(false);
  const [startProblem, setStartProblem] = useState<StartProblem | null>(null);
  const [cancelling, setCancelling] = useState(false);

  const streamAttach = stream.attach;
  const attach = useCallback(
    (runId: string, options?: { replay?: boolean; run?: Run }) => {
      setStartProblem(null);
      streamAttach(runId, options);
    },
    [streamAttach],
  );

  const resolveRef = useLatest(resolveVersion);
  const formRef = useLatest(form);
  const startingRef = useRef(false);

  const runNow = useCallback(async () => {
    if (startingRef.current) return;
    const f = formRef.current;
    if (!f.payloadCheck.ok) {
      setStartProblem({ message: f.payloadCheck.error, issues: [] });
      return;
    }
    startingRef.current = true;
    setStarting(true);
    setStartProblem(null);
    try {
      const version = await resolveRef.current();
      if (version === null) return;
      f.rememberPayload(f.payload);
      const hdrs = headersObject(f.headers);
      const started = await api.startRun(graph, {
        version,
        payload: f.payloadCheck.value,
        environment: f.environment || undefined,
        ...(Object.keys(hdrs).length ? { headers: hdrs } : {}),
      });
      attach(started.id, { run: started });
    } catch (err) {
      setStartProblem({ message: `Could not start the run: ${describeApiError(err)}`, issues: err instanceof ApiError ? err.issues : [] });
    } finally {
      startingRef.current = false;
      setStarting(false);
    }
  }, [api, attach, formRef, graph, resolveRef]);

  const { currentRunId, setRun, setActionError } = stream;
  const cancel = useCallback(async () => {
    const id = currentRunId();
    if (!id) return;
    setCancelling(true);
    setActionError(null);
    try {
      setRun(await api.cancelRun(id));
    } catch (err) {
      setActionError(`Could not cancel: ${describeApiError(err)}`);
    } finally {
      setCancelling(false);
    }
  }, [api, currentRunId, setActionError, setRun]);

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
    [api, attach, setActionError],
  );

  const { payloadCheck: _parsed, rememberPayload: _remember, ...formView } = form;
  return {
    ...formView,
    console: stream.console,
    run: stream.run,
    marks: stream.marks,
    connection: stream.connection,
    replay: stream.replay,
    loading: stream.loading,
    actionError: stream.actionError,
    detach: stream.detach,
    starting,
    startProblem,
    cancelling,
    start: runNow,
    attach,
    cancel,
    rerun,
  };
}
