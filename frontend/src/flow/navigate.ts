/**
 * Arrow-key moves between the Flow view's boxes: from the focused box to the nearest box in the
 * arrow's direction, by the boxes' centres as drawn. Pure.
 */
import type { Position } from "../graph/types";

export type Direction = "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown";

const AXES: Record<Direction, { along: "x" | "y"; sign: 1 | -1 }> = {
  ArrowRight: { along: "x", sign: 1 },
  ArrowLeft: { along: "x", sign: -1 },
  ArrowDown: { along: "y", sign: 1 },
  ArrowUp: { along: "y", sign: -1 },
};

export function isDirection(key: string): key is Direction {
  return key in AXES;
}

/**
 * The box (by id) nearest to `from` in `direction`: among the centres ahead of it along that axis,
 * the one with the least distance ahead plus twice its distance across (so the box in the same row
 * or column wins over a nearer one off to the side); null when none is ahead.
 */
export function nearestBox(from: string, direction: Direction, centres: ReadonlyMap<string, Position>): string | null {
  const at = centres.get(from);
  if (!at) return null;
  const { along, sign } = AXES[direction];
  const across = along === "x" ? "y" : "x";
  let best: string | null = null;
  let bestScore = Infinity;
  for (const [id, c] of centres) {
    const ahead = (c[along] - at[along]) * sign;
    if (id === from || ahead <= 1) continue;
    const score = ahead + 2 * Math.abs(c[across] - at[across]);
    if (score < bestScore) {
      bestScore = score;
      best = id;
    }
  }
  return best;
}
