import { describe, expect, it } from "vitest";
import { rowDropIndex } from "./dropPoint";

describe("rowDropIndex", () => {
  it("inserts before a row when the pointer is near its top edge", () => {
    expect(rowDropIndex(2, 40, 1, 4)).toBe(1);
  });
  it("inserts after a row when the pointer is near its bottom edge", () => {
    expect(rowDropIndex(38, 40, 1, 4)).toBe(2);
  });
  it("appends when the pointer is over the middle of a row", () => {
    expect(rowDropIndex(20, 40, 0, 4)).toBe(4);
    expect(rowDropIndex(20, 40, 3, 4)).toBe(4);
  });
  it("keeps the drop order for steps dropped one after another on the middle of the first row", () => {
    const steps: string[] = [];
    for (const name of ["step1", "step2", "step3", "step4"]) {
      const at = steps.length === 0 ? 0 : rowDropIndex(20, 40, 0, steps.length);
      steps.splice(at, 0, name);
    }
    expect(steps).toEqual(["step1", "step2", "step3", "step4"]);
  });
  it("appends for a row not measured yet", () => {
    expect(rowDropIndex(0, 0, 0, 2)).toBe(2);
  });
});
