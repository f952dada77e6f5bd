/**
 * Level of detail of the canvases (docs/architecture.md, "Editor performance"): below a zoom
 * threshold neither view mounts its cards or edges and both draw the graph into one <canvas>
 * (LodLayer.tsx), so that a large graph fitted to the screen stays smooth to pan. Two thresholds
 * (hysteresis) keep a zoom that hovers around the limit from flipping the detail on every frame.
 */

/** Zoom below which the canvases switch to low detail: 12 px text is then 3 px on screen. */
export const LOW_DETAIL_BELOW = 0.25;
/** Zoom above which they switch back to full detail. */
export const FULL_DETAIL_ABOVE = 0.3;

/** Whether to draw low detail at `zoom`, given whether low detail is drawn now. */
export function lowDetail(zoom: number, lowNow: boolean): boolean {
  if (!Number.isFinite(zoom)) return lowNow;
  return lowNow ? zoom <= FULL_DETAIL_ABOVE : zoom < LOW_DETAIL_BELOW;
}
