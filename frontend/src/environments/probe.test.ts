import { describe, expect, it } from "vitest";
import type { ProbeResult } from "../api";
import { contractsFromProbe, probeHeadline, summarizeProbe, tensorLine } from "./probe";

function result(overrides: Partial<ProbeResult>): ProbeResult {
  return { service: "s", url: "http://h/v2/models/s/infer", protocol: "v2", model: "s", ready: true, platform: null, versions: null, inputs: null, outputs: null, latency_ms: 12.4, error: null, checked: [], ...overrides };
}

describe("summarizeProbe", () => {
  it("a ready v2 service shows its platform, latency and tensors", () => {
    const summary = summarizeProbe(result({ platform: "triton", inputs: [{ name: "input-0", datatype: "FP32", shape: [-1, 4] }], outputs: [{ name: "out", datatype: null, shape: null }] }));
    expect(summary).toMatchObject({ tone: "ok", status: "ready", detail: "v2 · triton · 12 ms", error: null });
    expect(summary.inputs).toEqual(["input-0 FP32 [-1, 4]"]);
    expect(summary.outputs).toEqual(["out"]);
  });

  it("a v1 service that is not ready is a warning", () => {
    expect(summarizeProbe(result({ protocol: "v1", ready: false }))).toMatchObject({ tone: "warn", status: "not ready", detail: "v1 · 12 ms" });
  });

  it("an error names its kind in words and keeps the server's message", () => {
    const summary = summarizeProbe(result({ protocol: "unknown", ready: false, latency_ms: null, error: { kind: "blocked", message: "blocked by the environment's URL guard: 169.254.169.254 is a link-local/metadata address" } }));
    expect(summary).toMatchObject({ tone: "error", status: "blocked by the URL guard", detail: "protocol unknown" });
    expect(summary.error).toContain("link-local/metadata");
  });
});

describe("probeHeadline", () => {
  it("counts the ready services, errors not", () => {
    expect(probeHeadline([result({}), result({ error: { kind: "timeout", message: "t" } }), result({ ready: false })])).toBe("1 of 3 services ready");
    expect(probeHeadline([result({})])).toBe("1 of 1 service ready");
    expect(probeHeadline([])).toMatch(/maps no services/);
  });

  it("keeps a tensor without datatype or shape readable", () => {
    expect(tensorLine({ name: "x", datatype: "BYTES", shape: [] })).toBe("x BYTES []");
  });
});

describe("serviceNames", () => {
  it("lists each serviceName the steps call once, sorted", async () => {
    const { serviceNames } = await import("../graph/queries");
    const step = (fields: Record<string, unknown>, id: string) => ({ id, fields: fields as never });
    const nodes = [
      { name: "root", raw: {}, position: { x: 0, y: 0 }, steps: [step({ serviceName: "b" }, "1"), step({ nodeName: "n" }, "2"), step({ serviceName: "a" }, "3")] },
      { name: "n", raw: {}, position: { x: 0, y: 0 }, steps: [step({ serviceName: "b" }, "4"), step({ serviceUrl: "http://x" }, "5")] },
    ];
    expect(serviceNames({ nodes })).toEqual(["a", "b"]);
  });
});

describe("contractsFromProbe", () => {
  it("keeps the services that answered as model servers, with their tensors", () => {
    const inputs = [{ name: "x", datatype: "FP32", shape: [-1] }];
    const contracts = contractsFromProbe([
      result({ service: "a", inputs }),
      result({ service: "b", protocol: "v1" }),
      result({ service: "c", protocol: "unknown", error: { kind: "refused", message: "r" } }),
      result({ service: "d", protocol: "v1", error: { kind: "not-a-model-server", message: "n" } }),
    ]);
    expect(contracts).toEqual({ a: { protocol: "v2", inputs, outputs: null }, b: { protocol: "v1", inputs: null, outputs: null } });
  });
});
