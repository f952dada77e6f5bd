import { describe, expect, it } from "vitest";
import { contractBadge, contractText, MAX_SAMPLE_ELEMENTS, metadataSamples, v2SamplePayload } from "./contracts";

const detector = {
  protocol: "v2" as const,
  inputs: [{ name: "image", datatype: "BYTES", shape: [-1] }],
  outputs: [{ name: "boxes", datatype: "INT32", shape: [-1, 4] }],
};

describe("contracts of probed services", () => {
  it("summarises inputs and outputs for a box and for a reader", () => {
    expect(contractBadge(detector)).toBe("image → boxes");
    expect(contractText(detector)).toBe("in: image BYTES [-1]; out: boxes INT32 [-1, 4]");
    expect(contractBadge({ protocol: "v1" })).toBeNull();
    expect(contractText(null)).toBeNull();
    expect(contractBadge({ protocol: "v2", inputs: [{ name: "x", datatype: "FP32", shape: [1] }], outputs: [] })).toBe("x → ?");
  });

  it("builds a v2 request from input metadata: -1 becomes 1, zeros of the datatype", () => {
    expect(v2SamplePayload(detector.inputs)).toEqual({ inputs: [{ name: "image", datatype: "BYTES", shape: [1], data: [""] }] });
    expect(
      v2SamplePayload([
        { name: "x", datatype: "FP32", shape: [-1, 3] },
        { name: "mask", datatype: "BOOL", shape: [2] },
      ]),
    ).toEqual({
      inputs: [
        { name: "x", datatype: "FP32", shape: [1, 3], data: [0, 0, 0] },
        { name: "mask", datatype: "BOOL", shape: [2], data: [false, false] },
      ],
    });
    expect(v2SamplePayload([{ name: "pixels", datatype: "FP32", shape: [-1, 224, 224, 3] }])).toBeNull();
    expect(v2SamplePayload([{ name: "ok", datatype: "INT8", shape: [MAX_SAMPLE_ELEMENTS] }])).not.toBeNull();
    expect(v2SamplePayload([])).toBeNull();
  });

  it("offers one sample per v2 service with inputs", () => {
    const samples = metadataSamples({ "face-detector": detector, extractor: { protocol: "v1" }, bare: { protocol: "v2", inputs: [] } });
    expect(samples.map((s) => s.name)).toEqual(["face-detector (v2 metadata)"]);
    expect(JSON.parse(samples[0].payload)).toEqual(v2SamplePayload(detector.inputs));
    expect(metadataSamples(null)).toEqual([]);
  });
});
