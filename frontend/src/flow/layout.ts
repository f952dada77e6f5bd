/**
 * Where the Flow view draws its boxes: left to right along the projection's series-parallel shape
 * (autoFlowLayout), groups as frames, orthogonal arrow routes; then the positions the user moved
 * (kept in the version's layout under `flow`, apart from the Nodes view's `nodes`) win, and a box
 * that has no stored position is moved to free space when the automatic one would sit on a moved
 * box. Pure: no DOM, no worker.
 */
import { freeOffset, type Rect } from "../graph/placement";
import type { Position } from "../graph/types";
import type { BoxKind, FlowBox, FlowModel, Shape } from "./project";

export interface Size {
  width: number;
  height: number;
}

/** Each kind of box has a fixed size (flow.css draws them so), so layout needs no measuring. */
export const BOX_SIZES: Record<BoxKind, Size> = {
  request: { width: 120, height: 44 },
  response: { width: 120, height: 44 },
  step: { width: 220, height: 70 },
  ref: { width: 220, height: 70 },
  call: { width: 220, height: 70 },
  unknown: { width: 220, height: 70 },
  empty: { width: 190, height: 56 },
  switch: { width: 150, height: 60 },
  splitter: { width: 150, height: 60 },
  merge: { width: 170, height: 56 },
  exit: { width: 220, height: 56 },
  join: { width: 14, height: 14 },
};

/** Room around a group's boxes, and for its title bar. */
export const GROUP_PAD = 16;
export const GROUP_HEAD = 30;

export interface FlowLayout {
  /** Top-left corner of each box, in flow coordinates. */
  boxes: Record<string, Position>;
  /** Each arrow's orthogonal route (start, bends, end), when the layout routed it. */
  routes: Record<string, Position[]>;
  /** The centre of each arrow's label (with its "+"), where the layout made room for it. */
  labels: Record<string, Position>;
}

/** Characters of an arrow's label the view prints (the rest is in its tooltip). */
export const LABEL_CHARS = 34;

/**
 * The room an arrow's label takes: its text in the 10.5 px monospace font (6.4 px a character,
 * measured in headless Chromium) and the "+" button beside it.
 */
export function labelSize(label: string | null, plus: boolean): Size | null {
  if (!label && !plus) return null;
  const chars = label ? Math.min(Array.from(label).length, LABEL_CHARS) : 0;
  return { width: (label ? chars * 6.4 + 14 : 0) + (plus ? 24 : 0), height: 20 };
}

/** Room between one column of boxes and the next (the arrows' bend is in its middle). */
export const COLUMN_GAP = 56;
/** Room between branches stacked one above the other. */
export const ROW_GAP = 36;
/** Room above a Sequence for an arrow that passes over its first steps. */
export const LANE = 24;
/** Room between a label and the bend or box beside it. */
const LABEL_PAD = 8;
/** A label sits above its arrow: its centre this far above the line. */
const LABEL_RISE = 12;
/** How far above the middle of its box an arrow from over the steps before comes in (its label
 * then clears the label of the arrow from the step before). */
const SKIP_ENTRY = 22;

interface Item {
  shape: Shape;
  parent: Item | null;
  /** Index in the parent's items. */
  index: number;
  items: Item[];
  box: FlowBox | null;
  width: number;
  height: number;
  /** The line arrows come in and go out on, from the top. */
  anchor: number;
  x: number;
  y: number;
  /** Series: whether an arrow passes over its first steps (room above them); label room per gap. */
  lane: boolean;
  before: number[];
  after: number[];
}

/** A series and the index of one of its items: the gap on that item's left. */
interface Gap {
  series: Item;
  index: number;
}

function build(shape: Shape, parent: Item | null, index: number, boxes: ReadonlyMap<string, FlowBox>, leaves: Map<string, Item>): Item | null {
  const item: Item = { shape, parent, index, items: [], box: null, width: 0, height: 0, anchor: 0, x: 0, y: 0, lane: false, before: [], after: [] };
  if (shape.kind === "box") {
    const box = boxes.get(shape.id);
    if (!box || leaves.has(box.id)) return null;
    item.box = box;
    leaves.set(box.id, item);
    return item;
  }
  const children = shape.kind === "group" ? [shape.body] : shape.items;
  for (const c of children) {
    const built = build(c, item, item.items.length, boxes, leaves);
    if (built) item.items.push(built);
  }
  return item.items.length ? item : null;
}

