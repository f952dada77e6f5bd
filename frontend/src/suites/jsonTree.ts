/**
 * The JSON tree's pure model: the rows a collapsible, searchable tree of a JSON value shows, the
 * GJSON path of each value (the path an expectation or a Switch condition reads), and keyboard
 * moves over the rows (the WAI-ARIA tree pattern). No DOM; the component only draws the rows.
 */

export type Seg = string | number;

export interface TreeRow {
  /** Stable id of the row: its path as JSON text. */
  id: string;
  path: Seg[];
  depth: number;
  /** The key (object member) or index (array element) under its parent; null for the root. */
  key: Seg | null;
  kind: "object" | "array" | "value";
  value: unknown;
  /** Members or elements of a container; 0 for a plain value. */
  size: number;
  expanded: boolean;
  /** The search text is in its key or (for a plain value) in its JSON text. */
  match: boolean;
}

/**
 * Characters a GJSON path component needs no backslash for: GJSON's own `isSafePathKeyChar`
 * (letters, digits, `_`, `-`, `:`, and bytes outside printable ASCII). Every other printable
 * character (`.`, `*`, `?`, `#`, `@`, `|`, `!`, `=`, `<`, `>`, `%`, brackets, `\`, …) is escaped.
 */
function safe(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return /[A-Za-z0-9_:-]/.test(ch) || c <= 0x20 || c > 0x7e;
}

/** One object key as a GJSON path component (GJSON's `Escape`). */
export function escapeKey(key: string): string {
  let out = "";
  for (const ch of key) out += safe(ch) ? ch : `\\${ch}`;
  return out;
}

/**
 * The GJSON path of a value: keys escaped, array indexes as numbers, joined by dots
 * (`predictions.0.label`). The root's path is `@this`.
 */
export function gjsonPath(path: readonly Seg[]): string {
  if (path.length === 0) return "@this";
  return path.map((seg) => (typeof seg === "number" ? String(seg) : escapeKey(seg))).join(".");
}

export function rowId(path: readonly Seg[]): string {
  return JSON.stringify(path);
}

function kindOf(value: unknown): TreeRow["kind"] {
  if (Array.isArray(value)) return "array";
  if (value !== null && typeof value === "object") return "object";
  return "value";
}

function children(value: unknown): [Seg, unknown][] {
  if (Array.isArray(value)) return value.map((v, i) => [i, v]);
  if (value !== null && typeof value === "object") return Object.entries(value as Record<string, unknown>);
  return [];
}

/** Containers this big start collapsed (an embedding, a tensor, a long list of records). */
export const COLLAPSE_OVER = 20;
/** About this many rows show at first: small containers open, nearest the top first. */
export const FIRST_ROWS = 150;

/** The ids of the containers shown open at first: small ones, breadth first, within FIRST_ROWS rows. */
export function initialExpanded(value: unknown): Set<string> {
  const open = new Set<string>();
  let shown = 1;
  const queue: [unknown, Seg[]][] = [[value, []]];
  for (let at = 0; at < queue.length; at++) {
    const [v, path] = queue[at];
    const kids = children(v);
    if (kindOf(v) === "value" || kids.length === 0 || kids.length > COLLAPSE_OVER || shown + kids.length > FIRST_ROWS) continue;
    open.add(rowId(path));
    shown += kids.length;
    for (const [k, child] of kids) queue.push([child, [...path, k]]);
  }
  return open;
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The visible rows, in order. Without a query: every row under open containers. With one
 * (case-insensitive): the rows whose key or plain value contains it, and their ancestors, which
 * are shown open whatever `expanded` says.
 */
export function treeRows(value: unknown, expanded: ReadonlySet<string>, query = ""): TreeRow[] {
  const q = query.trim().toLowerCase();
  const rows: TreeRow[] = [];
  // Returns whether the subtree holds a match (only computed when searching).
  const walk = (v: unknown, path: Seg[], key: Seg | null): boolean => {
    const kind = kindOf(v);
    const kids = children(v);
    const id = rowId(path);
    const match = q !== "" && ((key !== null && String(key).toLowerCase().includes(q)) || (kind === "value" && textOf(v).toLowerCase().includes(q)));
    const row: TreeRow = { id, path, depth: path.length, key, kind, value: v, size: kids.length, expanded: kind !== "value" && expanded.has(id), match };
    if (q === "") {
      rows.push(row);
      if (row.expanded) for (const [k, child] of kids) walk(child, [...path, k], k);
      return false;
    }
    const at = rows.length;
    rows.push(row);
    let inside = false;
    for (const [k, child] of kids) if (walk(child, [...path, k], k)) inside = true;
    if (inside) row.expanded = true;
    else if (!match) {
      rows.length = at; // neither it nor anything under it matches
      return false;
    } else rows.length = at + 1; // a matching container: its children show only if they match
    return true;
  };
  walk(value, [], null);
  return rows;
}

/** A short one-line preview of a collapsed container: `[0.12, 0.5, …]`, `{label, score}`. */
export function preview(value: unknown, width = 48): string {
  const kind = kindOf(value);
  if (kind === "value") return textOf(value);
  const isArray = kind === "array";
  const parts = children(value).map(([k, v]) => (isArray ? (kindOf(v) === "value" ? JSON.stringify(v) : kindOf(v) === "array" ? "[…]" : "{…}") : String(k)));
  let text = "";
  for (let i = 0; i < parts.length; i++) {
    const next = text ? `${text}, ${parts[i]}` : parts[i];
    if (next.length > width && i > 0) {
      text += ", …";
      break;
    }
    text = next;
  }
  return isArray ? `[${text}]` : `{${text}}`;
}

export type TreeKey = "ArrowDown" | "ArrowUp" | "ArrowRight" | "ArrowLeft" | "Home" | "End";

/**
 * A key press on the focused row: where the focus goes and which container opens or closes
 * (the WAI-ARIA tree: Right opens a closed container or goes to its first child, Left closes an
 * open one or goes to the parent).
 */
export function treeMove(rows: readonly TreeRow[], focusId: string, key: TreeKey): { focus: string; toggle?: string } {
  const at = Math.max(0, rows.findIndex((r) => r.id === focusId));
  const row = rows[at];
  if (!row) return { focus: focusId };
  switch (key) {
    case "ArrowDown":
      return { focus: rows[Math.min(rows.length - 1, at + 1)].id };
    case "ArrowUp":
      return { focus: rows[Math.max(0, at - 1)].id };
    case "Home":
      return { focus: rows[0].id };
    case "End":
      return { focus: rows[rows.length - 1].id };
    case "ArrowRight":
      if (row.kind === "value" || row.size === 0) return { focus: row.id };
      if (!row.expanded) return { focus: row.id, toggle: row.id };
      return { focus: rows[at + 1]?.depth === row.depth + 1 ? rows[at + 1].id : row.id };
    case "ArrowLeft": {
      if (row.kind !== "value" && row.expanded) return { focus: row.id, toggle: row.id };
      if (row.depth === 0) return { focus: row.id };
      return { focus: rowId(row.path.slice(0, -1)) };
    }
  }
}

/** The value's text for the clipboard: strings as they are, anything else as indented JSON. */
export function copyText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
