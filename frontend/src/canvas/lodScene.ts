/**
 * The picture both canvases draw into one <canvas> below the low-detail threshold (lod.ts,
 * LodLayer.tsx): boxes and lines in flow coordinates, with the pure parts of drawing it (what is
 * drawn, at which resolution) and of answering the pointer and the keyboard over it (hit testing,
 * the next box an arrow key leads to, the viewport that makes a box readable). Zoomed that far
 * out, React Flow's cards and edges are not mounted at all: a pan moves one bitmap.
 */
import type { Rect } from "../graph/placement";

export interface LodBox {
  /** What the view selects or opens when the box is clicked (a node name, a Flow box id…). */
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  fill: string;
  stroke: string;
  /** The name drawn in the box when it is large enough on screen to be read. */
  label: string;
  selected: boolean;
  /** A frame (a Flow group) is drawn as an outline under the boxes and hit only where no box is. */
  frame?: boolean;
  /** A box that only joins lines (a Flow merge point): drawn, never hit. */
  inert?: boolean;
}

export interface LodLine {
  points: { x: number; y: number }[];
  color: string;
}

export interface LodScene {
  boxes: LodBox[];
  lines: LodLine[];
}

/** The smallest rectangle holding every box and line (null for an empty picture). */
export function sceneBounds(scene: LodScene): Rect | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const b of scene.boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  for (const l of scene.lines)
    for (const p of l.points) {
      x0 = Math.min(x0, p.x);
      y0 = Math.min(y0, p.y);
      x1 = Math.max(x1, p.x);
      y1 = Math.max(y1, p.y);
    }
  if (!Number.isFinite(x0)) return null;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * The box under a point (flow coordinates): the last drawn box that holds it, a frame only when
 * no box does. Inert boxes are never hit.
 */
export function hitTest(scene: LodScene, p: { x: number; y: number }): LodBox | null {
  let frame: LodBox | null = null;
  for (let i = scene.boxes.length - 1; i >= 0; i--) {
    const b = scene.boxes[i];
    if (b.inert || p.x < b.x || p.y < b.y || p.x > b.x + b.width || p.y > b.y + b.height) continue;
    if (!b.frame) return b;
    // The innermost frame (frames are drawn outer first).
    frame ??= b;
  }
  return frame;
}

/** Most pixels the layer's bitmap may have (about 4 full-HD screens): past it, it is drawn coarser. */
export const MAX_PIXELS = 8_000_000;

/**
 * Bitmap pixels per flow unit: the zoom times the device pixel ratio (sharp on screen), less when
 * the whole picture would need more than `maxPixels`.
 */
export function backingScale(bounds: Rect, zoom: number, dpr: number, maxPixels = MAX_PIXELS): number {
  const want = Math.max(0.01, zoom * (dpr > 0 ? dpr : 1));
  const area = Math.max(1, bounds.width) * Math.max(1, bounds.height) * want * want;
  return area <= maxPixels ? want : want * Math.sqrt(maxPixels / area);
}

/** Screen pixels a label must have at least to be drawn (smaller text is noise). */
export const MIN_LABEL_PX = 7;
/** Room around the picture in the bitmap, in flow units (line widths, selection outlines). */
export const PAD = 8;

/** The subset of CanvasRenderingContext2D the layer uses (a recording fake in the tests). */
export type LodContext = Pick<
  CanvasRenderingContext2D,
  "setTransform" | "clearRect" | "beginPath" | "moveTo" | "lineTo" | "stroke" | "fillRect" | "strokeRect" | "fillText" | "save" | "restore" | "rect" | "clip"
> & { fillStyle: unknown; strokeStyle: unknown; lineWidth: number; font: string; textBaseline: CanvasTextBaseline };

export interface DrawStats {
  boxes: number;
  lines: number;
  labels: number;
}

/**
 * Draws the scene with its top-left corner (`origin`, flow coordinates) at the bitmap's (0, 0),
 * `scale` bitmap pixels per flow unit; `zoom` (screen pixels per flow unit) decides whether the
 * labels are big enough to draw. Lines first, then frames, then boxes, the selected ones last.
 */
