import { describe, expect, it } from "vitest";
import { applyEdit } from "./edits";
import { fromManifest, toManifest } from "./manifest";
import { fixForIssue } from "./fixes";
import type { Issue, JsonObject } from "./types";

const manifest: JsonObject = {
  apiVersion: "serving.kserve.io/v1alpha1",
  kind: "InferenceGraph",
  metadata: { name: "g" },
  spec: { nodes: { root: { routerType: "Sequence", steps: [{ serviceName: "a" }, { serviceName: "b", data: "$response" }] } } },
};
const issue: Issue = { code: "contract.predictions-to-instances", severity: "warning", message: "m", node: "root", step: 1 };

describe("fixForIssue", () => {
  it("sets mapPredictionsToInstances on the receiving step, and is then no longer offered", () => {
    const state = fromManifest(manifest, {});
    const fix = fixForIssue(state, issue);
    expect(fix?.label).toBe("Set mapPredictionsToInstances");
    const fixed = applyEdit(state, fix!.edit);
    const steps = ((toManifest(fixed).spec as JsonObject).nodes as JsonObject).root as JsonObject;
    expect((steps.steps as JsonObject[])[1]).toEqual({ serviceName: "b", data: "$response", mapPredictionsToInstances: true });
    expect(fixForIssue(fixed, issue)).toBeNull();
  });

  it("offers nothing for other codes or a step that is gone", () => {
    const state = fromManifest(manifest, {});
    expect(fixForIssue(state, { ...issue, code: "contract.protocol-mismatch" })).toBeNull();
    expect(fixForIssue(state, { ...issue, step: 5 })).toBeNull();
    expect(fixForIssue(state, { ...issue, node: "nope" })).toBeNull();
  });
});