/** The series levels above `item`, innermost first, with the index of the item's branch there. */
function levels(item: Item): Gap[] {
  const out: Gap[] = [];
  for (let c = item; c.parent; c = c.parent) if (c.parent.shape.kind === "series") out.push({ series: c.parent, index: c.index });
  return out;
}

/**
 * How an arrow runs through the nesting: the series holding both ends (`from` in item `fromIndex`,
 * `to` in item `index`), then each deeper series `to` is in where it is not the first item (the
 * arrow passes over the items before it, in that series' lane).
 */
interface Passage {
  common: Gap & { fromIndex: number };
  deeper: Gap[];
}

function passage(from: Item, to: Item): Passage | null {
  const fromLevels = new Map(levels(from).map((l) => [l.series, l.index]));
  const deeper: Gap[] = [];
  for (const level of levels(to)) {
    const at = fromLevels.get(level.series);
    if (at !== undefined) return at < level.index ? { common: { ...level, fromIndex: at }, deeper: deeper.reverse() } : null;
    if (level.index > 0) deeper.push(level);
  }
  return null;
}

function measure(item: Item): void {
  for (const c of item.items) measure(c);
  if (item.box) {
    ({ width: item.width, height: item.height } = BOX_SIZES[item.box.kind]);
    item.anchor = item.height / 2;
  } else if (item.shape.kind === "group") {
    const body = item.items[0];
    item.width = body.width + 2 * GROUP_PAD;
    item.height = body.height + 2 * GROUP_PAD + GROUP_HEAD;
    item.anchor = body.anchor + GROUP_PAD + GROUP_HEAD;
    body.x = GROUP_PAD;
    body.y = GROUP_PAD + GROUP_HEAD;
  } else if (item.shape.kind === "parallel") {
    let y = 0;
    for (const c of item.items) {
      c.x = 0;
      c.y = y;
      y += c.height + ROW_GAP;
      item.width = Math.max(item.width, c.width);
    }
    item.height = y - ROW_GAP;
    const first = item.items[0];
    const last = item.items[item.items.length - 1];
    item.anchor = (first.y + first.anchor + last.y + last.anchor) / 2;
  } else {
    const top = item.lane ? LANE : 0;
    item.anchor = top + Math.max(...item.items.map((c) => c.anchor));
    let x = 0;
    let below = 0;
    item.items.forEach((c, i) => {
      if (i > 0) x += gapWidth(item, i);
      c.x = x;
      c.y = item.anchor - c.anchor;
      x += c.width;
      below = Math.max(below, c.height - c.anchor);
    });
    item.width = x;
    item.height = item.anchor + below;
  }
}

function gapWidth(series: Item, i: number): number {
  const room = (w: number | undefined) => (w ? w + LABEL_PAD : 0);
  return COLUMN_GAP + room(series.before[i]) + room(series.after[i]);
}

/** The x of the bend of the arrows crossing the gap on the left of item `i` of `series`. */
function bendX(gap: Gap): number {
  const prev = gap.series.items[gap.index - 1];
  const room = gap.series.before[gap.index];
  return prev.x + prev.width + (room ? room + LABEL_PAD : 0) + COLUMN_GAP / 2;
}

function place(item: Item, x: number, y: number): void {
  item.x += x;
  item.y += y;
  for (const c of item.items) place(c, item.x, item.y);
}

/**
 * The automatic layout of a model, in milliseconds and without elk: the projection is series-
 * parallel (project.ts `Shape`), so boxes go left to right along a series, branches one above the
 * other (left-aligned), a called node in a frame with GROUP_PAD and GROUP_HEAD around it. Each arrow
 * runs from its source's right side to its target's left side with its bend in the gap before the
 * target's column; an arrow that passes over steps (a step that does not take the previous answer
 * gets the Sequence's input) runs in a lane above them. A label goes on its arrow's last straight
 * run, or on its first when several labelled arrows meet in one box (a merge), and each gap is
 * widened to hold its labels (labelSize). Deterministic; linear in the size of the model.
 */
