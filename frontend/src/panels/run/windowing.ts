/**
 * Which rows of a long list to render: only those in view (and a few either side), with the
 * space of the others kept by two spacers, so a 10,000-step run's console holds a few dozen
 * rows in the DOM. Pure: row heights in, a window out; the component measures and scrolls.
 */

/** A list shorter than this renders every row (windowing would only add moving parts). */
export const WINDOW_FROM = 200;
/** The height of a collapsed console line in px (run.css: `.console-line`), until measured. */
export const ROW_HEIGHT = 27;
/** Rows rendered beyond each edge of the view, so a fast scroll does not show blank space first. */
export const OVERSCAN = 10;

export interface ListWindow {
  /** The first row rendered. */
  start: number;
  /** One past the last row rendered. */
  end: number;
  /** The height of the rows above `start` (the top spacer), in px. */
  before: number;
  /** The height of the rows from `end` on (the bottom spacer), in px. */
  after: number;
}

/**
 * The top of every row and the total height: `offsets[i]` is the top of row `i`,
 * `offsets[count]` the height of the whole list.
 */
export function rowOffsets(count: number, heightOf: (i: number) => number): Float64Array {
  const offsets = new Float64Array(count + 1);
  for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i] + heightOf(i);
  return offsets;
}

/** The row at `y` px from the top of the list (the last one past the end, 0 when empty). */
export function rowAt(offsets: Float64Array, y: number): number {
  const count = offsets.length - 1;
  if (count <= 0) return 0;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The rows to render for a view of `height` px scrolled `scrollTop` px down the list. */
export function visibleWindow(offsets: Float64Array, scrollTop: number, height: number, overscan = OVERSCAN): ListWindow {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0, before: 0, after: 0 };
  const top = Math.max(0, scrollTop);
  const start = Math.max(0, rowAt(offsets, top) - overscan);
  const end = Math.min(count, rowAt(offsets, top + Math.max(height, 0)) + 1 + overscan);
  return { start, end, before: offsets[start], after: offsets[count] - offsets[end] };
}
