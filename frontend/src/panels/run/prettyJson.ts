/**
 * JSON as people read it: indented objects, but an array of plain values (numbers, booleans,
 * null, short strings) on one line, filled up to WIDTH characters per line, rather than one
 * number per line as `JSON.stringify(v, null, 2)` prints an embedding or a tensor.
 */

/**
 * Characters per line for runs of plain values: what a console body block shows in the side
 * panel at its default 380 px (about 300 px of 11 px monospace at 6.6 px a character, measured
 * in headless Chromium). Longer lines would wrap and lose their indentation.
 */
export const WIDTH = 44;
/** A string longer than this is not "plain": it gets its own line. */
const SHORT_STRING = 24;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlain(v: unknown): boolean {
  return v === null || typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= SHORT_STRING);
}

function format(value: Json, indent: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const inner = `${indent}  `;
    if (value.every(isPlain)) {
      const items = value.map((v) => JSON.stringify(v));
      const flat = `[${items.join(", ")}]`;
      if (indent.length + flat.length <= WIDTH) return flat;
      const lines: string[] = [];
      let line = "";
      for (const item of items) {
        const next = line ? `${line}, ${item}` : item;
        if (line && inner.length + next.length + 1 > WIDTH) {
          lines.push(`${line},`);
          line = item;
        } else {
          line = next;
        }
      }
      lines.push(line);
      return `[\n${lines.map((l) => inner + l).join("\n")}\n${indent}]`;
    }
    return `[\n${value.map((v) => inner + format(v, inner)).join(",\n")}\n${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = `${indent}  `;
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${format(v, inner)}`).join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/** `value` as readable JSON text (parses back to the same value). */
export function prettyJson(value: unknown): string {
  return format(value as Json, "");
}
