/**
 * The Flow view's first viewport. Fitting a long pipeline into the canvas makes its text too small
 * to read (the demo face-recognition graph fits at a third of its size on a laptop screen), so the
 * first fit never zooms out below READABLE_ZOOM: when the whole picture does not fit at that zoom,
 * the view starts where the flow starts (its left edge), and the rest is a pan away, as n8n and
 * Node-RED open a large flow. Pure: the caller measures the picture and the canvas.
 */
import type { Rect } from "../graph/placement";
import type { Position } from "../graph/types";
import type { FlowLayout } from "./layout";

/** The smallest text a box draws, in CSS pixels at 100 % (flow.css: tags, badges, protocols). */
export const SMALLEST_BOX_TEXT = 10.5;
/** The least zoom of the first fit: every text of a box is then 10 px or more on screen. */
export const READABLE_ZOOM = 0.96;
/** The largest zoom of the first fit (a small graph is not blown up). */
export const FIT_MAX_ZOOM = 1.2;
/** Room left around the picture, in screen pixels. */
export const FIT_MARGIN = 32;

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

/** The smallest rectangle holding every rectangle of `rects` (null when there are none). */
export function boundsOf(rects: readonly Rect[]): Rect | null {
  if (!rects.length) return null;
  const x = Math.min(...rects.map((r) => r.x));
  const y = Math.min(...rects.map((r) => r.y));
  const right = Math.max(...rects.map((r) => r.x + r.width));
  const bottom = Math.max(...rects.map((r) => r.y + r.height));
  return { x, y, width: right - x, height: bottom - y };
}

/**
 * The viewport that shows `bounds` (flow coordinates) in a canvas of `width` x `height` screen
 * pixels: the whole picture, centred, when it fits at READABLE_ZOOM or more; else at
 * READABLE_ZOOM, its left edge at the canvas's left margin, centred vertically when it fits that
 * way, else its top at the top margin.
 */
export function firstViewport(bounds: Rect, width: number, height: number): Viewport {
  const roomW = Math.max(1, width - 2 * FIT_MARGIN);
  const roomH = Math.max(1, height - 2 * FIT_MARGIN);
  const zoom = Math.max(fitZoom(bounds, width, height), READABLE_ZOOM);
  const w = bounds.width * zoom;
  const h = bounds.height * zoom;
  const x = w <= roomW ? (width - w) / 2 - bounds.x * zoom : FIT_MARGIN - bounds.x * zoom;
  const y = h <= roomH ? (height - h) / 2 - bounds.y * zoom : FIT_MARGIN - bounds.y * zoom;
  return { x: Math.round(x), y: Math.round(y), zoom };
}

/** The zoom at which `bounds` fits a canvas of `width` x `height` (at most FIT_MAX_ZOOM). */
export function fitZoom(bounds: Rect, width: number, height: number): number {
  const roomW = Math.max(1, width - 2 * FIT_MARGIN);
  const roomH = Math.max(1, height - 2 * FIT_MARGIN);
  return Math.min(roomW / Math.max(1, bounds.width), roomH / Math.max(1, bounds.height), FIT_MAX_ZOOM);
}

/**
 * Of several pictures of the same graph (one per layout direction), the one that shows the most
 * of it readably in the canvas: the first whose fit is the largest, a later one only when its fit
 * is larger by more than 2 % (so that the first, left to right, wins a tie).
 */
export function bestFit<T extends string>(pictures: readonly { key: T; bounds: Rect | null }[], width: number, height: number): T | null {
  let best: { key: T; zoom: number } | null = null;
  for (const p of pictures) {
    if (!p.bounds) continue;
    const zoom = fitZoom(p.bounds, width, height);
    if (!best || zoom > best.zoom * 1.02) best = { key: p.key, zoom };
  }
  return best?.key ?? null;
}

/**
 * How the boxes in `view` (flow coordinates) moved from one layout to the next, when all of them
 * moved and most of them the same way (a branch added above them, which moves the whole picture);
 * null when any of them stayed where it was (a model inserted or appended: the boxes before it
 * stay, those after it make room), so that the view does not move then.
 */
export function commonShift(before: FlowLayout, after: FlowLayout, view: { x: number; y: number; width: number; height: number }): Position | null {
  const counts = new Map<string, { shift: Position; n: number }>();
  let total = 0;
  for (const [id, a] of Object.entries(before.boxes)) {
    const b = after.boxes[id];
    if (!b || a.x < view.x || a.y < view.y || a.x > view.x + view.width || a.y > view.y + view.height) continue;
    total++;
    const key = `${b.x - a.x},${b.y - a.y}`;
    const c = counts.get(key) ?? { shift: { x: b.x - a.x, y: b.y - a.y }, n: 0 };
    c.n++;
    counts.set(key, c);
  }
  if (counts.has("0,0")) return null;
  let best: { shift: Position; n: number } | null = null;
  for (const c of counts.values()) if (!best || c.n > best.n) best = c;
  if (!best || best.n * 2 <= total) return null;
  return best.shift;
}
