import { describe, expect, it } from "vitest";
import { fromManifest } from "../graph/manifest";
import { lowDetail, LOW_DETAIL_BELOW } from "./lod";
import { backingScale, drawScene, hitTest, MIN_LABEL_PX, nextBox, sceneBounds, SELECTED, type LodBox, type LodContext, type LodScene } from "./lodScene";
import { cardEstimate, fittedViewport, LINE_SELECTED, nodesScene } from "./nodesScene";

const box = (id: string, x: number, y: number, extra: Partial<LodBox> = {}): LodBox => ({ id, x, y, width: 100, height: 50, fill: "#fff", stroke: "#000", label: id, selected: false, ...extra });

/** A 2D context that records the calls that draw something. */
function recorder() {
  const calls: { op: string; args: unknown[]; fill?: unknown; stroke?: unknown; width?: number }[] = [];
  const ctx = { fillStyle: "", strokeStyle: "", lineWidth: 1, font: "", textBaseline: "alphabetic" } as unknown as LodContext & Record<string, unknown>;
  for (const op of ["setTransform", "clearRect", "beginPath", "moveTo", "lineTo", "stroke", "fillRect", "strokeRect", "fillText", "save", "restore", "rect", "clip"]) {
    (ctx as Record<string, unknown>)[op] = (...args: unknown[]) => calls.push({ op, args, fill: ctx.fillStyle, stroke: ctx.strokeStyle, width: ctx.lineWidth });
  }
  return { ctx, calls };
}

describe("hitTest", () => {
  const scene: LodScene = {
    boxes: [box("outer", 0, 0, { width: 500, height: 400, frame: true }), box("inner", 50, 50, { width: 300, height: 200, frame: true }), box("a", 100, 100), box("b", 150, 120), box("join", 400, 300, { inert: true })],
    lines: [],
  };

  it("finds the box under a point, the one drawn last where boxes overlap", () => {
    expect(hitTest(scene, { x: 110, y: 110 })?.id).toBe("a");
    expect(hitTest(scene, { x: 160, y: 130 })?.id).toBe("b");
    expect(hitTest(scene, { x: 200, y: 100 })?.id).toBe("a");
  });

  it("gives the innermost frame where no box is, and nothing outside every box", () => {
    expect(hitTest(scene, { x: 60, y: 60 })?.id).toBe("inner");
    expect(hitTest(scene, { x: 20, y: 380 })?.id).toBe("outer");
    expect(hitTest(scene, { x: 600, y: 10 })).toBeNull();
  });

  it("never hits an inert box (it falls through to its frame)", () => {
    expect(hitTest(scene, { x: 410, y: 310 })?.id).toBe("outer");
  });
});

describe("drawScene", () => {
  const scene: LodScene = {
    boxes: [box("a", 0, 0), box("b", 200, 0, { selected: true }), box("g", -20, -20, { width: 400, height: 100, frame: true })],
    lines: [
      { points: [{ x: 100, y: 25 }, { x: 200, y: 25 }], color: "#999" },
      { points: [{ x: 100, y: 30 }, { x: 150, y: 60 }, { x: 200, y: 30 }], color: "#999" },
      { points: [{ x: 0, y: 0 }], color: "#999" },
    ],
  };

  it("draws every box and line, lines of one colour in one stroke, the selected box outlined last", () => {
    const { ctx, calls } = recorder();
    const stats = drawScene(ctx, scene, { x: -30, y: -30 }, 0.5, 0.5, { width: 300, height: 100 });
    expect(stats).toEqual({ boxes: 3, lines: 2, labels: 2 });
    expect(calls.filter((c) => c.op === "stroke")).toHaveLength(1);
    expect(calls.filter((c) => c.op === "fillRect").map((c) => c.args)).toEqual([
      [0, 0, 100, 50],
      [200, 0, 100, 50],
    ]);
    const outlines = calls.filter((c) => c.op === "strokeRect");
    // The frame first (no fill), then the boxes; the selected one last, thicker, in the selection colour.
    expect(outlines.map((c) => c.args[0])).toEqual([-20, 0, 200]);
    expect(outlines[2].stroke).toBe(SELECTED);
    expect(outlines[2].width).toBeGreaterThan(outlines[1].width ?? 0);
    // The bitmap's origin is the picture's corner, at the bitmap's scale.
    expect(calls.find((c) => c.op === "setTransform" && c.args[0] === 0.5)?.args).toEqual([0.5, 0, 0, 0.5, 15, 15]);
  });

  it("leaves out labels too small to read on screen", () => {
    const { ctx, calls } = recorder();
    // 50 flow px tall at a zoom of 0.1 is 5 px on screen: no room for 7 px text.
    const stats = drawScene(ctx, scene, { x: 0, y: 0 }, 0.1, 0.1, { width: 50, height: 20 });
    expect(stats.labels).toBe(0);
    expect(calls.some((c) => c.op === "fillText")).toBe(false);
    expect(MIN_LABEL_PX / 0.1).toBeGreaterThan(50 / 1.4);
  });
});

