import { describe, expect, it } from "vitest";
import { hitTest } from "../canvas/lodScene";
import { FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";
import { flowScene } from "./flowScene";
import { autoFlowLayout, BOX_SIZES, placeBoxes } from "./layout";
import { project } from "./project";

describe("the Flow view's overview", () => {
  it("draws every box where the layout put it, group frames under them, and every arrow", () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const placed = placeBoxes(model, autoFlowLayout(model), {});
    const scene = flowScene(model, placed, (b) => b.step?.node === "root" && b.step.index === 0, () => false);
    const drawn = scene.boxes.filter((b) => !b.frame);
    expect(drawn.map((b) => b.id).sort()).toEqual(model.boxes.map((b) => b.id).sort());
    for (const b of drawn) {
      const kind = model.boxes.find((m) => m.id === b.id)?.kind ?? "step";
      expect([b.x, b.y, b.width, b.height]).toEqual([placed.boxes[b.id].x, placed.boxes[b.id].y, BOX_SIZES[kind].width, BOX_SIZES[kind].height]);
    }
    expect(drawn.filter((b) => b.selected).map((b) => b.label)).toEqual(["face-detector"]);
    expect(scene.boxes.filter((b) => b.frame).length).toBe(model.groups.filter((g) => !g.collapsed).length);
    expect(scene.lines).toHaveLength(model.arrows.length);
    // A click inside the match group's frame but on none of its boxes selects the group.
    const frame = scene.boxes.find((b) => b.frame);
    expect(frame && hitTest(scene, { x: frame.x + 2, y: frame.y + 2 })?.id).toBe(frame?.id);
  });
});
