import { describe, expect, it } from "vitest";
import { ApiError } from "../api";
import { describeApiError } from "../common/ui";
import { takenName } from "./ListApp";

const TAKEN = new ApiError(400, "Bad Request", {
  detail: "A graph named 'shop' already exists.",
  issues: [{ code: "graph.name-taken", severity: "error", path: "metadata.name", message: "A graph named 'shop' already exists." }],
});

describe("an import whose graph name is taken", () => {
  it("says so once", () => {
    expect(describeApiError(TAKEN)).toBe("A graph named 'shop' already exists.");
  });
  it("still lists issues that add something", () => {
    const err = new ApiError(400, "Bad Request", { detail: "Not valid YAML.", issues: [{ code: "yaml", severity: "error", message: "Not valid YAML.", line: 3 }, { code: "x", severity: "error", message: "Other." }] });
    expect(describeApiError(err)).toBe("Not valid YAML. — line 3: Not valid YAML. — Other.");
  });
  it("names the graph so the list page can offer a new version or a rename", () => {
    expect(takenName(TAKEN)).toBe("shop");
    expect(takenName(new ApiError(400, "Bad Request", { detail: "x", issues: [] }))).toBeNull();
    expect(takenName(new Error("x"))).toBeNull();
  });
});
