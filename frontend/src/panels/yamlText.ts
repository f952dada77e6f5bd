/**
 * YAML text helpers for the YAML view (no DOM): manifest → text, text → manifest with
 * positioned problems, and where a node, step or issue sits in the text.
 */
import { isMap, isPair, isScalar, isSeq, parseDocument, stringify, type Document } from "yaml";
import { shapeProblems } from "../graph/manifest";
import type { Issue, JsonObject } from "../graph/types";

export interface TextProblem {
  from: number;
  to: number;
  severity: "error" | "warning";
  message: string;
}

export function manifestToYaml(manifest: JsonObject): string {
  return stringify(manifest, { lineWidth: 0, minContentWidth: 0 });
}

export type ParseResult = { ok: true; manifest: JsonObject; doc: Document } | { ok: false; problems: TextProblem[] };

/** Parses YAML text; an error or a document the canvas cannot show gives positioned problems. */
export function parseManifestText(text: string): ParseResult {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    return { ok: false, problems: doc.errors.map((e) => syntaxProblem(text, e.pos[0], e.pos[1], e.message)) };
  }
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  const shape = shapeProblems(value ?? {});
  if (shape.length) {
    return {
      ok: false,
      problems: shape.map((p) => {
        const [from, to] = rangeOf(doc, p.path) ?? [0, Math.min(text.length, 1)];
        return { from, to, severity: "error", message: p.message };
      }),
    };
  }
  return { ok: true, manifest: (value ?? {}) as JsonObject, doc };
}

/**
 * A parse error as a problem on the line at fault. For a mis-indented line the parser points at
 * the line break that ends the line before it (and its message names that line): the problem
 * starts at the mis-indented line's first character instead. The parser's "at line N, column M"
 * is left out of the message; the YAML panel names the line the problem is on.
 */
export function syntaxProblem(text: string, from: number, to: number, message: string): TextProblem {
  let start = Math.min(Math.max(0, from), text.length);
  let end = Math.max(to, start + 1);
  if (text[start] === "\n" && start + 1 < text.length) {
    const lineEnd = text.indexOf("\n", start + 1);
    const stop = lineEnd < 0 ? text.length : lineEnd;
    let first = start + 1;
    while (first < stop && text[first] === " ") first++;
    start = first < stop ? first : start + 1;
    end = Math.max(stop, start + 1);
  }
  const head = message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
  return { from: start, to: end, severity: "error", message: head };
}

/** The line (1-based) a text position is on. */
export function lineAt(text: string, pos: number): number {
  let line = 1;
  const stop = Math.min(pos, text.length);
  for (let i = 0; i < stop; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The text range of the value (or, for a mapping key, the key) at `path`. */
export function rangeOf(doc: Document, path: (string | number)[]): [number, number] | null {
  let node: unknown = doc.contents;
  let lastKeyRange: [number, number] | null = null;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key));
      if (!pair) return lastKeyRange;
      if (isScalar(pair.key) && pair.key.range) lastKeyRange = [pair.key.range[0], pair.key.range[1]];
      node = pair.value;
    } else if (isSeq(node) && typeof key === "number") {
      const item = node.items[key] as { range?: [number, number, number] } | undefined;
      if (!item) return lastKeyRange;
      if (item.range) lastKeyRange = [item.range[0], item.range[1]];
      node = item;
    } else {
      return lastKeyRange;
    }
  }
  // A mapping key reads better than the whole value it holds.
  if (lastKeyRange) return lastKeyRange;
  const r = (node as { range?: [number, number, number] } | null)?.range;
  return r ? [r[0], r[1]] : null;
}

/** Splits an issue path like `spec.nodes.root.steps[1].weight` into keys. */
export function splitIssuePath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

function lineStart(text: string, line: number): number {
  let pos = 0;
  for (let i = 1; i < line; i++) {
    const next = text.indexOf("\n", pos);
    if (next < 0) return text.length;
    pos = next + 1;
  }
  return pos;
}

/** Places server issues in the text: by line, by path, or by node/step. */
export function issueProblems(text: string, doc: Document | null, issues: Issue[]): TextProblem[] {
  const out: TextProblem[] = [];
  for (const issue of issues) {
    let range: [number, number] | null = null;
    if (doc && issue.node) {
      const path: (string | number)[] = ["spec", "nodes", issue.node];
      if (typeof issue.step === "number") path.push("steps", issue.step);
      range = rangeOf(doc, path);
    }
    if (!range && doc && issue.path) range = rangeOf(doc, splitIssuePath(issue.path));
    if (!range && typeof issue.line === "number" && issue.line > 0) {
      const start = lineStart(text, issue.line) + Math.max(0, (issue.column ?? 1) - 1);
      const end = text.indexOf("\n", start);
      range = [start, end < 0 ? text.length : end];
    }
    if (!range) range = [0, Math.min(text.length, Math.max(1, text.indexOf("\n")))];
    out.push({ from: range[0], to: Math.max(range[1], range[0] + 1), severity: issue.severity, message: issue.message });
  }
  return out;
}
