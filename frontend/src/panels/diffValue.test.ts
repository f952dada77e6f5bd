import { describe, expect, it } from "vitest";
import { diffValue } from "./DiffView";

describe("diff values", () => {
  it("reads an unset field (null or missing) as unset, not as the text null", () => {
    expect(diffValue(null)).toBeNull();
    expect(diffValue(undefined)).toBeNull();
  });
  it("prints strings as they are and other values as JSON", () => {
    expect(diffValue("Hard")).toBe("Hard");
    expect(diffValue(50)).toBe("50");
    expect(diffValue(false)).toBe("false");
    expect(diffValue({ a: [1] })).toBe('{"a":[1]}');
  });
});
