/**
 * Where a step dragged over a card goes. Only a pointer near the edge between two rows picks an
 * insertion point (shown as a line there); anywhere else on the card, the middle of a row
 * included, the step is appended. Dropping several steps on the middle of a card then keeps
 * the order they were dropped in.
 */

/**
 * The share of a row's height, at its top and at its bottom, that means "insert here". A
 * quarter each leaves the middle half of a row to "append", a target a hand hits easily.
 */
export const ROW_EDGE_SHARE = 0.25;

/**
 * The insertion index for a pointer over row `index` of a card with `length` steps, `y` pixels
 * below the row's top, the row being `height` pixels tall: `index` (before the row),
 * `index + 1` (after it) or `length` (append).
 */
export function rowDropIndex(y: number, height: number, index: number, length: number): number {
  if (height <= 0) return length;
  const share = y / height;
  if (share < ROW_EDGE_SHARE) return index;
  if (share > 1 - ROW_EDGE_SHARE) return index + 1;
  return length;
}
