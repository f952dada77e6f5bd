import { describe, expect, it } from "vitest";
import { overlaps } from "../graph/placement";
import type { JsonObject } from "../graph/types";
import { autoFlowLayout, BOX_SIZES, groupFrames, labelSize, placeBoxes, type FlowLayout } from "./layout";
import { project, type FlowModel } from "./project";
import { ANIMAL_SWITCH, CANARY, CAT_DOG, FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";

describe("flow layout", () => {
  it("lays the demo pipeline out left to right, the parallel models one above the other", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const { boxes } = autoFlowLayout(model);
    const x = (title: string) => boxes[model.boxes.find((b) => b.title === title)!.id].x;
    const y = (title: string) => boxes[model.boxes.find((b) => b.title === title)!.id].y;
    const order = ["Request", "face-detector", "feature-extractor", "db-employees", "merge", "result-merger", "Response"];
    for (let i = 1; i < order.length; i++) expect(x(order[i])).toBeGreaterThan(x(order[i - 1]));
    expect(x("db-visitors")).toBe(x("db-employees"));
    expect(y("db-visitors")).not.toBe(y("db-employees"));
  });

  it("group frames hold their boxes", async () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const { boxes } = autoFlowLayout(model);
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
    const auto = autoFlowLayout(model);
    const detector = model.boxes.find((b) => b.title === "face-detector")!;
    const extractor = model.boxes.find((b) => b.title === "feature-extractor")!;
    // The user moved the detector onto where the layout puts the extractor (a box new to the layout).
    const stored = { [detector.layoutKey]: auto.boxes[extractor.id] };
    const placed = placeBoxes(model, auto, stored);
    expect(placed.boxes[detector.id]).toEqual(auto.boxes[extractor.id]);
    expect(overlaps({ ...placed.boxes[detector.id], ...BOX_SIZES.step }, { ...placed.boxes[extractor.id], ...BOX_SIZES.step }, 0)).toBe(false);
    // Arrows touching a moved box lose their route (the view draws them afresh).
    expect(Object.keys(placed.routes).some((id) => id.includes(detector.id))).toBe(false);
    expect(placed.routes["root/3->response"]).toEqual(auto.routes["root/3->response"]);
  });
});

/** A root Sequence of `stages` stages, alternately an Ensemble and a Switch of `width` branches,
 * each branch a Sequence of three models (the shape bench/editor_graphs.py draws). */
function pipeline(stages: number, width: number): JsonObject {
  const nodes: JsonObject = {};
  const root: JsonObject[] = [];
  for (let s = 0; s < stages; s++) {
    const stage = `stage-${s}`;
    const branches: JsonObject[] = [];
    for (let b = 0; b < width; b++) {
      const branch = `${stage}-b${b}`;
      nodes[branch] = { routerType: "Sequence", steps: [0, 1, 2].map((i) => ({ name: `${branch}-m${i}`, serviceName: `m${i}`, ...(i ? { data: "$response" } : {}) })) };
      branches.push({ name: branch, nodeName: branch, ...(s % 2 ? { condition: `[@this].#(kind=="${b}")` } : {}) });
    }
    nodes[stage] = { routerType: s % 2 ? "Switch" : "Ensemble", steps: branches };
    root.push({ name: stage, nodeName: stage, ...(s ? { data: "$response" } : {}) });
  }
  return { root: { routerType: "Sequence", steps: root }, ...nodes };
}

/** Steps that do not take the previous answer, in a Sequence called from a step that does not either. */
const PASS_OVER: JsonObject = {
  root: {
    routerType: "Sequence",
    steps: [
      { name: "first", serviceName: "first" },
      { name: "inner", nodeName: "inner" },
      { name: "last", serviceName: "last", data: "$response" },
    ],
  },
  inner: {
    routerType: "Sequence",
    steps: [
      { name: "a", serviceName: "a" },
      { name: "b", serviceName: "b", condition: "[@this].#(x==1)" },
      { name: "fan", nodeName: "fan" },
    ],
  },
  fan: { routerType: "Ensemble", steps: [{ name: "p", serviceName: "p" }, { name: "q", nodeName: "split" }] },
  split: { routerType: "Splitter", steps: [{ name: "s1", serviceName: "s1", weight: 60 }, { name: "s2", serviceName: "s2", weight: 30 }] },
  lonely: { routerType: "Switch", steps: [{ name: "l1", serviceName: "l1", condition: "[@this].#(y==2)" }] },
};

