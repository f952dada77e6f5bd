/**
 * The Flow view's first viewport. Fitting a long pipeline into the canvas makes its text too small
 * to read (the demo face-recognition graph fits at a third of its size on a laptop screen), so the
 * first fit never zooms out below READABLE_ZOOM: when the whole picture does not fit at that zoom,
 * the view starts where the flow starts (its left edge), and the rest is a pan away, as n8n and
 * Node-RED open a large flow. Pure: the caller measures the picture and the canvas.
 */
import type { Rect } from "../graph/placement";

/** The least zoom of the first fit: the boxes' 12 px names are then 10 px or more on screen. */
export const READABLE_ZOOM = 0.85;
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
  const fit = Math.min(roomW / Math.max(1, bounds.width), roomH / Math.max(1, bounds.height), FIT_MAX_ZOOM);
  const zoom = Math.max(fit, READABLE_ZOOM);
  const w = bounds.width * zoom;
  const h = bounds.height * zoom;
  const x = w <= roomW ? (width - w) / 2 - bounds.x * zoom : FIT_MARGIN - bounds.x * zoom;
  const y = h <= roomH ? (height - h) / 2 - bounds.y * zoom : FIT_MARGIN - bounds.y * zoom;
  return { x: Math.round(x), y: Math.round(y), zoom };
}