describe("backingScale", () => {
  it("is the zoom times the device pixel ratio, less for a picture too large for one bitmap", () => {
    expect(backingScale({ x: 0, y: 0, width: 1000, height: 1000 }, 0.2, 2)).toBeCloseTo(0.4);
    const big = { x: 0, y: 0, width: 40_000, height: 40_000 };
    const s = backingScale(big, 0.25, 2, 4_000_000);
    expect(big.width * s * big.height * s).toBeCloseTo(4_000_000, -2);
  });
});

describe("nextBox", () => {
  const scene: LodScene = { boxes: [box("g", 0, 0, { frame: true, width: 900, height: 900 }), box("a", 0, 0), box("right", 300, 10), box("far-right-below", 250, 400), box("below", 0, 200)], lines: [] };

  it("starts at the first box and Tab goes on in order, round to the first", () => {
    expect(nextBox(scene, null, "ArrowRight")?.id).toBe("a");
    expect(nextBox(scene, null, "Tab")?.id).toBe("a");
    expect(nextBox(scene, "a", "Tab")?.id).toBe("right");
    expect(nextBox(scene, "below", "Tab")?.id).toBe("a");
  });

  it("goes to the nearest box that way, straight ahead first", () => {
    expect(nextBox(scene, "a", "ArrowRight")?.id).toBe("right");
    expect(nextBox(scene, "a", "ArrowDown")?.id).toBe("below");
    expect(nextBox(scene, "right", "ArrowLeft")?.id).toBe("a");
    expect(nextBox(scene, "a", "ArrowUp")).toBeNull();
  });
});

describe("the Nodes view's overview", () => {
  const state = fromManifest(
    {
      apiVersion: "serving.kserve.io/v1alpha1",
      kind: "InferenceGraph",
      metadata: { name: "g" },
      spec: {
        nodes: {
          root: { routerType: "Sequence", steps: [{ serviceName: "a" }, { nodeName: "pick" }] },
          pick: { routerType: "Switch", steps: [{ serviceName: "b", condition: "x" }] },
        },
      },
    },
    { nodes: { root: { x: 0, y: 0 }, pick: { x: 600, y: 0 } } },
  );

  it("draws a box per card (measured, else estimated) and a line per step that calls a node", () => {
    const scene = nodesScene(state, { kind: "step", node: "root", index: 1 }, new Map([["pick", { width: 300, height: 120 }]]));
    expect(scene.boxes.map((b) => [b.id, b.x, b.width, b.height, b.selected])).toEqual([
      ["root", 0, 262, cardEstimate(2).height, true],
      ["pick", 600, 300, 120, false],
    ]);
    expect(scene.lines).toEqual([
      {
        points: [
          { x: 262, y: (cardEstimate(2).height * 2) / 3 },
          { x: 600, y: 60 },
        ],
        color: LINE_SELECTED,
      },
    ]);
    expect(sceneBounds(scene)).toEqual({ x: 0, y: 0, width: 900, height: cardEstimate(2).height });
  });

  it("opens a graph too large for the canvas below the low-detail threshold, a small one above it", () => {
    const nodes: Record<string, unknown> = {};
    const positions: Record<string, { x: number; y: number }> = {};
    for (let i = 0; i < 400; i++) {
      nodes[i ? `n${i}` : "root"] = { routerType: "Sequence", steps: [{ serviceName: "s" }] };
      positions[i ? `n${i}` : "root"] = { x: (i % 20) * 360, y: Math.floor(i / 20) * 220 };
    }
    const big = fromManifest({ apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" }, spec: { nodes } } as never, { nodes: positions });
    const fit = fittedViewport(big, 1200, 800);
    expect(fit && lowDetail(fit.zoom, false)).toBe(true);
    expect(fit?.zoom).toBeLessThan(LOW_DETAIL_BELOW);
    const small = fittedViewport(state, 1200, 800);
    expect(small && lowDetail(small.zoom, false)).toBe(false);
    expect(fittedViewport(state, 0, 800)).toBeNull();
  });
});
