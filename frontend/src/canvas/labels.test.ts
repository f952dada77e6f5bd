import { describe, expect, it } from "vitest";
import { CONDITION_CHARS, shorten } from "./labels";

describe("shorten", () => {
  it("keeps a condition that fits", () => {
    expect(shorten('instances.#(intent=="cat")')).toBe('instances.#(intent=="cat")');
  });
  it("cuts a long condition to the limit, ending in an ellipsis", () => {
    const long = 'predictions.#(label=="dog" && score>0.9).label';
    const out = shorten(long);
    expect(Array.from(out)).toHaveLength(CONDITION_CHARS);
    expect(out.endsWith("…")).toBe(true);
    expect(long.startsWith(out.slice(0, -1))).toBe(true);
  });
  it("counts characters, not UTF-16 units", () => {
    expect(shorten("ééé😀😀", 4)).toBe("ééé…");
  });
});
