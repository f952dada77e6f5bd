/**
 * Where the Flow view draws its boxes: left to right, or top to bottom, along the projection's
 * series-parallel shape (autoFlowLayout), groups as frames, orthogonal arrow routes; then the positions the user moved
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
  request: { width: 110, height: 36 },
  response: { width: 110, height: 36 },
  step: { width: 220, height: 60 },
  ref: { width: 220, height: 60 },
  call: { width: 220, height: 60 },
  unknown: { width: 220, height: 60 },
  empty: { width: 180, height: 48 },
  switch: { width: 150, height: 52 },
  splitter: { width: 150, height: 52 },
  merge: { width: 160, height: 48 },
  exit: { width: 220, height: 48 },
  join: { width: 14, height: 14 },
};

/**
 * Which way the flow runs: "LR", left to right (a Sequence is a row, branches are stacked), or
 * "TB", top to bottom (a Sequence is a column, branches side by side), which suits the usual
 * pipeline on a landscape screen better: a chain of a few models fills the height a row leaves empty.
 */
export type FlowDirection = "LR" | "TB";

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
/** Top to bottom: room between one row of boxes and the next (a "+" sits beside its arrow there). */
export const TB_ROW_GAP = 36;
/** Room between branches stacked one above the other (or side by side, top to bottom). */
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

/**
 * The layout runs along x with branches stacked along y; top to bottom is the same layout with
 * the axes swapped (each box's size swapped going in, every position swapped coming out).
 */
interface Metrics {
  tb: boolean;
  /** Room between an item of a series and the next (the bend is in its middle). */
  column: number;
  /** Room between branches. */
  row: number;
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

function measure(item: Item, m: Metrics): void {
  for (const c of item.items) measure(c, m);
  if (item.box) {
    const size = BOX_SIZES[item.box.kind];
    item.width = m.tb ? size.height : size.width;
    item.height = m.tb ? size.width : size.height;
    item.anchor = item.height / 2;
  } else if (item.shape.kind === "group") {
    // The frame's title bar is above its boxes either way: before them along x when swapped.
    const body = item.items[0];
    const head = m.tb ? [GROUP_HEAD, 0] : [0, GROUP_HEAD];
    item.width = body.width + 2 * GROUP_PAD + head[0];
    item.height = body.height + 2 * GROUP_PAD + head[1];
    item.anchor = body.anchor + GROUP_PAD + head[1];
    body.x = GROUP_PAD + head[0];
    body.y = GROUP_PAD + head[1];
  } else if (item.shape.kind === "parallel") {
    let y = 0;
    for (const c of item.items) {
      c.x = 0;
      c.y = y;
      y += c.height + m.row;
      item.width = Math.max(item.width, c.width);
    }
    item.height = y - m.row;
    const first = item.items[0];
    const last = item.items[item.items.length - 1];
    item.anchor = (first.y + first.anchor + last.y + last.anchor) / 2;
  } else {
    const top = item.lane ? LANE : 0;
    item.anchor = top + Math.max(...item.items.map((c) => c.anchor));
    let x = 0;
    let below = 0;
    item.items.forEach((c, i) => {
      if (i > 0) x += gapWidth(item, i, m);
      c.x = x;
      c.y = item.anchor - c.anchor;
      x += c.width;
      below = Math.max(below, c.height - c.anchor);
    });
    item.width = x;
    item.height = item.anchor + below;
  }
}

function gapWidth(series: Item, i: number, m: Metrics): number {
  const room = (w: number | undefined) => (w ? w + LABEL_PAD : 0);
  return m.column + room(series.before[i]) + room(series.after[i]);
}

/** The x of the bend of the arrows crossing the gap on the left of item `i` of `series`. */
function bendX(gap: Gap, m: Metrics): number {
  const prev = gap.series.items[gap.index - 1];
  const room = gap.series.before[gap.index];
  return prev.x + prev.width + (room ? room + LABEL_PAD : 0) + m.column / 2;
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
 *
 * Top to bottom ("TB"), the same with the axes swapped: arrows leave a box at the bottom and enter
 * the next at the top, branches run side by side (further apart when a label is wider than a
 * box), a label sits on its arrow (a lone "+" beside it, so that it needs no room of its own).
 */
export function autoFlowLayout(model: FlowModel, direction: FlowDirection = "LR"): FlowLayout {
  const boxes = new Map(model.boxes.map((b) => [b.id, b]));
  const leaves = new Map<string, Item>();
  const root = build(model.shape, null, 0, boxes, leaves);
  const out: FlowLayout = { boxes: {}, routes: {}, labels: {} };
  if (!root) return out;
  const tb = direction === "TB";
  let widestText = 0;
  if (tb)
    for (const a of model.arrows) {
      const size = a.label ? labelSize(a.label, a.insert !== null && a.kind !== "order") : null;
      if (size) widestText = Math.max(widestText, size.width);
    }
  const m: Metrics = tb ? { tb, column: TB_ROW_GAP, row: Math.max(ROW_GAP, widestText - BOX_SIZES.switch.width + LABEL_PAD) } : { tb, column: COLUMN_GAP, row: ROW_GAP };
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
    // Along the flow a label takes its width, or its height top to bottom (a lone "+" none).
    const along = tb ? (a.label ? size.height : 0) : size.width;
    if (along) room[gap.index] = Math.max(room[gap.index] ?? 0, along);
  }
  measure(root, m);
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
    let x = bendX({ series: common.series, index: common.fromIndex + 1 }, m);
    points.push({ x, y: start.y });
    if (common.index > common.fromIndex + 1) {
      const lane = common.series.y + LANE / 2;
      x = bendX(common, m);
      points.push({ x: points[points.length - 1].x, y: lane }, { x, y: lane });
    }
    for (const level of deeper) {
      const lane = level.series.y + LANE / 2;
      points.push({ x, y: lane });
      x = bendX(level, m);
      points.push({ x, y: lane });
    }
    points.push({ x, y: end.y }, end);
    out.routes[a.id] = simplify(points);
    const size = sizes.get(a.id);
    if (size) {
      const bend = points[1].x;
      // Left to right: above its arrow, on the first straight run (from the source's row) or the
      // last one. Top to bottom: on it (a lone "+" beside it).
      const along = tb ? (a.label ? size.height : 0) : size.width;
      const rise = tb ? (a.label ? 0 : -(size.width / 2 + 4)) : LABEL_RISE;
      if (tb && !along) {
        // A lone "+" top to bottom: beside the arrow, half-way when it runs straight, else just
        // under the box it leaves (its last run may cross a frame's title).
        const ahead = start.y === end.y ? (end.x - start.x) / 2 : size.height / 2 + 1;
        out.labels[a.id] = { x: Math.round(start.x + ahead), y: Math.round(start.y - rise) };
      } else
        out.labels[a.id] = plan.first ? { x: Math.round(bend - m.column / 2 - along / 2), y: Math.round(start.y - rise) } : { x: Math.round((x + end.x) / 2), y: Math.round(end.y - rise) };
    }
  }
  return tb ? transposed(out) : out;
}

/** The same layout with x and y swapped (the top-to-bottom one from the one computed along x). */
function transposed(layout: FlowLayout): FlowLayout {
  const swap = (p: Position): Position => ({ x: p.y, y: p.x });
  const each = <T,>(record: Record<string, T>, f: (v: T) => T) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
  return { boxes: each(layout.boxes, swap), routes: each(layout.routes, (r) => r.map(swap)), labels: each(layout.labels, swap) };
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
