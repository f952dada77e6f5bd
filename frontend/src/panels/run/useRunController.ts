/**
 * The Run panel's state and actions, lifted into the editor so that the canvas (marks), the
 * toolbar ("Runs", Ctrl+Enter) and the panel share one run: the request form (`useRunForm`), the
 * run being shown with its console (`useRunStream`), and the actions that join them (start,
 * cancel, run again).
 */
import { useCallback, useRef, useState } from "react";
import { ApiError, type Api, type Environment, type Run } from "../../api";
import { describeApiError } from "../../common/ui";
import type { Issue } from "../../graph/types";
import type { ConsoleState, RunMarks } from "./console";
import { headersObject, type Sample } from "./samples";
import { useRunForm } from "./useRunForm";
import { useRunStream, type Connection } from "./useRunStream";

export type { Connection } from "./useRunStream";

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

  const resolveRef = useRef(resolveVersion);
  resolveRef.current = resolveVersion;
  const formRef = useRef(form);
  formRef.current = form;
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
  }, [api, attach, graph]);

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

  return {
    payload: form.payload,
    setPayload: form.setPayload,
    payloadError: form.payloadError,
    environment: form.environment,
    setEnvironment: form.setEnvironment,
    environments: form.environments,
    environmentsError: form.environmentsError,
    headers: form.headers,
    setHeaders: form.setHeaders,
    samples: form.samples,
    graphSamples: form.graphSamples,
    lastPayload: form.lastPayload,
    saveSample: form.saveSample,
    deleteSample: form.deleteSample,
    console: stream.console,
    run: stream.run,
    marks: stream.marks,
    connection: stream.connection,
    replay: stream.replay,
    starting,
    startProblem,
    cancelling,
    actionError: stream.actionError,
    start: runNow,
    attach,
    detach: stream.detach,
    cancel,
    rerun,
  };
}
