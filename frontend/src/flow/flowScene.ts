/**
 * The Flow view's overview picture (../canvas/lodScene.ts): its group frames, boxes and arrows where the
 * layout put them. Imported by the Flow view only (it loads with it, on demand).
 */
import type { LodBox, LodLine, LodScene } from "../canvas/lodScene";
import { BOX_SIZES, groupFrames, type FlowLayout } from "./layout";
import type { FlowBox, FlowGroup, FlowModel } from "./project";

const BOX_COLORS: Partial<Record<FlowBox["kind"], [fill: string, stroke: string]>> = {
  request: ["#eef2f7", "#6b7a90"],
  response: ["#eef2f7", "#6b7a90"],
  switch: ["#fdf1de", "#e8a33d"],
  splitter: ["#f5e7fa", "#b45cd6"],
  merge: ["#e3f4ea", "#38a169"],
  exit: ["#fbe9e9", "#c05656"],
  empty: ["#f7f7f7", "#b8b8b8"],
  join: ["#ffffff", "#9aa5b8"],
};
const STEP: [string, string] = ["#ffffff", "#5b7cfa"];
const GROUP = "#b7c0d0";
const ARROW = "#9aa5b8";

/** The id of a group's frame in the picture (the Flow view's group nodes use the same). */
export const frameId = (group: FlowGroup) => `group:${group.id}`;

export function flowScene(model: FlowModel, placed: FlowLayout, isSelected: (box: FlowBox) => boolean, isGroupSelected: (group: FlowGroup) => boolean): LodScene {
  const frames = groupFrames(model, placed.boxes);
  const boxes: LodBox[] = [];
  // Frames outer first (drawn under, hit after the groups inside them).
  const byId = new Map(model.groups.map((g) => [g.id, g]));
  const depth = (g: FlowGroup): number => {
    let d = 0;
    for (let p = g.parent; p !== null && d < 100; p = byId.get(p)?.parent ?? null) d++;
    return d;
  };
  for (const g of model.groups.slice().sort((x, y) => depth(x) - depth(y))) {
    const f = frames.get(g.id);
    if (!f || g.collapsed) continue;
    boxes.push({ id: frameId(g), ...f, fill: "transparent", stroke: GROUP, label: g.title, selected: isGroupSelected(g), frame: true });
  }
  const centres = new Map<string, { x: number; y: number }>();
  for (const b of model.boxes) {
    const p = placed.boxes[b.id];
    if (!p) continue;
    const size = BOX_SIZES[b.kind];
    const [fill, stroke] = BOX_COLORS[b.kind] ?? STEP;
    boxes.push({ id: b.id, x: p.x, y: p.y, ...size, fill, stroke, label: b.title, selected: isSelected(b), inert: b.kind === "join" });
    centres.set(b.id, { x: p.x + size.width / 2, y: p.y + size.height / 2 });
  }
  const lines: LodLine[] = [];
  for (const a of model.arrows) {
    const route = placed.routes[a.id];
    const from = centres.get(a.from);
    const to = centres.get(a.to);
    if (route && route.length >= 2) lines.push({ points: route, color: ARROW });
    else if (from && to) lines.push({ points: [from, to], color: ARROW });
  }
  return { boxes, lines };
}
