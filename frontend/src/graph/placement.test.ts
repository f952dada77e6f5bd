import { describe, expect, it } from "vitest";
import { applyEdit, copyNodes } from "./edits";
import { fromManifest } from "./manifest";
import { cardRects, estimateSize, freeOffset, freeSpot, overlaps } from "./placement";
import type { GraphState, JsonObject } from "./types";

function state(nodes: JsonObject, layout: Record<string, { x: number; y: number }>): GraphState {
  return fromManifest({ apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" }, spec: { nodes } }, { nodes: layout });
}

function noOverlap(s: GraphState): boolean {
  const rects = cardRects(s);
  return rects.every((a, i) => rects.every((b, j) => i === j || !overlaps(a, b, 0)));
}

const TWO = state(
  {
    root: { routerType: "Sequence", steps: [{ serviceName: "a" }, { serviceName: "b" }] },
    next: { routerType: "Ensemble", steps: [{ serviceName: "c" }] },
  },
  { root: { x: 0, y: 0 }, next: { x: 400, y: 0 } },
);

describe("placement", () => {
  it("keeps a wanted spot that is free", () => {
    expect(freeSpot(TWO, { x: 0, y: 400 })).toEqual({ x: 0, y: 400 });
  });

  it("moves a new card asked for on top of another to the nearest free spot", () => {
    const at = freeSpot(TWO, { x: 10, y: 10 });
    expect(at).not.toEqual({ x: 10, y: 10 });
    const s = applyEdit(TWO, { type: "addNode", routerType: "Switch", position: at });
    expect(noOverlap(s)).toBe(true);
    // Near where it was asked for: within a few grid steps.
    expect(Math.hypot(at.x - 10, at.y - 10)).toBeLessThan(300);
  });

  it("places ten cards added at one spot one after another without any overlap", () => {
    let s = TWO;
    for (let i = 0; i < 10; i++) s = applyEdit(s, { type: "addNode", routerType: "Sequence", position: freeSpot(s, { x: 100, y: 50 }) });
    expect(s.nodes).toHaveLength(12);
    expect(noOverlap(s)).toBe(true);
  });

  it("finds an offset for pasted cards that keeps all of them clear of the graph", () => {
    const payload = copyNodes(TWO, ["root", "next"]);
    const placed = payload.nodes.map((n) => ({ ...n.position, ...estimateSize(Array.isArray(n.node.steps) ? (n.node.steps as JsonObject[]) : []) }));
    const offset = freeOffset(cardRects(TWO), placed, { x: 40, y: 40 });
    const s = applyEdit(TWO, { type: "paste", payload, offset });
    expect(s.nodes).toHaveLength(4);
    expect(noOverlap(s)).toBe(true);
  });

  it("uses measured sizes when given", () => {
    const tall = new Map([["root", { width: 262, height: 900 }]]);
    expect(freeSpot(TWO, { x: 0, y: 400 })).toEqual({ x: 0, y: 400 });
    expect(freeSpot(TWO, { x: 0, y: 400 }, [], tall)).not.toEqual({ x: 0, y: 400 });
  });

  it("counts a step's condition line in a card's estimated height", () => {
    expect(estimateSize([{ serviceName: "a", condition: "x" }]).height).toBeGreaterThan(estimateSize([{ serviceName: "a" }]).height);
  });
});
