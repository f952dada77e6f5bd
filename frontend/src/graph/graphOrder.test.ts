import { describe, expect, it } from "vitest";
import { fromManifest } from "./manifest";
import { graphOrder } from "./queries";
import type { JsonObject } from "./types";

function state(nodes: JsonObject) {
  return fromManifest({ apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" }, spec: { nodes } }, null);
}

describe("graphOrder", () => {
  it("starts at root and follows nodeName steps breadth-first, in step order", () => {
    const s = state({
      zeta: { routerType: "Sequence", steps: [{ serviceName: "x" }] },
      beta: { routerType: "Sequence", steps: [{ nodeName: "zeta" }] },
      alpha: { routerType: "Sequence", steps: [{ serviceName: "y" }] },
      root: { routerType: "Sequence", steps: [{ nodeName: "beta" }, { nodeName: "alpha" }] },
      spare: { routerType: "Sequence", steps: [] },
    });
    expect(graphOrder(s)).toEqual(["root", "beta", "alpha", "zeta", "spare"]);
  });
  it("visits a node once when several steps (or a cycle) lead to it", () => {
    const s = state({
      root: { routerType: "Sequence", steps: [{ nodeName: "a" }, { nodeName: "a" }] },
      a: { routerType: "Sequence", steps: [{ nodeName: "root" }] },
    });
    expect(graphOrder(s)).toEqual(["root", "a"]);
  });
  it("keeps manifest order when there is no root", () => {
    const s = state({ b: { routerType: "Sequence", steps: [] }, a: { routerType: "Sequence", steps: [] } });
    expect(graphOrder(s)).toEqual(["b", "a"]);
  });
});
