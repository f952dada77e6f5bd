/**
 * Shell commands that do through the API what a button does in the studio ("Copy as curl"): start
 * the same run again, download the same export. The token is read from `$STUDIO_TOKEN` (a personal
 * API token from the API tokens page), never written into the command; everything else is single-quoted,
 * so the shell reads nothing inside it.
 */
import type { Run } from "../api";

export const TOKEN_VARIABLE = "STUDIO_TOKEN";

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

const AUTH = `-H "Authorization: Token $${TOKEN_VARIABLE}"`;

function apiUrl(origin: string, path: string): string {
  return `${origin.replace(/\/+$/, "")}/api/${path}`;
}

/** Headers the API sets itself from the run's input (not sent as `headers`). */
const OWN_HEADERS = new Set(["content-type", "content-length", "host"]);

/**
 * `POST /api/graphs/{graph}/runs/` with the run's version, request (payload, content type and
 * headers), environment and seed: the same run again. Null when the run's request is not loaded.
 */
export function runCurl(origin: string, run: Pick<Run, "graph" | "version" | "request" | "environment" | "seed">): string | null {
  const request = run.request;
  if (!request || !("body" in request)) return null;
  const contentType = request.content_type ?? "";
  const isJson = /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType);
  const input: Record<string, unknown> = { version: run.version, payload: request.body ?? null };
  if (!isJson || typeof request.body === "string") {
    input.payload = typeof request.body === "string" ? request.body : JSON.stringify(request.body ?? null);
    if (contentType) input.content_type = contentType;
  }
  const headers = Object.fromEntries(Object.entries(request.headers ?? {}).filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())));
  if (Object.keys(headers).length) input.headers = headers;
  if (run.environment?.name) input.environment = run.environment.name;
  if (typeof run.seed === "number") input.seed = run.seed;
  const url = apiUrl(origin, `graphs/${encodeURIComponent(run.graph)}/runs/`);
  return `curl -X POST ${AUTH} -H 'Content-Type: application/json' --data-binary ${shellQuote(JSON.stringify(input))} ${shellQuote(url)}`;
}

/** `GET …/versions/{n}/export/?format=…`, saved as the file the Export menu downloads. */
export function exportCurl(origin: string, graph: string, version: number, format: "yaml" | "json"): string {
  const url = apiUrl(origin, `graphs/${encodeURIComponent(graph)}/versions/${version}/export/?format=${format}`);
  return `curl ${AUTH} -o ${shellQuote(`${graph}-v${version}.${format}`)} ${shellQuote(url)}`;
}
