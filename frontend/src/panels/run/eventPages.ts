/**
 * Reading a run's stored events a page at a time (`GET /api/runs/{id}/events/?format=json&after=`),
 * as the console replays them: each page is handed over as it comes (the console folds it and
 * shows how far it got), and the walk follows the pages until the last one, or stops as soon as
 * the caller no longer wants it (another run was opened).
 */
import type { RunEventMsg } from "./events";

export interface EventPage {
  events: RunEventMsg[];
  /** Whether the run's terminal event is stored. */
  finished: boolean;
  /** How many events the run has stored; null when the server did not say. */
  total: number | null;
  /** Whether another page follows this one. */
  more: boolean;
}

/**
 * Reads the pages after `after` with `fetchPage(after)` and gives each to `onPage`; resolves the
 * last page read, or null when `wanted()` turned false (nothing is handed over after that).
 * A page that holds no new event ends the walk, whatever it says of more pages.
 */
export async function readEventPages(
  after: number,
  fetchPage: (after: number) => Promise<EventPage>,
  onPage: (page: EventPage) => number,
  wanted: () => boolean,
): Promise<EventPage | null> {
  let last = after;
  for (;;) {
    const page = await fetchPage(last);
    if (!wanted()) return null;
    const applied = onPage(page);
    if (!page.more || !page.events.length || applied <= last) return page;
    last = applied;
  }
}