export function autoFlowLayout(model: FlowModel): FlowLayout {
  const boxes = new Map(model.boxes.map((b) => [b.id, b]));
  const leaves = new Map<string, Item>();
  const root = build(model.shape, null, 0, boxes, leaves);
  const out: FlowLayout = { boxes: {}, routes: {}, labels: {} };
  if (!root) return out;
  // Which arrows pass over steps, and where each label goes (the room it needs, per gap).
  const outgoing = new Map<string, number>();
  const labelled = new Map<string, number>();
  const sizes = new Map<string, Size>();
  for (const a of model.arrows) {
    outgoing.set(a.from, (outgoing.get(a.from) ?? 0) + 1);
    const size = labelSize(a.label, a.insert !== null && a.kind !== "order");
    if (size) {
      sizes.set(a.id, size);
      labelled.set(a.to, (labelled.get(a.to) ?? 0) + 1);
    }
  }
  const plans = new Map<string, { passage: Passage; first: boolean }>();
  const adjacentInto = new Set<string>();
  for (const a of model.arrows) {
    const from = leaves.get(a.from);
    const to = leaves.get(a.to);
    const p = from && to ? passage(from, to) : null;
    if (!p) continue;
    const skips = p.common.index > p.common.fromIndex + 1;
    if (skips) p.common.series.lane = true;
    for (const level of p.deeper) level.series.lane = true;
    const adjacent = !skips && p.deeper.length === 0;
    // Several labels into one box: each on its own arrow's first run (its source's row).
    const first = adjacent && (labelled.get(a.to) ?? 0) > 1 && outgoing.get(a.from) === 1;
    plans.set(a.id, { passage: p, first });
    if (adjacent) adjacentInto.add(a.to);
    const size = sizes.get(a.id);
    if (!size) continue;
    const gap = first ? p.common : (p.deeper[p.deeper.length - 1] ?? p.common);
    const room = first ? gap.series.before : gap.series.after;
    room[gap.index] = Math.max(room[gap.index] ?? 0, size.width);
  }
  measure(root);
  place(root, 0, 0);
  for (const [id, item] of leaves) out.boxes[id] = { x: Math.round(item.x), y: Math.round(item.y) };
  for (const a of model.arrows) {
    const from = leaves.get(a.from);
    const to = leaves.get(a.to);
    const plan = plans.get(a.id);
    if (!from || !to || !plan) continue;
    const { common, deeper } = plan.passage;
    const skips = common.index > common.fromIndex + 1 || deeper.length > 0;
    const start = { x: from.x + from.width, y: from.y + from.anchor };
    // An arrow from over the steps before its box comes in above the one from the step before.
    const end = { x: to.x, y: to.y + to.anchor - (skips && adjacentInto.has(a.to) ? Math.min(SKIP_ENTRY, to.anchor - 6) : 0) };
    const points: Position[] = [start];
    let x = bendX({ series: common.series, index: common.fromIndex + 1 });
    points.push({ x, y: start.y });
    if (common.index > common.fromIndex + 1) {
      const lane = common.series.y + LANE / 2;
      x = bendX(common);
      points.push({ x: points[points.length - 1].x, y: lane }, { x, y: lane });
    }
    for (const level of deeper) {
      const lane = level.series.y + LANE / 2;
      points.push({ x, y: lane });
      x = bendX(level);
      points.push({ x, y: lane });
    }
    points.push({ x, y: end.y }, end);
    out.routes[a.id] = simplify(points);
    const size = sizes.get(a.id);
    if (size) {
      const bend = points[1].x;
      // Above its arrow, on the first straight run (from the source's row) or the last one.
      out.labels[a.id] = plan.first ? { x: Math.round(bend - COLUMN_GAP / 2 - size.width / 2), y: Math.round(start.y - LABEL_RISE) } : { x: Math.round((x + end.x) / 2), y: Math.round(end.y - LABEL_RISE) };
    }
  }
  return out;
}

