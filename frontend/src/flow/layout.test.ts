import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";
import { overlaps } from "../graph/placement";
import { autoFlowLayout, BOX_SIZES, groupFrames, placeBoxes } from "./layout";
import { project } from "./project";
import { FACE_RECOGNITION, graphOf } from "./__fixtures__/graphs";

const elk = new ELK();

describe("flow layout", () => {
  it("lays the demo pipeline out left to right, the parallel models one above the other", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const { boxes } = await autoFlowLayout(model, elk);
    const x = (title: string) => boxes[model.boxes.find((b) => b.title === title)!.id].x;
    const y = (title: string) => boxes[model.boxes.find((b) => b.title === title)!.id].y;
    const order = ["Request", "face-detector", "feature-extractor", "db-employees", "merge", "result-merger", "Response"];
    for (let i = 1; i < order.length; i++) expect(x(order[i])).toBeGreaterThan(x(order[i - 1]));
    expect(x("db-visitors")).toBe(x("db-employees"));
    expect(y("db-visitors")).not.toBe(y("db-employees"));
  });

  it("is deterministic, boxes never overlap and arrows are orthogonal", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const a = await autoFlowLayout(model, elk);
    const b = await autoFlowLayout(project(graphOf(FACE_RECOGNITION)), new ELK());
    expect(b).toEqual(a);
    const rects = model.boxes.map((box) => ({ ...a.boxes[box.id], ...BOX_SIZES[box.kind] }));
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j], 0)).toBe(false);
    for (const route of Object.values(a.routes)) {
      for (let i = 1; i < route.length; i++) expect(route[i].x === route[i - 1].x || route[i].y === route[i - 1].y).toBe(true);
    }
    expect(Object.keys(a.routes).sort()).toEqual(model.arrows.map((x) => x.id).sort());
    // Labels get room of their own: no label sits on a box.
    for (const arrow of model.arrows) {
      const at = a.labels[arrow.id];
      if (!arrow.label) continue;
      expect(at).toBeDefined();
      for (const r of rects) expect(at.x > r.x && at.x < r.x + r.width && at.y > r.y && at.y < r.y + r.height).toBe(false);
    }
  });

  it("group frames hold their boxes", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const { boxes } = await autoFlowLayout(model, elk);
    const frame = groupFrames(model, boxes).get("root/2>match")!;
    for (const box of model.boxes.filter((b) => b.group === "root/2>match")) {
      const p = boxes[box.id];
      expect(p.x).toBeGreaterThan(frame.x);
      expect(p.x + BOX_SIZES[box.kind].width).toBeLessThan(frame.x + frame.width);
      expect(p.y).toBeGreaterThan(frame.y);
    }
  });

  it("a moved box keeps its stored position; a new box lands in free space, not on it", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const auto = await autoFlowLayout(model, elk);
    const detector = model.boxes.find((b) => b.title === "face-detector")!;
    const extractor = model.boxes.find((b) => b.title === "feature-extractor")!;
    // The user moved the detector onto where elk puts the extractor (a box new to the layout).
    const stored = { [detector.layoutKey]: auto.boxes[extractor.id] };
    const placed = placeBoxes(model, auto, stored);
    expect(placed.boxes[detector.id]).toEqual(auto.boxes[extractor.id]);
    expect(overlaps({ ...placed.boxes[detector.id], ...BOX_SIZES.step }, { ...placed.boxes[extractor.id], ...BOX_SIZES.step }, 0)).toBe(false);
    // Arrows touching a moved box lose elk's route (the view draws them afresh).
    expect(Object.keys(placed.routes).some((id) => id.includes(detector.id))).toBe(false);
    expect(placed.routes["root/3->response"]).toEqual(auto.routes["root/3->response"]);
  });
});
