/**
 * Undo/redo over edits. `past` keeps each applied edit with the state before it (states are
 * immutable, so this costs little); redo replays the edit with `applyEdit`. Consecutive edits
 * with the same coalesce key (typing into one field) merge into one undo step.
 */
import { applyEdit, type Edit } from "./edits";
import type { GraphState } from "./types";

export interface HistoryEntry {
  edit: Edit;
  before: GraphState;
  key?: string;
  at: number;
}

export interface History {
  state: GraphState;
  past: HistoryEntry[];
  future: Edit[];
}

/** How long two edits with the same key still merge (ms): one typing burst. */
export const COALESCE_MS = 1500;

export function createHistory(state: GraphState): History {
  return { state, past: [], future: [] };
}

/** Applies `edit`; a no-op edit leaves the history as it was (same object). */
export function pushEdit(history: History, edit: Edit, options: { key?: string; now?: number } = {}): History {
  const next = applyEdit(history.state, edit);
  if (next === history.state) return history;
  const now = options.now ?? Date.now();
  const last = history.past[history.past.length - 1];
  if (options.key && last && last.key === options.key && now - last.at < COALESCE_MS) {
    const merged: HistoryEntry = { edit: { type: "batch", edits: [last.edit, edit] }, before: last.before, key: options.key, at: now };
    return { state: next, past: [...history.past.slice(0, -1), merged], future: [] };
  }
  return { state: next, past: [...history.past, { edit, before: history.state, key: options.key, at: now }], future: [] };
}

export function canUndo(history: History): boolean {
  return history.past.length > 0;
}

export function canRedo(history: History): boolean {
  return history.future.length > 0;
}

export function undo(history: History): History {
  const last = history.past[history.past.length - 1];
  if (!last) return history;
  return { state: last.before, past: history.past.slice(0, -1), future: [last.edit, ...history.future] };
}

export function redo(history: History): History {
  const [edit, ...rest] = history.future;
  if (!edit) return history;
  const next = applyEdit(history.state, edit);
  return { state: next, past: [...history.past, { edit, before: history.state, at: 0 }], future: rest };
}

/** The edits applied since the history had `mark` past entries (for a rebase after a conflict). */
export function editsSince(history: History, mark: number): Edit[] | null {
  if (mark > history.past.length) return null;
  return history.past.slice(mark).map((e) => e.edit);
}

/**
 * Replays `edits` on `base`. Returns the new state and how many edits no longer applied
 * (their node or step is gone on the new base).
 */
export function replay(base: GraphState, edits: Edit[]): { state: GraphState; skipped: number } {
  let state = base;
  let skipped = 0;
  for (const edit of edits) {
    const next = applyEdit(state, edit);
    if (next === state) skipped++;
    state = next;
  }
  return { state, skipped };
}

/** Stops the next edit from merging into the last one (call at a save point). */
export function seal(history: History): History {
  const last = history.past[history.past.length - 1];
  if (!last || last.key === undefined) return history;
  return { ...history, past: [...history.past.slice(0, -1), { ...last, key: undefined }] };
}
