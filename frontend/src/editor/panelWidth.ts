/**
 * The side panel's width (resizable with the splitter beside it) and whether it is shown (the
 * toolbar's button or P folds it away), both remembered per user in localStorage. Pure apart from
 * the Storage the caller hands in.
 */

/** The width it had when it was fixed: still the default. */
export const DEFAULT_WIDTH = 380;
/** Narrower, the Properties fields and the console's status column no longer fit. */
export const MIN_WIDTH = 320;
/** The canvas keeps at least this much (palette 130 px + room for a 262 px card and the minimap). */
export const CANVAS_MIN = 480;
/** One arrow-key press on the splitter. */
export const KEY_STEP = 16;

type Store = Pick<Storage, "getItem" | "setItem">;

const key = (user: string) => `inference-graph-studio:side-panel-width:${user}`;

/** `width` kept between MIN_WIDTH and what leaves the canvas CANVAS_MIN of a `viewport`-wide window. */
export function clampWidth(width: number, viewport: number): number {
  const max = Math.max(MIN_WIDTH, viewport - CANVAS_MIN);
  if (!Number.isFinite(width)) return Math.min(DEFAULT_WIDTH, max);
  return Math.round(Math.min(max, Math.max(MIN_WIDTH, width)));
}

export function loadWidth(store: Store | null, user: string): number {
  try {
    const v = Number(store?.getItem(key(user)));
    return v > 0 ? v : DEFAULT_WIDTH;
  } catch {
    return DEFAULT_WIDTH;
  }
}

export function saveWidth(store: Store | null, user: string, width: number): void {
  try {
    store?.setItem(key(user), String(Math.round(width)));
  } catch {
    /* full or disabled storage: the width lasts as long as the page */
  }
}

const openKey = (user: string) => `inference-graph-studio:side-panel-open:${user}`;

/** Whether the side panel is shown: yes unless the user folded it away. */
export function loadPanelOpen(store: Store | null, user: string): boolean {
  try {
    return store?.getItem(openKey(user)) !== "false";
  } catch {
    return true;
  }
}

export function savePanelOpen(store: Store | null, user: string, open: boolean): void {
  try {
    store?.setItem(openKey(user), String(open));
  } catch {
    /* as above: the choice lasts as long as the page */
  }
}
