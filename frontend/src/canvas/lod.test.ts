import { describe, expect, it } from "vitest";
import { FULL_DETAIL_ABOVE, LOW_DETAIL_BELOW, lowDetail } from "./lod";

describe("lowDetail", () => {
  it("draws full detail at 100 % and low detail when zoomed far out", () => {
    expect(lowDetail(1, false)).toBe(false);
    expect(lowDetail(1, true)).toBe(false);
    expect(lowDetail(0.2, false)).toBe(true);
    expect(lowDetail(0.2, true)).toBe(true);
  });

  it("switches to low detail only below the lower threshold", () => {
    expect(lowDetail(LOW_DETAIL_BELOW, false)).toBe(false);
    expect(lowDetail(LOW_DETAIL_BELOW - 0.01, false)).toBe(true);
  });

  it("switches back only above the upper threshold, so a zoom near the limit does not flicker", () => {
    const between = (LOW_DETAIL_BELOW + FULL_DETAIL_ABOVE) / 2;
    expect(lowDetail(between, true)).toBe(true);
    expect(lowDetail(between, false)).toBe(false);
    expect(lowDetail(FULL_DETAIL_ABOVE, true)).toBe(true);
    expect(lowDetail(FULL_DETAIL_ABOVE + 0.01, true)).toBe(false);
  });

  it("keeps the current detail for a zoom that is not a number", () => {
    expect(lowDetail(Number.NaN, true)).toBe(true);
    expect(lowDetail(Number.NaN, false)).toBe(false);
  });
});
