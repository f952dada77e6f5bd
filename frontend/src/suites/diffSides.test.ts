import { describe, expect, it } from "vitest";
import { diffSides, jsonText } from "./diffSides";

describe("expected against actual, as diff tools show them", () => {
  it("marks the expected value '-' and the actual value '+'", () => {
    expect(diffSides(200, 500)).toEqual([
      { sign: "-", text: "200" },
      { sign: "+", text: "500" },
    ]);
  });

  it("keeps the lines both sides share once, unmarked, in place", () => {
    const lines = diffSides({ label: "cat", score: 0.9 }, { label: "dog", score: 0.9 });
    expect(lines).toEqual([
      { sign: " ", text: "{" },
      { sign: "-", text: '  "label": "cat",' },
      { sign: "+", text: '  "label": "dog",' },
      { sign: " ", text: '  "score": 0.9' },
      { sign: " ", text: "}" },
    ]);
  });

  it("names a missing value", () => {
    expect(jsonText(undefined)).toBe("(absent)");
    expect(diffSides(undefined, null)).toEqual([
      { sign: "-", text: "(absent)" },
      { sign: "+", text: "null" },
    ]);
  });

  it("shows long values whole, expected first, without comparing every line", () => {
    const long = Array.from({ length: 500 }, (_, i) => i);
    const lines = diffSides(long, [...long, 500]);
    expect(lines[0]).toEqual({ sign: "-", text: "[" });
    expect(lines.filter((l) => l.sign === "-").length).toBe(502);
    expect(lines.filter((l) => l.sign === "+").length).toBe(503);
  });
});
