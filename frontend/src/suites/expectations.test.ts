import { describe, expect, it } from "vitest";
import { applyPick, copyName, describeExpectation, emptyDraft, fromDraft, kindOf, operandText, operandValue, pinIssues, toDraft } from "./expectations";

// The example of docs/graph-tests.md, one expectation of each kind and operator family.
const DOC_EXAMPLES = [
  { status: 200 },
  { body: { predictions: ["cat"] }, match: "subset", ignore: ["id", "predictions.#.score"] },
  { path: "predictions.0", step: "root/classify", equals: "cat" },
  { path: "scores.0", approx: 0.9, tolerance: 0.05 },
  { path: "id", exists: true },
  { path: "label", matches: "^c.t$" },
  { path: "n", equals: "1" },
  { path: "tags", contains: { a: 1 } },
  { route: "root", took: "cat" },
  { route: "root", took: 1 },
  { route: "root", took: null },
  { step: "root/dog", status: "not-reached" },
  { step: "root/dog", status: 503 },
  { latency: 500 },
];

describe("drafts", () => {
  it.each(DOC_EXAMPLES.map((e) => [JSON.stringify(e), e]))("%s reads into the form and back unchanged", (_, exp) => {
    const draft = toDraft(exp);
    expect(draft.kind).toBe(kindOf(exp));
    expect(fromDraft(draft)).toEqual({ ok: true, value: exp });
  });
  it("a document the form does not model is edited as JSON, and kept as it is", () => {
    const odd = { status: 200, note: "extra key" };
    const draft = toDraft(odd);
    expect(draft.kind).toBe("json");
    expect(fromDraft(draft)).toEqual({ ok: true, value: odd });
    expect(fromDraft({ ...draft, json: "{not json" })).toMatchObject({ ok: false, field: "json" });
  });
  it("names the field that cannot be read", () => {
    expect(fromDraft({ ...emptyDraft("status"), status: "two hundred" })).toEqual({ ok: false, field: "status", message: "status is a number" });
    expect(fromDraft({ ...emptyDraft("path"), path: "a", operator: "gt", operand: "x" })).toMatchObject({ ok: false, field: "gt" });
    expect(fromDraft({ ...emptyDraft("path"), path: " " })).toMatchObject({ ok: false, field: "path" });
    expect(fromDraft({ ...emptyDraft("body"), body: "{" })).toMatchObject({ ok: false, field: "body" });
    expect(fromDraft({ ...emptyDraft("route"), route: "root", took: "" })).toMatchObject({ ok: false, field: "took" });
  });
  it("an operand is JSON when it parses, else text", () => {
    expect(operandValue("cat")).toBe("cat");
    expect(operandValue('"1"')).toBe("1");
    expect(operandValue("1")).toBe(1);
    expect(operandText("1")).toBe('"1"');
    expect(operandText("cat")).toBe("cat");
    expect(operandText(null)).toBe("null");
  });
});

describe("applyPick", () => {
  it("turns any draft into a path expectation expecting the picked value", () => {
    const d = applyPick(emptyDraft("status"), { path: "predictions.0.label", value: "cat" }, null);
    expect(fromDraft(d)).toEqual({ ok: true, value: { path: "predictions.0.label", equals: "cat" } });
  });
  it("a step's response names the step; an operator that compares keeps itself", () => {
    const d = applyPick({ ...emptyDraft("path"), operator: "contains" }, { path: "tags", value: ["a"] }, "root/classify");
    expect(fromDraft(d)).toEqual({ ok: true, value: { path: "tags", step: "root/classify", contains: ["a"] } });
    const exists = applyPick({ ...emptyDraft("path"), operator: "exists" }, { path: "id", value: 4 }, null);
    expect(fromDraft(exists)).toEqual({ ok: true, value: { path: "id", exists: true } });
  });
});

describe("describeExpectation", () => {
  it("says each kind in words", () => {
    expect(DOC_EXAMPLES.map(describeExpectation)).toEqual([
      "The final status is 200",
      'The body contains {"predictions":["cat"]} (ignoring id, predictions.#.score)',
      "predictions.0 in step root/classify's response equals \"cat\"",
      "scores.0 is about 0.9 ± 0.05",
      "id exists",
      "label matches /^c.t$/",
      'n equals "1"',
      'tags contains {"a":1}',
      'Node root routed to step "cat"',
      "Node root routed to step 1",
      "Node root matched no step",
      "Step root/dog was not reached",
      "Step root/dog answered 503",
      "The graph answered within 500 ms",
    ]);
    expect(describeExpectation(42)).toBe("Unrecognised: 42");
  });
});

describe("pinIssues", () => {
  it("pins issues to their expectation by index or by path, the rest to the case", () => {
    const { byExpectation, rest } = pinIssues([
      { message: "bad regex", expectation: 2, field: "matches" },
      { message: "unknown step", path: "expectations[0].step" },
      { message: "name taken", path: "name" },
    ]);
    expect(byExpectation.get(2)?.[0].message).toBe("bad regex");
    expect(byExpectation.get(0)?.[0].message).toBe("unknown step");
    expect(rest.map((i) => i.message)).toEqual(["name taken"]);
  });
});

describe("copyName", () => {
  it("finds the next free copy name", () => {
    expect(copyName("cat", ["cat"])).toBe("cat (copy)");
    expect(copyName("cat", ["cat", "cat (copy)"])).toBe("cat (copy 2)");
    expect(copyName("cat (copy)", ["cat", "cat (copy)"])).toBe("cat (copy 2)");
  });
});
