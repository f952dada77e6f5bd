/**
 * What the Run panel keeps in the browser, per graph: saved sample payloads and the last request
 * (localStorage), and the run the console shows (sessionStorage, so a reload re-attaches to it).
 * Every function takes the Storage, so tests pass a Map-backed one; storage failures (full,
 * disabled) are swallowed: nothing here is worth breaking the editor for.
 */

import { prettyJson } from "./prettyJson";

export interface Sample {
  name: string;
  payload: string;
}

export interface Draft {
  payload: string;
  environment: string;
  headers: [string, string][];
}

type Store = Pick<Storage, "getItem" | "setItem" | "removeItem">;

const PREFIX = "inference-graph-studio";
const samplesKey = (graph: string) => `${PREFIX}:samples:${graph}`;
const draftKey = (graph: string) => `${PREFIX}:run-draft:${graph}`;
const currentKey = (graph: string) => `${PREFIX}:current-run:${graph}`;
const lastKey = (graph: string) => `${PREFIX}:last-payload:${graph}`;

/** The layout key under which a version carries the graph's own samples (execution/devtools/demo.py). */
export const LAYOUT_SAMPLES_KEY = "samples";

/**
 * The graph's own sample payloads, from its layout's `samples` list (`[{"name", "payload"}]`,
 * the payload any JSON value), as text for the payload editor. Malformed entries are left out.
 */
export function graphSamples(layoutExtra: Record<string, unknown>): Sample[] {
  const list = layoutExtra[LAYOUT_SAMPLES_KEY];
  if (!Array.isArray(list)) return [];
  return list
    .filter((x): x is { name: string; payload: unknown } => !!x && typeof x === "object" && typeof (x as { name?: unknown }).name === "string" && "payload" in x)
    .map((x) => ({ name: x.name, payload: prettyJson(x.payload) }));
}

/** The payload of the last run started from this browser for the graph. */
export function loadLastPayload(store: Store | null, graph: string): string | null {
  const p = read<unknown>(store, lastKey(graph));
  return typeof p === "string" ? p : null;
}

export function saveLastPayload(store: Store | null, graph: string, payload: string): void {
  write(store, lastKey(graph), payload);
}

function read<T>(store: Store | null, key: string): T | null {
  try {
    const text = store?.getItem(key);
    return text ? (JSON.parse(text) as T) : null;
  } catch {
    return null;
  }
}

function write(store: Store | null, key: string, value: unknown): void {
  try {
    if (value === null) store?.removeItem(key);
    else store?.setItem(key, JSON.stringify(value));
  } catch {
    /* full or disabled storage: the sample lives as long as the page */
  }
}

export function loadSamples(store: Store | null, graph: string): Sample[] {
  const list = read<unknown>(store, samplesKey(graph));
  if (!Array.isArray(list)) return [];
  return list.filter((s): s is Sample => !!s && typeof s === "object" && typeof (s as Sample).name === "string" && typeof (s as Sample).payload === "string");
}

/** Saves (or replaces, by name) a sample; returns the new list, sorted by name. */
export function saveSample(store: Store | null, graph: string, name: string, payload: string): Sample[] {
  const clean = name.trim();
  if (!clean) return loadSamples(store, graph);
  const list = loadSamples(store, graph).filter((s) => s.name !== clean);
  list.push({ name: clean, payload });
  list.sort((a, b) => a.name.localeCompare(b.name));
  write(store, samplesKey(graph), list);
  return list;
}

export function deleteSample(store: Store | null, graph: string, name: string): Sample[] {
  const list = loadSamples(store, graph).filter((s) => s.name !== name);
  write(store, samplesKey(graph), list.length ? list : null);
  return list;
}

export function loadDraft(store: Store | null, graph: string): Draft | null {
  const d = read<Partial<Draft>>(store, draftKey(graph));
  if (!d || typeof d.payload !== "string") return null;
  const headers = Array.isArray(d.headers) ? d.headers.filter((h): h is [string, string] => Array.isArray(h) && typeof h[0] === "string" && typeof h[1] === "string") : [];
  return { payload: d.payload, environment: typeof d.environment === "string" ? d.environment : "", headers };
}

export function saveDraft(store: Store | null, graph: string, draft: Draft): void {
  write(store, draftKey(graph), draft);
}

export function rememberRun(store: Store | null, graph: string, runId: string | null): void {
  write(store, currentKey(graph), runId);
}

export function rememberedRun(store: Store | null, graph: string): string | null {
  const id = read<unknown>(store, currentKey(graph));
  return typeof id === "string" && id ? id : null;
}

export function safeStorage(kind: "local" | "session"): Store | null {
  try {
    return kind === "local" ? window.localStorage : window.sessionStorage;
  } catch {
    return null;
  }
}

/** Parses the payload editor's text: the JSON value, or the parse error to show. */
export function parsePayload(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!text.trim()) return { ok: false, error: "The payload is empty: type a JSON value (for example {\"instances\": []})." };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Header rows as the API takes them: empty names dropped, the last of a repeated name wins. */
export function headersObject(rows: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of rows) if (name.trim()) out[name.trim()] = value;
  return out;
}
