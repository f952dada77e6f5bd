/**
 * The case editor's form, without React: a saved case's document as editable text and
 * expectation drafts, and back into the document to send (or the problems found before sending).
 */
import type { TestCaseRow } from "../api";
import type { JsonObject } from "../graph/types";
import { emptyDraft, fromDraft, toDraft, type CaseIssue, type Draft } from "./expectations";

/** The case editor's form: a case as the user edits it, its expectations as drafts. */
export interface CaseForm {
  /** The case being edited; null for a new one. */
  id: number | null;
  /** Its revision when the edit started (sent as If-Match); null for a new one. */
  revision: number | null;
  name: string;
  description: string;
  request: string;
  seed: string;
  environment: string;
  drafts: { key: number; draft: Draft }[];
}

let draftKeys = 0;

/** A key for a new expectation draft, unique in the page (React's list key: drafts are added and removed). */
export function nextDraftKey(): number {
  return ++draftKeys;
}

/** The form for a saved case (`row` and its document), or for a new one (nulls). */
export function caseForm(row: Pick<TestCaseRow, "id" | "revision"> | null, document: JsonObject | null): CaseForm {
  const doc = document ?? {};
  const exps = Array.isArray(doc.expectations) ? (doc.expectations as unknown[]) : [];
  return {
    id: row?.id ?? null,
    revision: row?.revision ?? null,
    name: typeof doc.name === "string" ? doc.name : "",
    description: typeof doc.description === "string" ? doc.description : "",
    request: JSON.stringify(doc.request ?? { payload: { instances: [{}] } }, null, 2),
    seed: typeof doc.seed === "number" ? String(doc.seed) : "",
    environment: typeof doc.environment === "string" ? doc.environment : "",
    drafts: (exps.length ? exps.map(toDraft) : [emptyDraft("status")]).map((draft) => ({ key: nextDraftKey(), draft })),
  };
}

/** The document to send, or the problems found before sending (pinned like the server's). */
export function documentOf(e: CaseForm): { document: JsonObject } | { issues: CaseIssue[] } {
  const issues: CaseIssue[] = [];
  let request: unknown;
  try {
    request = JSON.parse(e.request);
  } catch {
    issues.push({ path: "request", message: "the request is not valid JSON" });
  }
  const seed = e.seed.trim();
  if (seed && !/^-?\d+$/.test(seed)) issues.push({ path: "seed", message: "the seed is a whole number" });
  const expectations: unknown[] = [];
  e.drafts.forEach(({ draft }, i) => {
    const r = fromDraft(draft);
    if (r.ok) expectations.push(r.value);
    else issues.push({ expectation: i, field: r.field, message: r.message });
  });
  if (issues.length) return { issues };
  const document: JsonObject = { name: e.name.trim() };
  if (e.description.trim()) document.description = e.description.trim();
  document.request = request as JsonObject;
  if (seed) document.seed = Number(seed);
  if (e.environment.trim()) document.environment = e.environment.trim();
  document.expectations = expectations as JsonObject[];
  return { document };
}
