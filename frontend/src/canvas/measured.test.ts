import { describe, expect, it } from "vitest";
import { keepMeasured, withCardHandles } from "./measured";

describe("keepMeasured", () => {
  it("carries React Flow's measured size over to the new copy of a node with the same id", () => {
    const prev = [
      { id: "a", position: { x: 0, y: 0 }, measured: { width: 220, height: 70 } },
      { id: "b", position: { x: 0, y: 0 } },
    ];
    const next = [
      { id: "a", position: { x: 5, y: 5 } },
      { id: "b", position: { x: 1, y: 1 } },
      { id: "c", position: { x: 2, y: 2 } },
    ];
    const out = keepMeasured(next, prev);
    expect(out[0]).toEqual({ id: "a", position: { x: 5, y: 5 }, measured: { width: 220, height: 70 } });
    // Never measured (not mounted yet) or new: left as derived, so that React Flow measures it.
    expect(out[1]).toBe(next[1]);
    expect(out[2]).toBe(next[2]);
  });

  it("keeps the new node's own width and height (a group frame that grew)", () => {
    const prev = [{ id: "g", width: 100, height: 50, measured: { width: 100, height: 50 } }];
    const next = [{ id: "g", width: 140, height: 60 }];
    expect(keepMeasured(next, prev)[0]).toEqual({ id: "g", width: 140, height: 60, measured: { width: 100, height: 50 } });
  });
});

describe("withCardHandles", () => {
  const card = (steps: string[], extra: object = {}) => ({ id: "n", initialWidth: 262, initialHeight: 190, data: { node: { steps: steps.map((id) => ({ id })) }, readOnly: false }, ...extra });

  it("gives a card not measured yet its in handle, one handle per step in order, and the new-step handle", () => {
    const [n] = withCardHandles([card(["s1", "s2"])]);
    const handles = n.handles ?? [];
    expect(handles.map((h) => [h.id, h.type, h.position])).toEqual([
      ["in", "target", "left"],
      ["s1", "source", "right"],
      ["s2", "source", "right"],
      ["__new", "source", "right"],
    ]);
    // In half-way down the estimated height; the steps top down, above the foot.
    expect(handles[0].y + (handles[0].height ?? 0) / 2).toBe(95);
    expect(handles[1].y).toBeLessThan(handles[2].y);
    expect(handles[2].y).toBeLessThan(handles[3].y);
    expect(handles[3].y).toBeLessThan(190);
    // A size React Flow counts as measured (its fitView waits for one), but never a measured one
    // (whole pixels): mounted, the card reports its real size and loses the estimates.
    expect(n.measured).toEqual({ width: 262.5, height: 190.5 });
  });

  it("has no new-step handle on a read-only card, and leaves measured cards alone", () => {
    const [ro] = withCardHandles([{ ...card(["s1"]), data: { node: { steps: [{ id: "s1" }] }, readOnly: true } }]);
    expect(ro.handles?.map((h) => h.id)).toEqual(["in", "s1"]);
    const measured = card(["s1"], { measured: { width: 260, height: 117 } });
    expect(withCardHandles([measured])[0]).toBe(measured);
  });
});
