/**
 * The Run panel's request form: payload, environment and headers (kept as a draft per graph across
 * reloads), the environments to choose from, and the saved samples.
 */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { Api, Environment, Page } from "../../api";
import { describeApiError } from "../../common/ui";
import { useRefreshOnFocus } from "../../common/useRefreshOnFocus";
import { deleteSample, loadDraft, loadLastPayload, loadSamples, parsePayload, safeStorage, saveDraft, saveLastPayload, saveSample, type Sample } from "./samples";

const DEFAULT_PAYLOAD = '{\n  "instances": [\n    {}\n  ]\n}';
const NO_SAMPLES: Sample[] = [];

export interface RunForm {
  payload: string;
  setPayload(text: string): void;
  /** The payload parsed, or why it does not parse. */
  payloadCheck: ReturnType<typeof parsePayload>;
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
  /** Remembers `text` as the last payload run. */
  rememberPayload(text: string): void;
  saveSample(name: string): void;
  deleteSample(name: string): void;
}

export function useRunForm({ api, graph, graphSamples = NO_SAMPLES }: { api: Api; graph: string; graphSamples?: Sample[] }): RunForm {
  const local = useMemo(() => safeStorage("local"), []);
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

  const payloadCheck = useMemo(() => parsePayload(payload), [payload]);

  // The request form outlives reloads (per graph).
  useEffect(() => {
    const t = setTimeout(() => saveDraft(local, graph, { payload, environment, headers }), 300);
    return () => clearTimeout(t);
  }, [local, graph, payload, environment, headers]);

  // Listed again whenever the window regains focus: "Manage environments" opens the
  // environments page in another tab, and what is changed there shows up here on return.
  const loadEnvironments = useCallback(
    (alive: () => boolean) => {
      api
        .listEnvironments()
        .then((page: Page<Environment>) => {
          if (!alive()) return;
          const list = page.results;
          setEnvironments(list);
          setEnvironmentsError(null);
          setEnvironment((current) => (list.some((e) => e.name === current) ? current : (list.find((e) => e.name === "local") ?? list[0])?.name ?? current));
        })
        .catch((err: unknown) => {
          if (alive()) setEnvironmentsError(describeApiError(err));
        });
    },
    [api],
  );
  useRefreshOnFocus(loadEnvironments);

  return {
    payload,
    setPayload,
    payloadCheck,
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
    rememberPayload: (text: string) => {
      saveLastPayload(local, graph, text);
      setLastPayload(text);
    },
    saveSample: (name: string) => setSamples(saveSample(local, graph, name, payload)),
    deleteSample: (name: string) => setSamples(deleteSample(local, graph, name)),
  };
}
