import { describe, expect, it } from "vitest";
import { COLLAPSE_OVER, FIRST_ROWS, copyText, escapeKey, gjsonPath, initialExpanded, preview, rowId, treeMove, treeRows } from "./jsonTree";

const BODY = {
  predictions: [{ label: "cat", score: 0.91 }],
  "model.name": "pets",
  embedding: Array.from({ length: COLLAPSE_OVER + 5 }, (_, i) => i / 10),
};

describe("gjsonPath", () => {
  it("joins keys and indexes with dots", () => {
    expect(gjsonPath(["predictions", 0, "label"])).toBe("predictions.0.label");
  });
  it("escapes the characters GJSON reads as syntax, as GJSON's Escape does", () => {
    // Each checked against the engine's GJSON (execution/engine/goports/gjson/): the path reads the key.
    expect(escapeKey("a.b")).toBe("a\\.b");
    expect(escapeKey("x*y?")).toBe("x\\*y\\?");
    expect(escapeKey("@at")).toBe("\\@at");
    expect(escapeKey("p|q#")).toBe("p\\|q\\#");
    expect(escapeKey("br[x]")).toBe("br\\[x\\]");
    expect(escapeKey("k-_: 0")).toBe("k-_: 0");
    expect(escapeKey("é")).toBe("é");
  });
  it("names the root @this", () => {
    expect(gjsonPath([])).toBe("@this");
  });
});

describe("treeRows", () => {
  it("opens small containers and leaves big ones closed", () => {
    const rows = treeRows(BODY, initialExpanded(BODY));
    const byPath = Object.fromEntries(rows.map((r) => [gjsonPath(r.path), r]));
    expect(byPath["predictions.0.label"].value).toBe("cat");
    expect(byPath["model\\.name"].depth).toBe(1);
    expect(byPath.embedding.expanded).toBe(false);
    expect(byPath["embedding.0"]).toBeUndefined();
  });
  it("shows only the rows under open containers", () => {
    const rows = treeRows(BODY, new Set([rowId([])]));
    expect(rows.map((r) => r.key)).toEqual([null, "predictions", "model.name", "embedding"]);
  });
  it("searching keeps matches and their ancestors, opened, and marks the matches", () => {
    const rows = treeRows(BODY, new Set(), "CAT");
    expect(rows.map((r) => gjsonPath(r.path))).toEqual(["@this", "predictions", "predictions.0", "predictions.0.label"]);
    expect(rows.filter((r) => r.match).map((r) => r.value)).toEqual(["cat"]);
    expect(rows.slice(0, 3).every((r) => r.expanded)).toBe(true);
  });
  it("a search matching a key shows that row; nothing matching shows nothing", () => {
    expect(treeRows(BODY, new Set(), "embed").map((r) => r.key)).toEqual([null, "embedding"]);
    expect(treeRows(BODY, new Set(), "no such text")).toEqual([]);
  });
  it("opens deep small containers, but no more than about FIRST_ROWS rows at first", () => {
    const deep = { a: { b: { c: { d: { e: { f: "deep" } } } } } };
    expect(treeRows(deep, initialExpanded(deep)).at(-1)?.value).toBe("deep");
    const many = Array.from({ length: 15 }, (_, i) => ({ id: i, tags: Array.from({ length: 15 }, (_, j) => j) }));
    const rows = treeRows(many, initialExpanded(many));
    expect(rows.length).toBeLessThanOrEqual(FIRST_ROWS);
    expect(rows.filter((r) => r.depth === 1).every((r) => r.expanded)).toBe(true);
  });
  it("a plain value is one row", () => {
    expect(treeRows("text", new Set())).toMatchObject([{ kind: "value", value: "text", path: [] }]);
  });
});

describe("preview", () => {
  it("cuts long arrays with an ellipsis and lists object keys", () => {
    expect(preview(BODY.embedding, 20)).toBe("[0, 0.1, 0.2, 0.3, …]");
    expect(preview({ label: "cat", score: 1 })).toBe("{label, score}");
    expect(preview([[1], { a: 1 }])).toBe("[[…], {…}]");
  });
});

describe("treeMove", () => {
  const rows = treeRows(BODY, initialExpanded(BODY));
  const id = (...p: (string | number)[]) => rowId(p);
  it("Up and Down go through the visible rows, Home and End to the ends", () => {
    expect(treeMove(rows, id(), "ArrowDown").focus).toBe(id("predictions"));
    expect(treeMove(rows, id("predictions"), "ArrowUp").focus).toBe(id());
    expect(treeMove(rows, id(), "ArrowUp").focus).toBe(id());
    expect(treeMove(rows, id(), "End").focus).toBe(id("embedding"));
    expect(treeMove(rows, id("embedding"), "Home").focus).toBe(id());
  });
  it("Right opens a closed container, then goes to its first child", () => {
    expect(treeMove(rows, id("embedding"), "ArrowRight")).toEqual({ focus: id("embedding"), toggle: id("embedding") });
    expect(treeMove(rows, id("predictions"), "ArrowRight")).toEqual({ focus: id("predictions", 0) });
  });
  it("Left closes an open container, else goes to the parent", () => {
    expect(treeMove(rows, id("predictions"), "ArrowLeft")).toEqual({ focus: id("predictions"), toggle: id("predictions") });
    expect(treeMove(rows, id("predictions", 0, "label"), "ArrowLeft")).toEqual({ focus: id("predictions", 0) });
    expect(treeMove(rows, id(), "ArrowLeft").focus).toBe(id());
  });
});

describe("copyText", () => {
  it("copies strings bare and other values as JSON", () => {
    expect(copyText("cat")).toBe("cat");
    expect(copyText({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});
