/**
 * The key order people write (and the export prints, graphs/language/export.py) for a manifest the
 * server sends back. The server stores a canonical document with its keys sorted; shown as it
 * is, the YAML panel would read `dependency, name, serviceName` where the export reads `name,
 * serviceName, dependency`. Known keys go first in that order; any others
 * follow in the order they came. Nothing is added or dropped.
 */
import { isObject } from "./manifest";
import type { Json, JsonObject } from "./types";

const TOP = ["apiVersion", "kind", "metadata", "spec"];
const METADATA = ["name", "namespace", "labels", "annotations"];
const SPEC = ["nodes"];
const NODE = ["routerType", "steps"];
const STEP = ["name", "nodeName", "serviceName", "serviceUrl", "condition", "data", "weight", "dependency", "mapPredictionsToInstances"];

function ordered(obj: JsonObject, first: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of first) if (k in obj) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[k] = v;
  return out;
}

function orderedNodes(nodes: Json): Json {
  if (!isObject(nodes)) return nodes;
  const out: JsonObject = {};
  for (const [name, node] of Object.entries(nodes)) {
    if (!isObject(node)) {
      out[name] = node;
      continue;
    }
    const n = ordered(node, NODE);
    if (Array.isArray(n.steps)) n.steps = n.steps.map((s) => (isObject(s) ? ordered(s, STEP) : s));
    out[name] = n;
  }
  return out;
}

/** `manifest` with its keys in export order (see the module comment). Pure. */
export function inExportOrder(manifest: JsonObject): JsonObject {
  const out = ordered(manifest, TOP);
  if (isObject(out.metadata)) out.metadata = ordered(out.metadata, METADATA);
  if (isObject(out.spec)) {
    const spec = ordered(out.spec, SPEC);
    if ("nodes" in spec) spec.nodes = orderedNodes(spec.nodes);
    out.spec = spec;
  }
  return out;
}
