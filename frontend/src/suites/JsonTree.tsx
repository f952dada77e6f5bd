/**
 * A JSON value as a collapsible, searchable tree: one row per value, keyboard operable (the
 * WAI-ARIA tree pattern: arrows, Home, End; Enter picks or toggles, Space toggles), with the
 * selected value's GJSON path shown and copy path / copy value buttons. With `onPick`, choosing a
 * value hands its path to the caller (the expectation editor fills a path expectation with it).
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { copyText, gjsonPath, initialExpanded, preview, rowId, treeMove, treeRows, type Seg, type TreeKey, type TreeRow } from "./jsonTree";
import "./suites.css";

/** Rows drawn at most; a bigger open tree says how many more there are (search narrows it). */
const MAX_ROWS = 2000;
const MOVE_KEYS = new Set(["ArrowDown", "ArrowUp", "ArrowRight", "ArrowLeft", "Home", "End"]);

export interface Picked {
  path: string;
  segs: Seg[];
  value: unknown;
}

function ValueText({ row }: { row: TreeRow }) {
  if (row.kind !== "value") {
    const n = row.size;
    return (
      <span className="jt-summary">
        {row.expanded ? (row.kind === "array" ? "[" : "{") : preview(row.value)}
        <span className="muted"> {row.kind === "array" ? `${n} item${n === 1 ? "" : "s"}` : `${n} key${n === 1 ? "" : "s"}`}</span>
      </span>
    );
  }
  const v = row.value;
  const type = v === null ? "null" : typeof v;
  return <span className={`jt-value jt-${type}`}>{JSON.stringify(v)}</span>;
}

export function JsonTree({
  value,
  label,
  onPick,
  pickLabel = "Use this value",
  className,
  listClassName,
}: {
  value: unknown;
  label: string;
  onPick?: (picked: Picked) => void;
  pickLabel?: string;
  className?: string;
  listClassName?: string;
}) {
  const [expanded, setExpanded] = useState<Set<string>>(() => initialExpanded(value));
  const [query, setQuery] = useState("");
  const [active, setActive] = useState<string>(rowId([]));
  const [said, setSaid] = useState("");
  const listRef = useRef<HTMLUListElement>(null);
  const focusNext = useRef(false);

  useEffect(() => {
    setExpanded(initialExpanded(value));
    setActive(rowId([]));
  }, [value]);

  const rows = useMemo(() => treeRows(value, expanded, query), [value, expanded, query]);
  const shown = rows.slice(0, MAX_ROWS);
  const activeRow = rows.find((r) => r.id === active) ?? rows[0] ?? null;

  useEffect(() => {
    if (!focusNext.current || !activeRow) return;
    focusNext.current = false;
    listRef.current?.querySelector<HTMLElement>(`[data-id="${CSS.escape(activeRow.id)}"]`)?.focus();
  }, [activeRow]);

  const toggle = (id: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const pick = (row: TreeRow) => onPick?.({ path: gjsonPath(row.path), segs: row.path, value: row.value });

  const copy = async (what: "path" | "value") => {
    if (!activeRow) return;
    const text = what === "path" ? gjsonPath(activeRow.path) : copyText(activeRow.value);
    try {
      await navigator.clipboard.writeText(text);
      setSaid(what === "path" ? `Copied the path ${gjsonPath(activeRow.path)}` : "Copied the value");
    } catch {
      setSaid("The browser did not allow copying; select the text instead.");
    }
  };

  const onKey = (e: KeyboardEvent<HTMLLIElement>, row: TreeRow) => {
    if (MOVE_KEYS.has(e.key)) {
      e.preventDefault();
      const move = treeMove(rows, row.id, e.key as TreeKey);
      if (move.toggle) toggle(move.toggle);
      focusNext.current = true;
      setActive(move.focus);
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (onPick) pick(row);
      else if (row.kind !== "value") toggle(row.id);
    } else if (e.key === " ") {
      e.preventDefault();
      if (row.kind !== "value") toggle(row.id);
    }
  };

  return (
    <div className={`json-tree${className ? ` ${className}` : ""}`}>
      <div className="jt-bar">
        <input type="search" className="input input-small jt-search" aria-label={`Search ${label}`} placeholder="Search keys and values" value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="button" className="btn btn-ghost btn-tiny" onClick={() => void copy("path")} disabled={!activeRow} title="Copy the selected value's GJSON path">
          Copy path
        </button>
        <button type="button" className="btn btn-ghost btn-tiny" onClick={() => void copy("value")} disabled={!activeRow} title="Copy the selected value">
          Copy value
        </button>
        {onPick && (
          <button type="button" className="btn btn-tiny btn-primary" onClick={() => activeRow && pick(activeRow)} disabled={!activeRow}>
            {pickLabel}
          </button>
        )}
      </div>
      <div className="jt-path small">
        {activeRow ? (
          <>
            Path <code className="mono">{gjsonPath(activeRow.path)}</code>
          </>
        ) : (
          <span className="muted">Nothing matches “{query}”.</span>
        )}
        <span className="jt-said muted" role="status">
          {said}
        </span>
      </div>
      <ul className={`jt-rows mono${listClassName ? ` ${listClassName}` : ""}`} role="tree" aria-label={label} ref={listRef}>
        {shown.map((row) => (
          <li
            key={row.id}
            data-id={row.id}
            data-path={gjsonPath(row.path)}
            role="treeitem"
            aria-level={row.depth + 1}
            aria-expanded={row.kind !== "value" && row.size > 0 ? row.expanded : undefined}
            aria-selected={activeRow?.id === row.id}
            tabIndex={activeRow?.id === row.id ? 0 : -1}
            className={`jt-row${activeRow?.id === row.id ? " active" : ""}${row.match ? " match" : ""}`}
            style={{ paddingLeft: `${4 + row.depth * 14}px` }}
            title={onPick ? `${gjsonPath(row.path)}: click to use it` : gjsonPath(row.path)}
            onClick={(e) => {
              e.stopPropagation();
              setActive(row.id);
              if (row.kind !== "value") toggle(row.id);
              else if (onPick) pick(row);
            }}
            onKeyDown={(e) => onKey(e, row)}
          >
            <span className="jt-twisty" aria-hidden="true">
              {row.kind === "value" || row.size === 0 ? "" : row.expanded ? "▾" : "▸"}
            </span>
            {row.key !== null && <span className={typeof row.key === "number" ? "jt-index" : "jt-key"}>{typeof row.key === "number" ? row.key : JSON.stringify(row.key)}: </span>}
            <ValueText row={row} />
          </li>
        ))}
      </ul>
      {rows.length > MAX_ROWS && <p className="muted small">{rows.length - MAX_ROWS} more rows; search to narrow them down.</p>}
    </div>
  );
}
