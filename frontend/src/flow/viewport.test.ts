import { describe, expect, it } from "vitest";
import { autoFlowLayout, BOX_SIZES, groupFrames } from "./layout";
import { project } from "./project";
import { bestFit, boundsOf, commonShift, FIT_MARGIN, FIT_MAX_ZOOM, firstViewport, fitZoom, READABLE_ZOOM, SMALLEST_BOX_TEXT } from "./viewport";
import { FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";

describe("the Flow view's first viewport", () => {
  it("centres a picture that fits, never zooming in past the fit's maximum", () => {
    const v = firstViewport({ x: 0, y: 0, width: 400, height: 100 }, 1000, 600);
    expect(v.zoom).toBe(FIT_MAX_ZOOM);
    expect(v.x).toBe(Math.round((1000 - 400 * FIT_MAX_ZOOM) / 2));
    expect(v.y).toBe(Math.round((600 - 100 * FIT_MAX_ZOOM) / 2));
  });

  it("fits a picture that is readable when fitted", () => {
    const v = firstViewport({ x: 100, y: 50, width: 900, height: 200 }, 1000, 600);
    expect(v.zoom).toBeCloseTo((1000 - 2 * FIT_MARGIN) / 900);
    expect(v.zoom).toBeGreaterThanOrEqual(READABLE_ZOOM);
    // The picture's left and right edges are the same distance from the canvas's edges.
    const left = 100 * v.zoom + v.x;
    expect(Math.abs(left - (1000 - (left + 900 * v.zoom)))).toBeLessThanOrEqual(1);
  });

  it("a long picture opens readable at its start: left edge at the margin, centred vertically", () => {
    const v = firstViewport({ x: -20, y: 10, width: 3000, height: 300 }, 900, 700);
    expect(v.zoom).toBe(READABLE_ZOOM);
    expect(-20 * v.zoom + v.x).toBeCloseTo(FIT_MARGIN, 0);
    const top = 10 * v.zoom + v.y;
    expect(Math.abs(top - (700 - (top + 300 * v.zoom)))).toBeLessThanOrEqual(1);
  });

  it("a tall picture opens at its top", () => {
    const v = firstViewport({ x: 0, y: 40, width: 300, height: 5000 }, 900, 700);
    expect(v.zoom).toBe(READABLE_ZOOM);
    expect(40 * v.zoom + v.y).toBeCloseTo(FIT_MARGIN, 0);
  });

  it("bounds hold every rectangle", () => {
    expect(boundsOf([])).toBeNull();
    expect(
      boundsOf([
        { x: 10, y: 20, width: 5, height: 5 },
        { x: -3, y: 30, width: 100, height: 10 },
      ]),
    ).toEqual({ x: -3, y: 20, width: 100, height: 20 });
  });
});

describe("the Flow view's direction", () => {
  const wide = { x: 0, y: 0, width: 1800, height: 300 };
  const tall = { x: 0, y: 0, width: 450, height: 700 };

  it("keeps the first picture unless another fits larger", () => {
    expect(bestFit([{ key: "LR", bounds: wide }, { key: "TB", bounds: tall }], 800, 700)).toBe("TB");
    expect(bestFit([{ key: "LR", bounds: wide }, { key: "TB", bounds: tall }], 3000, 500)).toBe("LR");
    // A tie (both at the largest zoom) keeps the first.
    expect(bestFit([{ key: "LR", bounds: { x: 0, y: 0, width: 10, height: 10 } }, { key: "TB", bounds: { x: 0, y: 0, width: 10, height: 10 } }], 800, 700)).toBe("LR");
    expect(bestFit([{ key: "LR", bounds: null }], 800, 700)).toBeNull();
  });

  it("shows the demo pipeline whole and readable top to bottom in a laptop's canvas", () => {
    // 1280x800 with the palette and the side panel open: a canvas of about 770 x 714.
    const model = project(graphOf(FACE_RECOGNITION));
    const pictures = (["LR", "TB"] as const).map((key) => {
      const layout = autoFlowLayout(model, key);
      const rects = model.boxes.map((b) => ({ ...layout.boxes[b.id], ...BOX_SIZES[b.kind] }));
      return { key, bounds: boundsOf([...rects, ...groupFrames(model, layout.boxes).values()]) };
    });
    expect(bestFit(pictures, 770, 714)).toBe("TB");
    const zoom = fitZoom(pictures[1].bounds!, 770, 714);
    expect(zoom * SMALLEST_BOX_TEXT).toBeGreaterThanOrEqual(10);
  });
});

describe("keeping the user's place", () => {
  const layout = (boxes: Record<string, { x: number; y: number }>) => ({ boxes, routes: {}, labels: {} });
  const view = { x: 0, y: 0, width: 1000, height: 800 };

  it("follows the boxes in view when most of them moved the same way", () => {
    const before = layout({ a: { x: 0, y: 0 }, b: { x: 300, y: 0 }, c: { x: 600, y: 0 }, far: { x: 5000, y: 0 } });
    const after = layout({ a: { x: 0, y: 60 }, b: { x: 300, y: 60 }, c: { x: 900, y: 60 }, far: { x: 0, y: 0 } });
    expect(commonShift(before, after, view)).toEqual({ x: 0, y: 60 });
  });

  it("stays when a box in view stayed (a model inserted in the middle: the boxes after it make room)", () => {
    const before = layout({ request: { x: 0, y: 0 }, a: { x: 0, y: 100 }, b: { x: 0, y: 200 }, c: { x: 0, y: 300 }, end: { x: 0, y: 400 } });
    const after = layout({ request: { x: 0, y: 0 }, a: { x: 0, y: 100 }, n: { x: 0, y: 200 }, b: { x: 0, y: 300 }, c: { x: 0, y: 400 }, end: { x: 0, y: 500 } });
    expect(commonShift(before, after, view)).toBeNull();
  });

  it("stays when most boxes in view stayed (a box appended after them)", () => {
    const before = layout({ a: { x: 0, y: 0 }, b: { x: 300, y: 0 }, end: { x: 600, y: 0 } });
    const after = layout({ a: { x: 0, y: 0 }, b: { x: 300, y: 0 }, end: { x: 900, y: 0 }, c: { x: 600, y: 0 } });
    expect(commonShift(before, after, view)).toBeNull();
  });
});
