/**
 * Test connection, the pure part: what one probed service's result says, as a person reads it
 * (the component in `TestConnection.tsx` only lays these lines out).
 */
import type { ProbeResult, ServiceContracts } from "../api";

export type ProbeTone = "ok" | "warn" | "error";

export interface ProbeSummary {
  tone: ProbeTone;
  /** "ready", "not ready", or the error's kind in words. */
  status: string;
  /** "v2 · triton · 12 ms" */
  detail: string;
  /** The error's message, when there is one. */
  error: string | null;
  /** "input-0 BYTES [-1]" lines of v2 metadata. */
  inputs: string[];
  outputs: string[];
}

const KIND_WORDS: Record<string, string> = {
  blocked: "blocked by the URL guard",
  refused: "connection refused",
  unresolved: "host not found",
  timeout: "timed out",
  "too-large": "answer too large",
  "not-a-model-server": "not a model server",
  transport: "connection failed",
  "bad-url": "not a URL",
};

export function tensorLine(tensor: { name: string; datatype: string | null; shape: number[] | null }): string {
  const shape = tensor.shape ? `[${tensor.shape.join(", ")}]` : "";
  return [tensor.name, tensor.datatype ?? "", shape].filter((part) => part !== "").join(" ");
}

export function summarizeProbe(result: ProbeResult): ProbeSummary {
  const detail = [result.protocol === "unknown" ? "protocol unknown" : result.protocol, result.platform, result.latency_ms !== null ? `${Math.round(result.latency_ms)} ms` : null]
    .filter((part): part is string => !!part)
    .join(" · ");
  const inputs = (result.inputs ?? []).map(tensorLine);
  const outputs = (result.outputs ?? []).map(tensorLine);
  if (result.error) {
    return { tone: "error", status: KIND_WORDS[result.error.kind] ?? result.error.kind, detail, error: result.error.message, inputs, outputs };
  }
  return { tone: result.ready ? "ok" : "warn", status: result.ready ? "ready" : "not ready", detail, error: null, inputs, outputs };
}

/** One line for the whole probe: "2 of 3 services ready". */
export function probeHeadline(results: ProbeResult[]): string {
  if (results.length === 0) return "This environment maps no services: steps use its URL template.";
  const ready = results.filter((r) => r.ready && !r.error).length;
  return `${ready} of ${results.length} service${results.length === 1 ? "" : "s"} ready`;
}

/** The contracts a probe established: each service that answered as a v1 or v2 model server. */
export function contractsFromProbe(results: ProbeResult[]): ServiceContracts {
  const out: ServiceContracts = {};
  for (const result of results) {
    if (result.error || result.protocol === "unknown") continue;
    out[result.service] = { protocol: result.protocol, inputs: result.inputs, outputs: result.outputs };
  }
  return out;
}
