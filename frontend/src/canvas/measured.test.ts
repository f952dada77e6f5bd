import { describe, expect, it } from "vitest";
import { keepMeasured } from "./measured";

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
