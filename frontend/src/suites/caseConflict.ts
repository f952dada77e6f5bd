/**
 * Saving a test case over someone else's change: the editor sends the revision it started from
 * (`If-Match: "r{n}"`), and a 409 `test_case.stale` answer carries the case as it is now. The
 * editor keeps the user's edit on screen and offers to save it on top of their revision or to
 * load theirs instead; nothing is dropped without the user choosing it.
 */
import { ApiError } from "../api";
import type { JsonObject } from "../graph/types";

/** The case as the server holds it now (the 409's `current`). */
export interface CurrentCase {
  id: number;
  name: string;
  description: string;
  document: JsonObject;
  revision: number;
  updated_at: string;
}

/** A refused save: the revision the edit started from, the latest one and the case at it. */
export interface CaseConflict {
  baseRevision: number | null;
  revision: number;
  current: CurrentCase;
  message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The conflict a failed save reports, or null when it failed for another reason. */
export function caseConflictOf(err: unknown): CaseConflict | null {
  if (!(err instanceof ApiError) || err.status !== 409 || !err.body) return null;
  if (!err.issues.some((issue) => issue.code === "test_case.stale")) return null;
  const { current, revision, base_revision: base, detail } = err.body;
  if (!isObject(current) || typeof revision !== "number" || !isObject(current.document)) return null;
  return {
    baseRevision: typeof base === "number" ? base : null,
    revision,
    current: current as unknown as CurrentCase,
    message: typeof detail === "string" ? detail : "Someone else changed this test case.",
  };
}
