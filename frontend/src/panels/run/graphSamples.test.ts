import { describe, expect, it } from "vitest";
import { graphSamples, loadLastPayload, saveLastPayload } from "./samples";

function memoryStore() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) };
}

describe("the graph's own samples", () => {
  it("reads the layout's samples list as payload text", () => {
    const samples = graphSamples({ samples: [{ name: "Demo request", payload: { instances: [{ image: "x.jpg" }] } }] });
    expect(samples).toEqual([{ name: "Demo request", payload: '{\n  "instances": [\n    {\n      "image": "x.jpg"\n    }\n  ]\n}' }]);
  });
  it("leaves out malformed entries and reads a layout without samples as none", () => {
    expect(graphSamples({ samples: [{ payload: 1 }, { name: "no payload" }, "x", { name: "ok", payload: [1, 2] }] })).toEqual([{ name: "ok", payload: "[1, 2]" }]);
    expect(graphSamples({})).toEqual([]);
    expect(graphSamples({ samples: "nope" })).toEqual([]);
  });
});

describe("the last payload used", () => {
  it("is remembered per graph", () => {
    const store = memoryStore();
    expect(loadLastPayload(store, "g")).toBeNull();
    saveLastPayload(store, "g", '{"a": 1}');
    expect(loadLastPayload(store, "g")).toBe('{"a": 1}');
    expect(loadLastPayload(store, "other")).toBeNull();
  });
});
