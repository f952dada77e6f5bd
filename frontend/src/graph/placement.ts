/**
 * Where new cards go: the nearest free space to where they were asked for, so that a card added
 * from the palette, dropped on another card or pasted never lands on top of an existing one
 *. Pure: sizes come from the caller (React Flow's measurements) or from an
 * estimate of a card's height by its rows.
 */
import type { GraphState, JsonObject, Position } from "./types";

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

/** A card's width: `.router-card` in styles/cards.css. */
export const CARD_WIDTH = 262;
/**
 * A card's height without rows (head, type line, foot), per row, and the extra line a step's
 * condition takes: measured in headless Chromium at 100 % on cards of 0, 1 and 2 steps and one
 * with a condition (74, 117, 159 and 133 px), rounded up.
 */
const HEAD_HEIGHT = 75;
const ROW_HEIGHT = 43;
const CONDITION_HEIGHT = 16;
/** Space kept between two cards: wide enough for an edge's arrow to stay visible. */
export const GAP = 24;
/** The grid the search walks, in flow pixels: the paste offset people are used to. */
const STEP = 40;
/** How far the search walks (rings of STEP): 40 rings = 1 600 px, farther than any view. */
const RINGS = 40;

/** A card's estimated size from its steps (used until React Flow has measured it). */
export function estimateSize(steps: readonly JsonObject[]): Size {
  const conditions = steps.filter((s) => typeof s.condition === "string" && s.condition !== "").length;
  return { width: CARD_WIDTH, height: HEAD_HEIGHT + ROW_HEIGHT * steps.length + CONDITION_HEIGHT * conditions };
}

/** Each card's rectangle: measured when `measured` has it, else estimated. */
export function cardRects(state: GraphState, measured?: ReadonlyMap<string, Size>): Rect[] {
  return state.nodes.map((n) => ({ ...n.position, ...(measured?.get(n.name) ?? estimateSize(n.steps.map((s) => s.fields))) }));
}

/** Whether two rectangles come closer than `gap`. */
export function overlaps(a: Rect, b: Rect, gap: number = GAP): boolean {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
}

/**
 * The offset nearest to `start` (on a grid of STEP around it, ties broken towards the right and
 * down) at which every rectangle of `placed`, moved by it, keeps clear of every one of
 * `occupied`. Returns `start` when that is free already, or when nothing within RINGS is.
 */
export function freeOffset(occupied: readonly Rect[], placed: readonly Rect[], start: Position): Position {
  const free = (o: Position) => placed.every((p) => occupied.every((q) => !overlaps({ ...p, x: p.x + o.x, y: p.y + o.y }, q)));
  if (free(start)) return start;
  const candidates: { o: Position; d: number }[] = [];
  for (let i = -RINGS; i <= RINGS; i++) {
    for (let j = -RINGS; j <= RINGS; j++) {
      if (i === 0 && j === 0) continue;
      candidates.push({ o: { x: start.x + i * STEP, y: start.y + j * STEP }, d: i * i + j * j - (i > 0 ? 0.25 : 0) - (j > 0 ? 0.125 : 0) });
    }
  }
  candidates.sort((a, b) => a.d - b.d);
  return candidates.find((c) => free(c.o))?.o ?? start;
}

/** Where a new card with `steps` asked for at `wanted` goes: there, or the nearest free spot. */
export function freeSpot(state: GraphState, wanted: Position, steps: readonly JsonObject[] = [], measured?: ReadonlyMap<string, Size>): Position {
  const rect = { x: 0, y: 0, ...estimateSize(steps) };
  return freeOffset(cardRects(state, measured), [rect], wanted);
}
