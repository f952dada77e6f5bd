import { describe, expect, it } from "vitest";
import { dropTarget, segmentDistance } from "./drop";
import { autoFlowLayout, BOX_SIZES } from "./layout";
import { project } from "./project";
import { FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";

describe("where a palette drop lands in the Flow view", () => {
  it("measures the distance to a segment", () => {
    expect(segmentDistance({ x: 5, y: 3 }, { x: 0, y: 0 }, { x: 10, y: 0 })).toBe(3);
    expect(segmentDistance({ x: 13, y: 4 }, { x: 0, y: 0 }, { x: 10, y: 0 })).toBe(5);
    expect(segmentDistance({ x: 1, y: 1 }, { x: 0, y: 0 }, { x: 0, y: 0 })).toBeCloseTo(Math.SQRT2);
  });

  it("a box of a step, the arrow nearest the point, or the canvas", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const placed = autoFlowLayout(model);
    const byTitle = (t: string) => model.boxes.find((b) => b.title === t)!;
    const centre = (t: string) => {
      const b = byTitle(t);
      return { x: placed.boxes[b.id].x + BOX_SIZES[b.kind].width / 2, y: placed.boxes[b.id].y + BOX_SIZES[b.kind].height / 2 };
    };
    const onBox = dropTarget(model, placed, centre("db-visitors"), 20);
    expect(onBox.kind === "box" && onBox.box.step).toEqual({ node: "match", index: 1 });
    // Halfway between the detector and the extractor: that arrow, inserting at step 1.
    const a = centre("face-detector");
    const b = centre("feature-extractor");
    const between = dropTarget(model, placed, { x: (a.x + b.x) / 2, y: a.y + 6 }, 20);
    expect(between.kind === "arrow" && between.at).toEqual({ node: "root", index: 1 });
    // The request box is no step: a drop on it is on the canvas, unless an arrow is near.
    expect(dropTarget(model, placed, { x: a.x, y: a.y + 400 }, 20)).toEqual({ kind: "canvas" });
  });
});

describe("router types dropped in the Flow view", () => {
  it("are read from the drag's data types and apply to boxes only", async () => {
    const { draggedRouter, routerHint } = await import("./drop");
    expect(draggedRouter(["text/plain", "application/x-r-splitter"], "application/x-r-")).toBe("Splitter");
    expect(draggedRouter(["application/x-r-nonsense"], "application/x-r-")).toBeNull();
    expect(draggedRouter([], "application/x-r-")).toBeNull();
    const model = project(graphOf(FACE_RECOGNITION));
    const detector = model.boxes.find((b) => b.title === "face-detector")!;
    expect(routerHint("Switch", { kind: "box", box: detector })).toBe("Add a conditional branch beside face-detector");
    expect(routerHint("Sequence", { kind: "box", box: detector })).toBeNull();
    expect(routerHint("Ensemble", { kind: "canvas" })).toBeNull();
  });
});
