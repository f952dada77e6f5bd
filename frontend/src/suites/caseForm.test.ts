import { describe, expect, it } from "vitest";
import type { JsonObject } from "../graph/types";
import { caseForm, documentOf } from "./caseForm";

const DOCUMENT: JsonObject = {
  name: "cat",
  description: "a cat is a cat",
  request: { payload: { instances: [{ image: "cat.png" }] } },
  seed: 7,
  environment: "staging",
  expectations: [{ status: 200 }, { path: "predictions.0", equals: "cat" }],
};

describe("the case editor's form", () => {
  it("reads a saved case and gives its document back unchanged", () => {
    const form = caseForm({ id: 3, revision: 5 }, DOCUMENT);
    expect(form).toMatchObject({ id: 3, revision: 5, name: "cat", seed: "7", environment: "staging" });
    expect(form.drafts.map((d) => d.draft.kind)).toEqual(["status", "path"]);
    expect(new Set(form.drafts.map((d) => d.key)).size).toBe(2);
    expect(documentOf(form)).toEqual({ document: DOCUMENT });
  });

  it("starts a new case with a request to fill in and one status expectation; empty fields are left out", () => {
    const form = caseForm(null, null);
    expect(form).toMatchObject({ id: null, revision: null, name: "", seed: "", environment: "" });
    expect(documentOf({ ...form, name: " new " })).toEqual({ document: { name: "new", request: { payload: { instances: [{}] } }, expectations: [{ status: 200 }] } });
  });

  it("names what it cannot read instead of sending it", () => {
    const form = caseForm(null, DOCUMENT);
    const bad = { ...form, request: "{", seed: "1.5", drafts: [form.drafts[0], { ...form.drafts[1], draft: { ...form.drafts[1].draft, path: " " } }] };
    expect(documentOf(bad)).toEqual({
      issues: [
        { path: "request", message: "the request is not valid JSON" },
        { path: "seed", message: "the seed is a whole number" },
        { expectation: 1, field: "path", message: expect.any(String) },
      ],
    });
  });
});
