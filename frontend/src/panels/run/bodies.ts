/** Request and response bodies as the console shows them: pretty JSON (and its tree) when they parse, else the text. */
import type { BodyView } from "../../api";
import { prettyJson } from "./prettyJson";

export interface ShownBody {
  text: string;
  json: boolean;
  size: number;
  truncated: boolean;
  binary: boolean;
  /** The parsed value when the body is whole JSON (the console shows it as a tree). */
  value?: unknown;
}

/** A body as the console shows it: pretty JSON when it parses, else the raw text. */
export function showBody(view: BodyView | null | undefined): ShownBody | null {
  if (!view) return null;
  if (view.encoding === "base64") return { text: view.body, json: false, size: view.size, truncated: view.truncated, binary: true };
  if (!view.truncated) {
    try {
      const value: unknown = JSON.parse(view.body);
      return { text: prettyJson(value), json: true, size: view.size, truncated: false, binary: false, value };
    } catch {
      /* not JSON: shown as it is */
    }
  }
  return { text: view.body, json: false, size: view.size, truncated: view.truncated, binary: false };
}

/** The final response of a run (`GET /api/runs/{id}/`), as a body the console can show. */
export function showValue(value: unknown, size?: number | null, truncated?: boolean): ShownBody | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    const shown = showBody({ body: value, encoding: "utf-8", size: size ?? new TextEncoder().encode(value).length, truncated: !!truncated });
    return shown;
  }
  const text = prettyJson(value);
  return { text, json: true, size: size ?? new TextEncoder().encode(JSON.stringify(value)).length, truncated: !!truncated, binary: false, value };
}
