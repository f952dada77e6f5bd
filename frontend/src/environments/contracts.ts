/**
 * What a probed model server says of itself, for the Flow view and the Run panel: a one-line
 * summary of its v2 inputs and outputs, and a sample v2 request built from its input metadata.
 */
import type { ServiceContracts } from "../api";
import { tensorLine } from "./probe";

type Contract = ServiceContracts[string];
type Tensor = NonNullable<Contract["inputs"]>[number];

/** "image → boxes" (names only, for a box on the canvas), or null when nothing is known. */
export function contractBadge(contract: Contract | null | undefined): string | null {
  const inputs = contract?.inputs ?? [];
  const outputs = contract?.outputs ?? [];
  if (inputs.length === 0 && outputs.length === 0) return null;
  const names = (list: Tensor[]) => (list.length === 0 ? "?" : list.map((t) => t.name).join(", "));
  return `${names(inputs)} → ${names(outputs)}`;
}

/** "in: image BYTES [-1]; out: boxes INT32 [-1, 4]" (every tensor, for a tooltip or a reader). */
export function contractText(contract: Contract | null | undefined): string | null {
  const inputs = contract?.inputs ?? [];
  const outputs = contract?.outputs ?? [];
  if (inputs.length === 0 && outputs.length === 0) return null;
  return `in: ${inputs.map(tensorLine).join(", ") || "?"}; out: ${outputs.map(tensorLine).join(", ") || "?"}`;
}

const SAMPLE_VALUE: Record<string, unknown> = { BYTES: "", BOOL: false };

/** The most elements a sample tensor gets (a shape of [-1, 224, 224, 3] would be huge). */
export const MAX_SAMPLE_ELEMENTS = 64;

/**
 * A v2 inference request with one tensor per declared input: each variable dimension (-1) is 1,
 * the data zeros ("" for BYTES, false for BOOL). Null when the inputs are unknown or too large to
 * be a sample.
 */
export function v2SamplePayload(inputs: Tensor[] | null | undefined): { inputs: { name: string; datatype: string; shape: number[]; data: unknown[] }[] } | null {
  if (!inputs || inputs.length === 0) return null;
  const tensors = [];
  for (const input of inputs) {
    const shape = (input.shape ?? [-1]).map((d) => (d < 0 ? 1 : d));
    const count = shape.reduce((a, b) => a * b, 1);
    if (count > MAX_SAMPLE_ELEMENTS) return null;
    const datatype = input.datatype ?? "BYTES";
    tensors.push({ name: input.name, datatype, shape, data: Array.from({ length: count }, () => SAMPLE_VALUE[datatype] ?? 0) });
  }
  return { inputs: tensors };
}

/** Samples from the probed services' v2 metadata: one per service with inputs ("<service> (v2)"). */
export function metadataSamples(contracts: ServiceContracts | null | undefined): { name: string; payload: string }[] {
  if (!contracts) return [];
  return Object.entries(contracts)
    .filter(([, c]) => c.protocol === "v2")
    .flatMap(([service, c]) => {
      const payload = v2SamplePayload(c.inputs);
      return payload ? [{ name: `${service} (v2 metadata)`, payload: JSON.stringify(payload, null, 2) }] : [];
    });
}
