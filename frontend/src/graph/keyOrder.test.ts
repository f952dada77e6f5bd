import { describe, expect, it } from "vitest";
import { inExportOrder } from "./keyOrder";
import type { JsonObject } from "./types";

// What the server sends back: every key sorted (graphs/language/canonical.py).
const CANONICAL: JsonObject = {
  apiVersion: "serving.kserve.io/v1alpha1",
  kind: "InferenceGraph",
  metadata: { annotations: { a: "1" }, name: "g", namespace: "default" },
  spec: {
    maxReplicas: 3,
    nodes: {
      root: {
        routerType: "Sequence",
        steps: [{ condition: "x", data: "$response", dependency: "Hard", name: "one", serviceName: "svc", zeta: 1 }],
      },
    },
  },
};

describe("inExportOrder", () => {
  it("puts keys in the order the export writes them, others after", () => {
    const out = inExportOrder(CANONICAL);
    expect(Object.keys(out)).toEqual(["apiVersion", "kind", "metadata", "spec"]);
    expect(Object.keys(out.metadata as JsonObject)).toEqual(["name", "namespace", "annotations"]);
    expect(Object.keys(out.spec as JsonObject)).toEqual(["nodes", "maxReplicas"]);
    const step = (((out.spec as JsonObject).nodes as JsonObject).root as JsonObject).steps as JsonObject[];
    expect(Object.keys(step[0])).toEqual(["name", "serviceName", "condition", "data", "dependency", "zeta"]);
  });
  it("changes no value and leaves the input alone", () => {
    const before = JSON.stringify(CANONICAL);
    const out = inExportOrder(CANONICAL);
    expect(JSON.stringify(CANONICAL)).toBe(before);
    expect(out).toEqual(CANONICAL);
  });
  it("leaves malformed parts as they are", () => {
    const odd: JsonObject = { spec: { nodes: { root: "nope", b: { steps: ["x", { name: "n", weight: 1 }] } } } };
    expect(inExportOrder(odd)).toEqual(odd);
  });
});
