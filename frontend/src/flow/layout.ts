/**
 * Where the Flow view draws its boxes: elkjs's layered layout, left to right, groups as compound
 * nodes, orthogonal edge routes; then the positions the user moved (kept in the version's layout
 * under `flow`, apart from the Nodes view's `nodes`) win, and a box that has no stored position
 * is moved to free space when the automatic one would sit on a moved box. Pure apart from the
 * layout engine, which the caller passes in (a web worker in the browser, the bundled engine in
 * tests).
 */
import type { ELK, ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api";
import { freeOffset, type Rect } from "../graph/placement";
import type { Position } from "../graph/types";
import type { BoxKind, FlowBox, FlowModel } from "./project";

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
  /** Each arrow's orthogonal route (start, bends, end), when elk routed it. */
  routes: Record<string, Position[]>;
  /** The centre of each arrow's label (with its "+"), where elk made room for it. */
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

const SEP = "\u0000";

/** The elk graph of a model: groups are compound nodes holding their boxes and sub-groups. */
export function elkGraph(model: FlowModel): ElkNode {
  const open = new Set(model.groups.filter((g) => !g.collapsed).map((g) => g.id));
  const containers = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: `${SEP}root`,
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.spacing.nodeNode": "36",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56",
      "elk.layered.spacing.edgeNodeBetweenLayers": "24",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      "elk.json.edgeCoords": "ROOT",
      "elk.json.shapeCoords": "ROOT",
      "elk.edgeLabels.placement": "CENTER",
      "elk.layered.edgeLabels.sideSelection": "ALWAYS_UP",
    },
    children: [],
    edges: [],
  };
  containers.set("", root);
  for (const g of model.groups) {
    if (!open.has(g.id)) continue;
    const node: ElkNode = {
      id: `${SEP}group${SEP}${g.id}`,
      layoutOptions: { "elk.padding": `[top=${GROUP_HEAD + GROUP_PAD},left=${GROUP_PAD},bottom=${GROUP_PAD},right=${GROUP_PAD}]` },
      children: [],
    };
    containers.set(g.id, node);
  }
  for (const g of model.groups) {
    if (!open.has(g.id)) continue;
    const parent = containers.get(g.parent ?? "") ?? root;
    parent.children?.push(containers.get(g.id) as ElkNode);
  }
  for (const b of model.boxes) {
    const parent = containers.get(b.group ?? "") ?? root;
    parent.children?.push({ id: b.id, ...BOX_SIZES[b.kind] });
  }
  root.edges = model.arrows.map((a): ElkExtendedEdge => {
    const size = labelSize(a.label, a.insert !== null && a.kind !== "order");
    return { id: a.id, sources: [a.from], targets: [a.to], ...(size ? { labels: [{ id: `${a.id}${SEP}label`, text: a.label ?? "+", ...size }] } : {}) };
  });
  return root;
}

/** Runs elk on the model: every box's automatic position and every arrow's route. */
export async function autoFlowLayout(model: FlowModel, elk: Pick<ELK, "layout">): Promise<FlowLayout> {
  const result = await elk.layout(elkGraph(model));
  const boxes: Record<string, Position> = {};
  const walk = (n: ElkNode) => {
    for (const c of n.children ?? []) {
      if (!c.id.startsWith(SEP)) boxes[c.id] = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
      walk(c);
    }
  };
  walk(result);
  const routes: Record<string, Position[]> = {};
  const labels: Record<string, Position> = {};
  const collect = (n: ElkNode) => {
    for (const e of (n.edges ?? []) as ElkExtendedEdge[]) {
      const s = e.sections?.[0];
      if (s) routes[e.id] = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint].map((p) => ({ x: Math.round(p.x), y: Math.round(p.y) }));
      const l = e.labels?.[0];
      if (l && l.x !== undefined && l.y !== undefined) labels[e.id] = { x: Math.round(l.x + (l.width ?? 0) / 2), y: Math.round(l.y + (l.height ?? 0) / 2) };
    }
    for (const c of n.children ?? []) collect(c);
  };
  collect(result);
  return { boxes, routes, labels };
}

function rectOf(box: FlowBox, p: Position): Rect {
  return { ...p, ...BOX_SIZES[box.kind] };
}

/**
 * The positions drawn: a stored (user-moved) position wins; the others are elk's, moved to the
 * nearest free space when they would overlap a box placed before them. Routes stay only for
 * arrows between boxes still where elk put them.
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