const CASES: [string, JsonObject][] = [
  ["face recognition", FACE_RECOGNITION],
  ["cat/dog", CAT_DOG],
  ["animal switch", ANIMAL_SWITCH],
  ["canary", CANARY],
  ["a pipeline of fan-outs", pipeline(6, 4)],
  ["steps passing over steps, nested, and a node no step reaches", PASS_OVER],
];

function rectsOf(model: FlowModel, layout: FlowLayout) {
  return model.boxes.map((b) => ({ id: b.id, ...layout.boxes[b.id], ...BOX_SIZES[b.kind] }));
}

/** Whether the straight run a-b passes through the inside of `r`. */
function crosses(a: { x: number; y: number }, b: { x: number; y: number }, r: { x: number; y: number; width: number; height: number }): boolean {
  if (a.y === b.y) return a.y > r.y && a.y < r.y + r.height && Math.max(a.x, b.x) > r.x && Math.min(a.x, b.x) < r.x + r.width;
  return a.x > r.x && a.x < r.x + r.width && Math.max(a.y, b.y) > r.y && Math.min(a.y, b.y) < r.y + r.height;
}

describe.each(CASES)("flow layout of %s", (_, nodes) => {
  const model = project(graphOf(nodes));
  const layout = autoFlowLayout(model);
  const rects = rectsOf(model, layout);
  const rect = new Map(rects.map((r) => [r.id, r]));

  it("places every box, none on another, and is deterministic", () => {
    expect(Object.keys(layout.boxes).sort()).toEqual(model.boxes.map((b) => b.id).sort());
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j], 0), `${rects[i].id} on ${rects[j].id}`).toBe(false);
    expect(autoFlowLayout(project(graphOf(nodes)))).toEqual(layout);
  });

  it("draws each arrow left to right, orthogonal, from its source's right side to its target's left side, past every other box", () => {
    expect(Object.keys(layout.routes).sort()).toEqual(model.arrows.map((a) => a.id).sort());
    for (const a of model.arrows) {
      const route = layout.routes[a.id];
      const from = rect.get(a.from)!;
      const to = rect.get(a.to)!;
      expect(to.x, a.id).toBeGreaterThan(from.x + from.width);
      const [start, end] = [route[0], route[route.length - 1]];
      expect(start.x, a.id).toBe(from.x + from.width);
      expect(start.y > from.y && start.y < from.y + from.height, a.id).toBe(true);
      expect(end.x, a.id).toBe(to.x);
      expect(end.y > to.y && end.y < to.y + to.height, a.id).toBe(true);
      for (let i = 1; i < route.length; i++) {
        expect(route[i].x === route[i - 1].x || route[i].y === route[i - 1].y, a.id).toBe(true);
        for (const r of rects) if (r.id !== a.from && r.id !== a.to) expect(crosses(route[i - 1], route[i], r), `${a.id} through ${r.id}`).toBe(false);
      }
    }
  });

  it("gives each label room of its own, beside its arrow, on no box and no other label", () => {
    const placed: { id: string; x: number; y: number; width: number; height: number }[] = [];
    for (const a of model.arrows) {
      const size = labelSize(a.label, a.insert !== null && a.kind !== "order");
      if (!size) continue;
      const at = layout.labels[a.id];
      expect(at, a.id).toBeDefined();
      const box = { id: a.id, x: at.x - size.width / 2, y: at.y - size.height / 2, ...size };
      // Just above one of the arrow's runs left to right, within that run.
      const route = layout.routes[a.id];
      const run = route.slice(1).findIndex((p, i) => p.y === route[i].y && p.y > box.y + box.height - 1 && p.y <= box.y + box.height + 4 && Math.min(p.x, route[i].x) <= box.x && Math.max(p.x, route[i].x) >= box.x + box.width);
      expect(run, a.id).toBeGreaterThanOrEqual(0);
      for (const r of rects) expect(overlaps(box, r, 0), `${a.id} on ${r.id}`).toBe(false);
      for (const other of placed) expect(overlaps(box, other, 0), `${a.id} on ${other.id}`).toBe(false);
      placed.push(box);
    }
  });

  it("frames each group around its boxes and sub-groups, clear of the boxes outside it", () => {
    const frames = groupFrames(model, layout.boxes);
    const inside = (r: { x: number; y: number; width: number; height: number }, f: typeof r) => r.x >= f.x && r.y >= f.y && r.x + r.width <= f.x + f.width && r.y + r.height <= f.y + f.height;
    const within = (group: string | null, id: string): boolean => {
      for (let g: string | null = group; g; g = model.groups.find((x) => x.id === g)?.parent ?? null) if (g === id) return true;
      return false;
    };
    for (const g of model.groups) {
      const f = frames.get(g.id);
      if (!f) continue;
      for (const b of model.boxes) {
        const r = rect.get(b.id)!;
        if (within(b.group, g.id)) expect(inside(r, f), `${b.id} in ${g.id}`).toBe(true);
        else expect(overlaps(r, f, 0), `${b.id} on the frame of ${g.id}`).toBe(false);
      }
      if (g.parent) expect(inside(f, frames.get(g.parent)!), `${g.id} in ${g.parent}`).toBe(true);
    }
  });
});

