import { describe, expect, it } from "vitest";
import { nameProblem, suggestName } from "./ListApp";

describe("the new graph's name", () => {
  it("is suggested in KServe's form when the one typed is refused", () => {
    expect(suggestName("Seed Pipeline")).toBe("seed-pipeline");
    expect(suggestName("  My_Graph v2! ")).toBe("my-graph-v2");
    expect(suggestName("2nd Résumé")).toBe("nd-resume");
    expect(suggestName("x".repeat(70) + "-")).toBe("x".repeat(63));
    for (const typed of ["Seed Pipeline", "A--B", "Über Graph"]) expect(nameProblem(suggestName(typed) ?? "")).toBeNull();
  });

  it("is not suggested for a valid name, or when nothing valid is left", () => {
    expect(suggestName("seed-pipeline")).toBeNull();
    expect(suggestName("1234")).toBeNull();
    expect(suggestName("!!!")).toBeNull();
  });
});
