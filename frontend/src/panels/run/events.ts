/**
 * A run's events as they arrive (declared in execution/eventschema.py, typed in
 * ../../generated/events.ts): the SSE `data:` line and the JSON listing parsed into events, and
 * their loosely typed `data` read into typed values (a field of the wrong type reads as missing).
 */
import type { BodyView } from "../../api";
import { parseEvent, parseEventData, type LogEvent } from "../../common/eventLog";
import type { RunResponse } from "../../generated/events";
import type { ConditionResult, RouteDecision } from "../../graph/runMarks";

/**
 * One event as the SSE `data:` line and the JSON listing carry it (the same for every event log).
 * `type` is a string, not the generated `RunEventType`: an event the console does not know is
 * shown, not dropped.
 */
export type RunEventMsg = LogEvent;

export { parseEvent, parseEventData };

export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

export function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function nums(v: unknown): number[] {
  return Array.isArray(v) ? v.filter((x): x is number => typeof x === "number") : [];
}

function isBodyView(v: unknown): v is BodyView {
  return !!v && typeof v === "object" && typeof (v as BodyView).body === "string" && typeof (v as BodyView).size === "number";
}

export function bodyView(v: unknown): BodyView | null {
  return isBodyView(v) ? v : null;
}

export function pairs(v: unknown): [string, string][] {
  if (!Array.isArray(v)) return [];
  return v.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2 && typeof p[0] === "string" && typeof p[1] === "string");
}

export function conditionResult(v: unknown): ConditionResult | null {
  if (typeof v === "string") return { condition: v, matches: null, raw: null, reason: null };
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const condition = str(o.condition);
  if (condition === null) return null;
  return { condition, matches: typeof o.matches === "boolean" ? o.matches : null, raw: str(o.raw), reason: str(o.reason) };
}

/** A route decision from the `data` of a `route.decided` event (or a RunStep's `route`). */
export function routeDecision(d: Record<string, unknown>): RouteDecision {
  const router = str(d.router) ?? "";
  if (router === "Switch") {
    const conditions = Array.isArray(d.conditions)
      ? d.conditions
          .filter((c): c is Record<string, unknown> => !!c && typeof c === "object")
          .map((c, i) => ({ index: num(c.index) ?? i, name: str(c.name), condition: str(c.condition) ?? "", matches: c.matches === true, raw: str(c.raw), reason: str(c.reason) }))
      : [];
    return { router, validJson: d.valid_json !== false, conditions, chosen: num(d.chosen) };
  }
  if (router === "Splitter") return { router, draw: num(d.draw), weights: nums(d.weights), cumulative: nums(d.cumulative), chosen: num(d.chosen) };
  if (router === "Sequence") {
    return {
      router,
      decision: str(d.decision) ?? "",
      reason: str(d.reason) ?? "",
      stepIndex: num(d.step_index),
      condition: str(d.condition),
      matches: typeof d.matches === "boolean" ? d.matches : null,
      status: num(d.status),
      skipped: nums(d.skipped),
    };
  }
  if (router === "Ensemble") {
    return { router, decision: str(d.decision) ?? "", stepIndex: num(d.step_index), stepName: str(d.step_name), status: num(d.status), error: str(d.error), abandoned: nums(d.abandoned) };
  }
  return { router, raw: d };
}

export function runResponse(v: unknown): RunResponse | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  return {
    status_code: num(o.status_code),
    content_type: str(o.content_type),
    body: o.body,
    encoding: o.encoding === "base64" ? "base64" : "utf-8",
    size: num(o.size),
    truncated: o.truncated === true,
    ...(str(o.note) !== null ? { note: str(o.note)! } : {}),
  };
}

/** A page of the JSON listing of a run's stored events (`GET /api/runs/{id}/events/?format=json`). */
export interface EventLog {
  run: string;
  finished: boolean;
  events: RunEventMsg[];
  /** How many events the run has stored (null from a server that does not say). */
  total: number | null;
  /** Whether another page follows (a `next` link); a server without pages sends every event at once. */
  more: boolean;
}

/** Reads the JSON listing; null for anything that is not one. Events that are not events are left out. */
export function parseEventLog(value: unknown): EventLog | null {
  if (!value || typeof value !== "object") return null;
  const o = value as Record<string, unknown>;
  if (typeof o.run !== "string" || typeof o.finished !== "boolean" || !Array.isArray(o.events)) return null;
  const events = o.events.map(parseEvent).filter((e): e is RunEventMsg => e !== null);
  return { run: o.run, finished: o.finished, events, total: num(o.total), more: typeof o.next === "string" && o.next !== "" };
}
