import { beforeEach, describe, expect, it } from "vitest";
import { clearDraft, draftKey, MAX_DRAFT_CHARS, parseDraft, readDraft, writeDraft, type Draft } from "./draft";

class MemoryStorage {
  private items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, v);
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

const draft: Draft = {
  base: 3,
  manifest: { apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" }, spec: { nodes: {} } },
  layout: { nodes: { root: { x: 1, y: 2 } } },
  savedAt: "2026-01-01T00:00:00.000Z",
};

describe("unsaved drafts in localStorage", () => {
  beforeEach(() => {
    Object.defineProperty(globalThis, "window", { value: { localStorage: new MemoryStorage() }, configurable: true });
  });

  it("keeps one draft per user and graph", () => {
    expect(writeDraft("erin", "g", draft)).toBe(true);
    expect(readDraft("erin", "g")).toEqual(draft);
    expect(readDraft("erin", "other")).toBeNull();
    expect(readDraft("sam", "g")).toBeNull();
    clearDraft("erin", "g");
    expect(readDraft("erin", "g")).toBeNull();
  });

  it("keeps names with separators apart", () => {
    expect(draftKey("a:b", "c")).not.toBe(draftKey("a", "b:c"));
  });

  it("reads anything that is not a draft as no draft", () => {
    expect(parseDraft(null)).toBeNull();
    expect(parseDraft("not json")).toBeNull();
    expect(parseDraft("[]")).toBeNull();
    expect(parseDraft(JSON.stringify({ ...draft, base: "3" }))).toBeNull();
    expect(parseDraft(JSON.stringify({ ...draft, base: -1 }))).toBeNull();
    expect(parseDraft(JSON.stringify({ ...draft, layout: { nodes: [] } }))).toBeNull();
    expect(parseDraft(JSON.stringify({ ...draft, savedAt: 5 }))).toBeNull();
    expect(parseDraft(JSON.stringify({ ...draft, base: null }))).toEqual({ ...draft, base: null });
  });

  it("does not keep a draft over its size cap, and says so", () => {
    const big = { ...draft, manifest: { ...draft.manifest, pad: "x".repeat(MAX_DRAFT_CHARS) } };
    expect(writeDraft("erin", "g", big)).toBe(false);
    expect(readDraft("erin", "g")).toBeNull();
  });

  it("says when storage refuses the write", () => {
    const full = new MemoryStorage();
    full.setItem = () => {
      throw new Error("QuotaExceededError");
    };
    Object.defineProperty(globalThis, "window", { value: { localStorage: full }, configurable: true });
    expect(writeDraft("erin", "g", draft)).toBe(false);
  });
});

describe("the edits kept with a draft", () => {
  it("reads them back when every one is an edit object, else leaves them out", () => {
    const edits = [{ type: "setStepField", node: "root", index: 1, field: "serviceName", value: "x" }];
    expect(parseDraft(JSON.stringify({ ...draft, edits }))?.edits).toEqual(edits);
    expect(parseDraft(JSON.stringify({ ...draft, edits: [{ node: "root" }] }))?.edits).toBeUndefined();
    expect(parseDraft(JSON.stringify({ ...draft, edits: "no" }))).toEqual(draft);
  });
});
