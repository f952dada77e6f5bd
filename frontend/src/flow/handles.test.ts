import type { NodeHandle } from "@xyflow/react";
import { describe, expect, it } from "vitest";
import { boxHandles, withBoxHandles } from "./handles";

describe("boxHandles", () => {
  it("puts the in handle on the left edge and the out handle on the right edge, half-way down", () => {
    // As measured in the page for a 220 x 70 step box: 9 px squares at (-4.5, 30.5) and (215.5, 30.5).
    const [inHandle, outHandle] = boxHandles(220, 70);
    expect(inHandle).toMatchObject({ type: "target", position: "left", x: -4.5, y: 30.5, width: 9, height: 9 });
    expect(outHandle).toMatchObject({ type: "source", position: "right", x: 215.5, y: 30.5, width: 9, height: 9 });
  });
});

describe("withBoxHandles", () => {
  type TestNode = { id: string; type: string; width: number; height: number; measured?: { width: number; height: number }; handles?: NodeHandle[] };
  it("gives handles to the boxes not measured yet, and none to a frame", () => {
    const box = { id: "b", type: "flowBox", width: 120, height: 44 };
    const join = { id: "j", type: "flowJoin", width: 14, height: 14 };
    const frame = { id: "g", type: "flowGroup", width: 300, height: 200 };
    const measured = { id: "m", type: "flowBox", width: 220, height: 70, measured: { width: 220, height: 70 } };
    const [b, j, g, m] = withBoxHandles<TestNode>([box, join, frame, measured]);
    expect(b.handles).toEqual(boxHandles(120, 44));
    expect(j.handles).toEqual(boxHandles(14, 14));
    // A frame has no handle: given none (else React Flow mounts every frame to look for some).
    expect(g.handles).toEqual([]);
    expect([b.measured, g.measured]).toEqual([
      { width: 120.5, height: 44.5 },
      { width: 300.5, height: 200.5 },
    ]);
    // Measured: React Flow's own handle bounds are kept (no handles given).
    expect(m).toBe(measured);
  });
});