describe.each(CASES)("flow layout of %s, top to bottom", (_, nodes) => {
  const model = project(graphOf(nodes));
  const layout = autoFlowLayout(model, "TB");
  const rects = rectsOf(model, layout);
  const rect = new Map(rects.map((r) => [r.id, r]));

  it("places every box, none on another, and is deterministic", () => {
    expect(Object.keys(layout.boxes).sort()).toEqual(model.boxes.map((b) => b.id).sort());
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i], rects[j], 0), `${rects[i].id} on ${rects[j].id}`).toBe(false);
    expect(autoFlowLayout(project(graphOf(nodes)), "TB")).toEqual(layout);
  });

  it("draws each arrow downwards, orthogonal, from its source's bottom to its target's top, past every other box", () => {
    expect(Object.keys(layout.routes).sort()).toEqual(model.arrows.map((a) => a.id).sort());
    for (const a of model.arrows) {
      const route = layout.routes[a.id];
      const from = rect.get(a.from)!;
      const to = rect.get(a.to)!;
      expect(to.y, a.id).toBeGreaterThan(from.y + from.height);
      const [start, end] = [route[0], route[route.length - 1]];
      expect(start.y, a.id).toBe(from.y + from.height);
      expect(start.x > from.x && start.x < from.x + from.width, a.id).toBe(true);
      expect(end.y, a.id).toBe(to.y);
      expect(end.x > to.x && end.x < to.x + to.width, a.id).toBe(true);
      for (let i = 1; i < route.length; i++) {
        expect(route[i].x === route[i - 1].x || route[i].y === route[i - 1].y, a.id).toBe(true);
        for (const r of rects) if (r.id !== a.from && r.id !== a.to) expect(crosses(route[i - 1], route[i], r), `${a.id} through ${r.id}`).toBe(false);
      }
    }
  });

  it("puts each label on no box", () => {
    for (const a of model.arrows) {
      const size = labelSize(a.label, a.insert !== null && a.kind !== "order");
      if (!size) continue;
      const at = layout.labels[a.id];
      expect(at, a.id).toBeDefined();
      const box = { x: at.x - size.width / 2, y: at.y - size.height / 2, ...size };
      for (const r of rects) expect(overlaps(box, r, 0), `${a.id} on ${r.id}`).toBe(false);
    }
  });

  it("frames each group around its boxes, its title above them", () => {
    const frames = groupFrames(model, layout.boxes);
    for (const g of model.groups) {
      const f = frames.get(g.id);
      if (!f) continue;
      for (const b of model.boxes) {
        const r = rect.get(b.id)!;
        const inside = r.x >= f.x && r.y >= f.y && r.x + r.width <= f.x + f.width && r.y + r.height <= f.y + f.height;
        let within = false;
        for (let p: string | null = b.group; p; p = model.groups.find((x) => x.id === p)?.parent ?? null) if (p === g.id) within = true;
        if (within) expect(inside, `${b.id} in ${g.id}`).toBe(true);
        else expect(overlaps(r, f, 0), `${b.id} on the frame of ${g.id}`).toBe(false);
      }
    }
  });
});

