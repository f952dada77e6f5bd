import { describe, expect, it } from "vitest";
import { foldHelp } from "./fields";

describe("a field's help text", () => {
  it("is whole when short", () => {
    expect(foldHelp("Optional; unique within the node.")).toBeNull();
  });

  it("is folded to its first sentence when long", () => {
    const help = "GJSON path checked against the previous step's response; no match stops the sequence. The Switch takes the first step whose condition matches.";
    expect(foldHelp(help)).toEqual(["GJSON path checked against the previous step's response;", "no match stops the sequence. The Switch takes the first step whose condition matches."]);
  });

  it("is whole when the rest would be a few words only", () => {
    expect(foldHelp("Sequence only: rewrite the predictions of the previous step into instances before calling. Rarely.")).toBeNull();
  });
});
