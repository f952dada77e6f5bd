import { describe, expect, it } from "vitest";
import { boundsOf, FIT_MARGIN, FIT_MAX_ZOOM, firstViewport, READABLE_ZOOM } from "./viewport";

describe("the Flow view's first viewport", () => {
  it("centres a picture that fits, never zooming in past the fit's maximum", () => {
    const v = firstViewport({ x: 0, y: 0, width: 400, height: 100 }, 1000, 600);
    expect(v.zoom).toBe(FIT_MAX_ZOOM);
    expect(v.x).toBe(Math.round((1000 - 400 * FIT_MAX_ZOOM) / 2));
    expect(v.y).toBe(Math.round((600 - 100 * FIT_MAX_ZOOM) / 2));
  });

  it("fits a picture that is readable when fitted", () => {
    const v = firstViewport({ x: 100, y: 50, width: 1000, height: 200 }, 1000, 600);
    expect(v.zoom).toBeCloseTo((1000 - 2 * FIT_MARGIN) / 1000);
    expect(v.zoom).toBeGreaterThanOrEqual(READABLE_ZOOM);
    // The picture's left and right edges are the same distance from the canvas's edges.
    const left = 100 * v.zoom + v.x;
    expect(Math.abs(left - (1000 - (left + 1000 * v.zoom)))).toBeLessThanOrEqual(1);
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