describe("flow layout: top to bottom", () => {
  it("lays the demo pipeline out as a column, the parallel models side by side, taller than wide", () => {
    const model = project(graphOf(FACE_RECOGNITION));
    const { boxes } = autoFlowLayout(model, "TB");
    const at = (title: string) => boxes[model.boxes.find((b) => b.title === title)!.id];
    const order = ["Request", "face-detector", "feature-extractor", "db-employees", "merge", "result-merger", "Response"];
    for (let i = 1; i < order.length; i++) expect(at(order[i]).y).toBeGreaterThan(at(order[i - 1]).y);
    expect(at("db-visitors").y).toBe(at("db-employees").y);
    expect(at("db-visitors").x).toBeGreaterThan(at("db-employees").x);
    // Boxes along one chain are centred on one line.
    const centre = (title: string) => at(title).x + BOX_SIZES[model.boxes.find((b) => b.title === title)!.kind].width / 2;
    expect(centre("face-detector")).toBe(centre("Request"));
    expect(centre("result-merger")).toBe(centre("Response"));
  });
});

describe("flow layout: order and growth", () => {
  it("puts a Sequence's steps left to right and a fan-out's branches one above the other, in order", () => {
    const model = project(graphOf(pipeline(2, 3)));
    const { boxes } = autoFlowLayout(model);
    const x = (id: string) => boxes[id].x;
    const y = (id: string) => boxes[id].y;
    expect(x("root/0>stage-0/0>stage-0-b0/0")).toBeLessThan(x("root/0>stage-0/0>stage-0-b0/1"));
    expect(x("root/0>stage-0/0>stage-0-b0/2")).toBeLessThan(x("root/0>stage-0:merge"));
    expect(x("root/0>stage-0:merge")).toBeLessThan(x("root/1>stage-1:switch"));
    expect(y("root/0>stage-0/0>stage-0-b0/0")).toBeLessThan(y("root/0>stage-0/1>stage-0-b1/0"));
    expect(y("root/0>stage-0/1>stage-0-b1/0")).toBeLessThan(y("root/0>stage-0/2>stage-0-b2/0"));
    expect(x("root/0>stage-0/1>stage-0-b1/0")).toBe(x("root/0>stage-0/0>stage-0-b0/0"));
    expect(x("response")).toBeGreaterThan(Math.max(...Object.values(boxes).filter((_, i) => i !== Object.keys(boxes).indexOf("response")).map((p) => p.x)));
  });

  it("a step that does not take the previous answer gets an arrow over the steps before it, into its box above the other arrow", () => {
    const model = project(graphOf(CAT_DOG));
    const layout = autoFlowLayout(model);
    const over = layout.routes["request->root/1"];
    const classifier = layout.boxes["root/0"];
    expect(Math.min(...over.map((p) => p.y))).toBeLessThan(classifier.y);
    const then = layout.routes["root/0->root/1:order"];
    expect(over[over.length - 1].y).toBeLessThan(then[then.length - 1].y);
  });

  it("lays out a thousand steps with as many boxes and routes as the model has", () => {
    const model = project(graphOf(pipeline(28, 12)));
    const layout = autoFlowLayout(model);
    expect(model.boxes.length).toBeGreaterThan(1000);
    expect(Object.keys(layout.boxes)).toHaveLength(model.boxes.length);
    expect(Object.keys(layout.routes)).toHaveLength(model.arrows.length);
  });
});
