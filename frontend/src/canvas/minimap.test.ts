import { describe, expect, it } from "vitest";
import { MINIMAP_FROM, minimapSize } from "./Canvas";

describe("minimap size", () => {
  it("starts small and grows with the graph up to React Flow's default", () => {
    expect(minimapSize(MINIMAP_FROM)).toEqual({ width: 120, height: 80 });
    expect(minimapSize(20).width).toBeGreaterThan(120);
    expect(minimapSize(500)).toEqual({ width: 200, height: 150 });
  });
});
