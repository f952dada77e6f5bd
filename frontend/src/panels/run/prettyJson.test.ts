import { describe, expect, it } from "vitest";
import { prettyJson, WIDTH } from "./prettyJson";

describe("prettyJson", () => {
  it("keeps a short array of numbers on one line", () => {
    expect(prettyJson({ predictions: [0.1, 0.9] })).toBe('{\n  "predictions": [0.1, 0.9]\n}');
  });
  it("fills long arrays of numbers several to a line, within the width", () => {
    const embedding = Array.from({ length: 64 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e6);
    const text = prettyJson({ embedding });
    const lines = text.split("\n");
    // Several numbers a line: well under half the 64 lines of one number per line.
    expect(lines.length).toBeLessThan(32);
    expect(lines.every((l) => l.length <= WIDTH)).toBe(true);
    expect(JSON.parse(text)).toEqual({ embedding });
  });
  it("indents nested objects and arrays of objects like JSON.stringify", () => {
    const v = { instances: [{ image: "x.jpg" }, {}], empty: [] };
    expect(prettyJson(v)).toBe(JSON.stringify(v, null, 2));
  });
  it("round-trips scalars and strings with quotes", () => {
    for (const v of [null, 3, "a \"b\"", true, ["long string value that is not short at all", 1]]) expect(JSON.parse(prettyJson(v))).toEqual(v);
  });
});
