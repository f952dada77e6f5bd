import { describe, expect, it } from "vitest";
import { isDirection, nearestBox } from "./navigate";

describe("arrow keys between boxes", () => {
  // detect -> embed -> (employees above visitors) -> merge
  const centres = new Map([
    ["detect", { x: 0, y: 100 }],
    ["embed", { x: 300, y: 100 }],
    ["employees", { x: 600, y: 40 }],
    ["visitors", { x: 600, y: 180 }],
    ["merge", { x: 900, y: 100 }],
  ]);

  it("goes to the next box along the row, and between parallel boxes up and down", () => {
    expect(nearestBox("detect", "ArrowRight", centres)).toBe("embed");
    expect(nearestBox("embed", "ArrowLeft", centres)).toBe("detect");
    expect(nearestBox("embed", "ArrowRight", centres)).toBe("employees");
    expect(nearestBox("employees", "ArrowDown", centres)).toBe("visitors");
    expect(nearestBox("visitors", "ArrowUp", centres)).toBe("employees");
    expect(nearestBox("visitors", "ArrowRight", centres)).toBe("merge");
  });

  it("a box off to the side still counts; none ahead, or an unknown box: null", () => {
    expect(nearestBox("merge", "ArrowRight", centres)).toBeNull();
    expect(nearestBox("detect", "ArrowUp", centres)).toBe("employees");
    expect(nearestBox("nowhere", "ArrowUp", centres)).toBeNull();
    expect(isDirection("ArrowUp")).toBe(true);
    expect(isDirection("Enter")).toBe(false);
  });
});