/** Rounded points without repeats and without points in the middle of a straight run. */
function simplify(points: Position[]): Position[] {
  const out: Position[] = [];
  for (const raw of points) {
    const p = { x: Math.round(raw.x), y: Math.round(raw.y) };
    const last = out[out.length - 1];
    if (last && last.x === p.x && last.y === p.y) continue;
    const prev = out[out.length - 2];
    if (prev && last && ((prev.x === last.x && last.x === p.x) || (prev.y === last.y && last.y === p.y))) out.pop();
    out.push(p);
  }
  return out;
}

function rectOf(box: FlowBox, p: Position): Rect {
  return { ...p, ...BOX_SIZES[box.kind] };
}

/**
 * The positions drawn: a stored (user-moved) position wins; the others are the automatic ones,
 * moved to the nearest free space when they would overlap a box placed before them. Routes stay only for
 * arrows between boxes still where the layout put them.
 */
export function placeBoxes(model: FlowModel, auto: FlowLayout, stored: Readonly<Record<string, Position>>): FlowLayout {
  const boxes: Record<string, Position> = {};
  const placed: Rect[] = [];
  const moved = new Set<string>();
  for (const b of model.boxes) {
    const p = stored[b.layoutKey];
    if (p) {
      boxes[b.id] = { x: p.x, y: p.y };
      placed.push(rectOf(b, p));
      moved.add(b.id);
    }
  }
  for (const b of model.boxes) {
    if (boxes[b.id]) continue;
    const wanted = auto.boxes[b.id] ?? { x: 0, y: 0 };
    const rect = rectOf(b, { x: 0, y: 0 });
    const p = placed.length ? freeOffset(placed, [rect], wanted) : wanted;
    if (p.x !== wanted.x || p.y !== wanted.y) moved.add(b.id);
    boxes[b.id] = p;
    placed.push(rectOf(b, p));
  }
  const routes: Record<string, Position[]> = {};
  const labels: Record<string, Position> = {};
  for (const a of model.arrows) {
    const r = auto.routes[a.id];
    if (!r || moved.has(a.from) || moved.has(a.to)) continue;
    routes[a.id] = r;
    if (auto.labels[a.id]) labels[a.id] = auto.labels[a.id];
  }
  return { boxes, routes, labels };
}

/** Each open group's frame: around its boxes and sub-groups, with room for its title. */
export function groupFrames(model: FlowModel, boxes: Readonly<Record<string, Position>>): Map<string, Rect> {
  const frames = new Map<string, Rect>();
  const byGroup = new Map<string, Rect[]>();
  for (const b of model.boxes) {
    const p = boxes[b.id];
    if (!p || b.group === null) continue;
    const list = byGroup.get(b.group) ?? [];
    list.push(rectOf(b, p));
    byGroup.set(b.group, list);
  }
  // Innermost groups first: a group's frame holds its sub-groups' frames.
  const depth = (id: string | null): number => {
    let d = 0;
    for (let g = model.groups.find((x) => x.id === id); g?.parent; g = model.groups.find((x) => x.id === g?.parent)) d++;
    return d;
  };
  const open = model.groups.filter((g) => !g.collapsed).sort((a, b) => depth(b.id) - depth(a.id));
  for (const g of open) {
    const rects = byGroup.get(g.id) ?? [];
    if (!rects.length) continue;
    const x = Math.min(...rects.map((r) => r.x)) - GROUP_PAD;
    const y = Math.min(...rects.map((r) => r.y)) - GROUP_PAD - GROUP_HEAD;
    const right = Math.max(...rects.map((r) => r.x + r.width)) + GROUP_PAD;
    const bottom = Math.max(...rects.map((r) => r.y + r.height)) + GROUP_PAD;
    const frame = { x, y, width: right - x, height: bottom - y };
    frames.set(g.id, frame);
    if (g.parent) {
      const list = byGroup.get(g.parent) ?? [];
      list.push(frame);
      byGroup.set(g.parent, list);
    }
  }
  return frames;
}
