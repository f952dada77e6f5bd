/**
 * The unsaved draft of a graph, kept in the browser's localStorage so that a reload, a closed tab
 * or an ended session does not lose it: one draft per user and graph, holding the version it was
 * drawn on (its base), the manifest and the layout. Reading is defensive: whatever else sits under
 * the key (another build, a hand edit) reads as "no draft".
 */
import type { Edit } from "../../graph/edits";
import type { JsonObject, Layout } from "../../graph/types";

export interface Draft {
  /** The version the draft was drawn on; null for a graph that had no saved version yet. */
  base: number | null;
  manifest: JsonObject;
  layout: Layout;
  /** When it was last written (ISO time). */
  savedAt: string;
  /**
   * The edits that turned the base into the draft, when known: restored as edits, a later
   * "apply my edits on top" of a newer version replays them one by one instead of overwriting.
   */
  edits?: Edit[];
}

const PREFIX = "inference-graph-studio:draft:";
/** A draft bigger than this is not kept (localStorage holds about 5 MB per site in all). */
export const MAX_DRAFT_CHARS = 1_500_000;

export function draftKey(user: string, graph: string): string {
  return `${PREFIX}${encodeURIComponent(user)}:${encodeURIComponent(graph)}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Parses what the key holds; anything that is not a draft is null. */
export function parseDraft(text: string | null): Draft | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  const { base, manifest, layout, savedAt } = value;
  if (!(base === null || (typeof base === "number" && Number.isInteger(base) && base >= 0))) return null;
  if (!isObject(manifest) || !isObject(layout) || !isObject(layout.nodes) || typeof savedAt !== "string") return null;
  const draft: Draft = { base, manifest: manifest as JsonObject, layout: layout as Layout, savedAt };
  const { edits } = value;
  if (Array.isArray(edits) && edits.every((e) => isObject(e) && typeof e.type === "string")) draft.edits = edits as unknown as Edit[];
  return draft;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage blocked (privacy settings): drafts are simply not kept
  }
}

export function readDraft(user: string, graph: string): Draft | null {
  try {
    return parseDraft(storage()?.getItem(draftKey(user, graph)) ?? null);
  } catch {
    return null;
  }
}

/** Writes the draft; false when it could not be kept (too big, storage full or blocked). */
export function writeDraft(user: string, graph: string, draft: Draft): boolean {
  const text = JSON.stringify(draft);
  if (text.length > MAX_DRAFT_CHARS) return false;
  try {
    const store = storage();
    if (!store) return false;
    store.setItem(draftKey(user, graph), text);
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(user: string, graph: string): void {
  try {
    storage()?.removeItem(draftKey(user, graph));
  } catch {
    // nothing to do: the draft could not have been written either
  }
}
