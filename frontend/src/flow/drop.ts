/**
 * Where a model dragged from the palette lands in the Flow view: on a box (it fills a blank box
 * in, or runs beside it), on an arrow that has a "+" (inserted there), or on the canvas away from
 * both (appended to the pipeline). A router type dragged from the palette applies to a box only:
 * an Ensemble, Switch or Splitter there is the box's own parallel, conditional or weighted branch.
 * Pure: positions in flow coordinates.
 */
import { ROUTER_TYPES, type Position, type RouterType } from "../graph/types";
import { BOX_SIZES, type FlowDirection, type FlowLayout } from "./layout";
import type { FlowArrow, FlowBox, FlowModel, InsertPoint } from "./project";

export type DropTarget = { kind: "box"; box: FlowBox } | { kind: "arrow"; arrow: FlowArrow; at: InsertPoint } | { kind: "canvas" };

/** The distance from `p` to the segment `a`-`b`. */
export function segmentDistance(p: Position, a: Position, b: Position): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = dx * dx + dy * dy;
  const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / len));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

/** An arrow's path as drawn: the layout's route, or straight from its source's right to its target's left (bottom to top, top to bottom). */
function pathOf(arrow: FlowArrow, boxes: ReadonlyMap<string, FlowBox>, placed: FlowLayout, direction: FlowDirection): Position[] {
  const route = placed.routes[arrow.id];
  if (route && route.length >= 2) return route;
  const from = boxes.get(arrow.from);
  const to = boxes.get(arrow.to);
  const a = placed.boxes[arrow.from];
  const b = placed.boxes[arrow.to];
  if (!from || !to || !a || !b) return [];
  const f = BOX_SIZES[from.kind];
  const t = BOX_SIZES[to.kind];
  if (direction === "TB")
    return [
      { x: a.x + f.width / 2, y: a.y + f.height },
      { x: b.x + t.width / 2, y: b.y },
    ];
  return [
    { x: a.x + f.width, y: a.y + f.height / 2 },
    { x: b.x, y: b.y + t.height / 2 },
  ];
}

/**
 * What is at `point`: a box of a step under it; else the nearest arrow with a "+" within `reach`
 * (of its path or its label); else the canvas.
 */
export function dropTarget(model: FlowModel, placed: FlowLayout, point: Position, reach: number, direction: FlowDirection = "LR"): DropTarget {
  for (const box of model.boxes) {
    const p = placed.boxes[box.id];
    if (!box.step || !p) continue;
    const size = BOX_SIZES[box.kind];
    if (point.x >= p.x && point.x <= p.x + size.width && point.y >= p.y && point.y <= p.y + size.height) return { kind: "box", box };
  }
  const boxes = new Map(model.boxes.map((b) => [b.id, b]));
  let best: DropTarget = { kind: "canvas" };
  let bestDistance = reach;
  for (const arrow of model.arrows) {
    if (!arrow.insert || arrow.kind === "order") continue;
    const path = pathOf(arrow, boxes, placed, direction);
    let d = Infinity;
    for (let i = 1; i < path.length; i++) d = Math.min(d, segmentDistance(point, path[i - 1], path[i]));
    const label = placed.labels[arrow.id];
    if (label) d = Math.min(d, Math.hypot(point.x - label.x, point.y - label.y));
    if (d <= bestDistance) {
      bestDistance = d;
      best = { kind: "arrow", arrow, at: arrow.insert };
    }
  }
  return best;
}

/** What a drop there does, in words (shown while dragging). */
export function dropHint(target: DropTarget, titles: ReadonlyMap<string, string>, blank: (box: FlowBox) => boolean): string {
  if (target.kind === "box") return blank(target.box) ? `Use for ${target.box.title}` : `Run beside ${target.box.title}, in parallel`;
  if (target.kind === "arrow") return `Insert between ${titles.get(target.arrow.from) ?? "?"} and ${titles.get(target.arrow.to) ?? "?"}`;
  return "Add at the end of the pipeline";
}

/** What a router type dropped on a box adds beside it (the box's own buttons do the same). */
export const ROUTER_ON_BOX: Partial<Record<RouterType, string>> = {
  Ensemble: "a model in parallel",
  Switch: "a conditional branch",
  Splitter: "a weighted split",
};

/** The router type a palette drag carries, from its data types (`prefix` + the type in lower case). */
export function draggedRouter(types: readonly string[], prefix: string): RouterType | null {
  for (const t of types) if (t.startsWith(prefix)) return ROUTER_TYPES.find((r) => r.toLowerCase() === t.slice(prefix.length)) ?? null;
  return null;
}

/** What dropping router `type` at `target` does, in words; null when it does nothing there. */
export function routerHint(type: RouterType, target: DropTarget): string | null {
  const what = ROUTER_ON_BOX[type];
  if (!what || target.kind !== "box") return null;
  return `Add ${what} beside ${target.box.title}`;
}