export function drawScene(ctx: LodContext, scene: LodScene, origin: { x: number; y: number }, scale: number, zoom: number, size: { width: number; height: number }): DrawStats {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, size.width, size.height);
  ctx.setTransform(scale, 0, 0, scale, -origin.x * scale, -origin.y * scale);
  // Lines of one colour in one path: one stroke call for hundreds of edges.
  const byColor = new Map<string, LodLine[]>();
  for (const l of scene.lines) {
    if (l.points.length < 2) continue;
    const list = byColor.get(l.color);
    if (list) list.push(l);
    else byColor.set(l.color, [l]);
  }
  let lines = 0;
  ctx.lineWidth = 1.5 / zoom;
  for (const [color, list] of byColor) {
    ctx.strokeStyle = color;
    ctx.beginPath();
    for (const l of list) {
      ctx.moveTo(l.points[0].x, l.points[0].y);
      for (let i = 1; i < l.points.length; i++) ctx.lineTo(l.points[i].x, l.points[i].y);
      lines++;
    }
    ctx.stroke();
  }
  const frames = scene.boxes.filter((b) => b.frame);
  const plain = scene.boxes.filter((b) => !b.frame && !b.selected);
  const selected = scene.boxes.filter((b) => !b.frame && b.selected);
  for (const b of frames) {
    ctx.lineWidth = (b.selected ? 3 : 1) / zoom;
    ctx.strokeStyle = b.selected ? SELECTED : b.stroke;
    ctx.strokeRect(b.x, b.y, b.width, b.height);
  }
  const fontPx = MIN_LABEL_PX / zoom;
  let labels = 0;
  for (const b of [...plain, ...selected]) {
    ctx.fillStyle = b.fill;
    ctx.fillRect(b.x, b.y, b.width, b.height);
    ctx.lineWidth = (b.selected ? 3 : 1) / zoom;
    ctx.strokeStyle = b.selected ? SELECTED : b.stroke;
    ctx.strokeRect(b.x, b.y, b.width, b.height);
    // A label at least MIN_LABEL_PX tall on screen, when the box is tall enough for one.
    if (b.label && fontPx * 1.4 <= b.height && !b.inert) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.x, b.y, b.width, b.height);
      ctx.clip();
      ctx.fillStyle = "#1f2933";
      ctx.font = `${fontPx}px system-ui, sans-serif`;
      ctx.textBaseline = "top";
      ctx.fillText(b.label, b.x + fontPx * 0.5, b.y + fontPx * 0.3);
      ctx.restore();
      labels++;
    }
  }
  return { boxes: frames.length + plain.length + selected.length, lines, labels };
}

/** The outline of a selected box. */
export const SELECTED = "#2563eb";

export type LodKey = "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" | "Tab";

/**
 * The box a key leads to from box `fromId` (or from nothing): Tab the next in the scene's order
 * (the first from nothing), an arrow the nearest box whose centre lies that way (the first from
 * nothing; null when none does). Frames and inert boxes are skipped.
 */
export function nextBox(scene: LodScene, fromId: string | null, key: LodKey): LodBox | null {
  const boxes = scene.boxes.filter((b) => !b.frame && !b.inert);
  if (!boxes.length) return null;
  const from = fromId === null ? -1 : boxes.findIndex((b) => b.id === fromId);
  if (from < 0) return boxes[0];
  if (key === "Tab") return boxes[(from + 1) % boxes.length];
  const a = boxes[from];
  const ax = a.x + a.width / 2;
  const ay = a.y + a.height / 2;
  let best: LodBox | null = null;
  let bestScore = Infinity;
  for (const b of boxes) {
    if (b === a) continue;
    const dx = b.x + b.width / 2 - ax;
    const dy = b.y + b.height / 2 - ay;
    const along = key === "ArrowRight" ? dx : key === "ArrowLeft" ? -dx : key === "ArrowDown" ? dy : -dy;
    const across = key === "ArrowRight" || key === "ArrowLeft" ? Math.abs(dy) : Math.abs(dx);
    if (along <= 0) continue;
    // Straight ahead wins over a nearer box far to the side.
    const score = along + 2 * across;
    if (score < bestScore) {
      bestScore = score;
      best = b;
    }
  }
  return best;
}

/** The zoom a box opens at from the overview (a double-click, a key): readable, full detail. */
export const OPEN_ZOOM = 1;
