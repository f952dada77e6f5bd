/** Form fields for the properties panel. Each reports `undefined` to mean "remove the key". */
import { CloseIcon } from "../common/icons";
import { lazyComponent } from "../common/lazyChunk";
import { useEffect, useId, useState, type ReactNode } from "react";
import { isObject } from "../graph/manifest";
import type { Json, JsonObject } from "../graph/types";

/** Help longer than this is folded to its first sentence, with a "more" button for the rest. */
const FOLD_FROM = 90;

/** A help text's first sentence and the rest, or null when it is short enough to show whole. */
export function foldHelp(text: string): [string, string] | null {
  if (text.length <= FOLD_FROM) return null;
  const m = /[.;](\s+)/g;
  for (let hit = m.exec(text); hit; hit = m.exec(text)) {
    const end = hit.index + 1;
    if (end < 20) continue;
    return text.length - end < 20 ? null : [text.slice(0, end), text.slice(end + hit[1].length)];
  }
  return null;
}

/** A field's help: whole when short; else its first sentence and "more" (the rest on demand). */
export function HelpText({ help, id }: { help: ReactNode; id?: string }) {
  const [open, setOpen] = useState(false);
  const folded = typeof help === "string" ? foldHelp(help) : null;
  return (
    <div className="field-help" id={id}>
      {folded ? (
        <>
          {folded[0]}
          {open && ` ${folded[1]}`}{" "}
          <button type="button" className="link-button help-more" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? "less" : "more"}
          </button>
        </>
      ) : (
        help
      )}
    </div>
  );
}

export function Field({ label, help, error, warning, children, id }: { label: string; help?: ReactNode; error?: string | null; warning?: string | null; children: ReactNode; id: string }) {
  return (
    <div className={`field${error ? " field-has-error" : ""}`}>
      <label htmlFor={id}>{label}</label>
      {children}
      {error ? (
        <div className="field-error" id={`${id}-msg`}>
          {error}
        </div>
      ) : warning ? (
        <div className="field-warning" id={`${id}-msg`}>
          {warning}
        </div>
      ) : help ? (
        <HelpText help={help} id={`${id}-msg`} />
      ) : null}
    </div>
  );
}

export function TextField({
  label,
  value,
  onChange,
  help,
  error,
  warning,
  placeholder,
  mono,
  readOnly,
  list,
  emptyIsUnset = true,
}: {
  label: string;
  value: Json | undefined;
  onChange: (value: string | undefined) => void;
  help?: ReactNode;
  error?: string | null;
  warning?: string | null;
  placeholder?: string;
  mono?: boolean;
  readOnly?: boolean;
  list?: string[];
  emptyIsUnset?: boolean;
}) {
  const id = useId();
  const listId = `${id}-list`;
  const text = value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  return (
    <Field label={label} help={help} error={error} warning={warning} id={id}>
      <input
        id={id}
        className={`input${mono ? " mono" : ""}${error ? " input-invalid" : ""}`}
        value={text}
        placeholder={placeholder}
        readOnly={readOnly}
        spellCheck={false}
        autoComplete="off"
        list={list ? listId : undefined}
        aria-invalid={error ? true : undefined}
        aria-describedby={error || warning || help ? `${id}-msg` : undefined}
        onChange={(e) => onChange(e.target.value === "" && emptyIsUnset ? undefined : e.target.value)}
      />
      {list && (
        <datalist id={listId}>
          {list.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      )}
    </Field>
  );
}

/** An integer field; text that is not an integer is shown as an error and not applied. */
export function IntField({
  label,
  value,
  onChange,
  help,
  error,
  warning,
  min,
  readOnly,
  placeholder,
}: {
  label: string;
  value: Json | undefined;
  onChange: (value: number | undefined) => void;
  help?: ReactNode;
  error?: string | null;
  /** Shown under the field (unless there is an error): what the server warns of this field. */
  warning?: string | null;
  min?: number;
  readOnly?: boolean;
  placeholder?: string;
}) {
  const id = useId();
  const external = value === undefined || value === null ? "" : String(value);
  const [draft, setDraft] = useState(external);
  useEffect(() => {
    setDraft((d) => (d.trim() === external ? d : external));
  }, [external]);
  const trimmed = draft.trim();
  let own: string | null = null;
  if (trimmed !== "" && !/^-?\d+$/.test(trimmed)) own = "Must be a whole number.";
  else if (trimmed !== "" && min !== undefined && Number(trimmed) < min) own = `Must be at least ${min}.`;
  return (
    <Field label={label} help={help} error={own ?? error} warning={warning} id={id}>
      <input
        id={id}
        className={`input mono${own || error ? " input-invalid" : ""}`}
        inputMode="numeric"
        value={draft}
        readOnly={readOnly}
        placeholder={placeholder}
        aria-invalid={own || error ? true : undefined}
        aria-describedby={own || error || warning || help ? `${id}-msg` : undefined}
        onChange={(e) => {
          const t = e.target.value;
          setDraft(t);
          const v = t.trim();
          if (v === "") onChange(undefined);
          else if (/^-?\d+$/.test(v) && (min === undefined || Number(v) >= min)) onChange(Number(v));
        }}
      />
    </Field>
  );
}

export function SelectField({
  label,
  value,
  options,
  onChange,
  help,
  error,
  disabled,
  unsetLabel = "(not set)",
}: {
  label: string;
  value: Json | undefined;
  options: { value: string; label?: string }[];
  onChange: (value: string | undefined) => void;
  help?: ReactNode;
  error?: string | null;
  disabled?: boolean;
  unsetLabel?: string | null;
}) {
  const id = useId();
  const current = value === undefined || value === null ? "" : String(value);
  const all = options.some((o) => o.value === current) || current === "" ? options : [...options, { value: current, label: `${current} (unknown)` }];
  return (
    <Field label={label} help={help} error={error} id={id}>
      <select id={id} className={`input${error ? " input-invalid" : ""}`} value={current} disabled={disabled} onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}>
        {unsetLabel !== null && <option value="">{unsetLabel}</option>}
        {all.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label ?? o.value}
          </option>
        ))}
      </select>
    </Field>
  );
}

export function CheckField({ label, value, onChange, help, disabled }: { label: string; value: Json | undefined; onChange: (value: boolean | undefined) => void; help?: ReactNode; disabled?: boolean }) {
  const id = useId();
  return (
    <div className="field field-check">
      <label htmlFor={id} className="check-label">
        <input id={id} type="checkbox" checked={value === true} disabled={disabled} onChange={(e) => onChange(e.target.checked ? true : undefined)} />
        {label}
        {value === false && <span className="muted small"> (explicitly false)</span>}
      </label>
      {help && <HelpText help={help} />}
    </div>
  );
}

/** A string → string map (labels, annotations, nodeSelector). */
export function KeyValueField({
  label,
  value,
  onChange,
  help,
  keySuggestions,
  readOnly,
}: {
  label: string;
  value: Json | undefined;
  onChange: (value: JsonObject | undefined) => void;
  help?: ReactNode;
  keySuggestions?: string[];
  readOnly?: boolean;
}) {
  const id = useId();
  const entries: [string, string][] = isObject(value) ? Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]) : [];
  const [rows, setRows] = useState<[string, string][]>(entries);
  const key = JSON.stringify(entries);
  useEffect(() => {
    setRows((r) => (JSON.stringify(r.filter(([k]) => k !== "")) === key ? r : (JSON.parse(key) as [string, string][])));
  }, [key]);
  const commit = (next: [string, string][]) => {
    setRows(next);
    const obj: JsonObject = {};
    for (const [k, v] of next) if (k) obj[k] = v;
    onChange(Object.keys(obj).length ? obj : undefined);
  };
  const dupes = new Set(rows.map(([k]) => k).filter((k, i, all) => k && all.indexOf(k) !== i));
  return (
    <div className="field">
      <div className="field-label-row">
        <label htmlFor={`${id}-0-k`}>{label}</label>
        {!readOnly && (
          <button type="button" className="btn btn-ghost btn-tiny" onClick={() => setRows([...rows, ["", ""]])} aria-label={`Add ${label} entry`}>
            + add
          </button>
        )}
      </div>
      {rows.length === 0 && <div className="field-help">None.</div>}
      {rows.map(([k, v], i) => (
        <div className="kv-row" key={i}>
          <input
            id={`${id}-${i}-k`}
            className={`input mono${dupes.has(k) ? " input-invalid" : ""}`}
            placeholder="key"
            value={k}
            readOnly={readOnly}
            list={keySuggestions ? `${id}-keys` : undefined}
            aria-label={`${label} key ${i + 1}`}
            onChange={(e) => commit(rows.map((r, j) => (j === i ? [e.target.value, r[1]] : r)))}
          />
          <input
            className="input mono"
            placeholder="value"
            value={v}
            readOnly={readOnly}
            aria-label={`${label} value ${i + 1}`}
            onChange={(e) => commit(rows.map((r, j) => (j === i ? [r[0], e.target.value] : r)))}
          />
          {!readOnly && (
            <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove ${label} entry ${i + 1}`} onClick={() => commit(rows.filter((_, j) => j !== i))}>
              <CloseIcon />
            </button>
          )}
        </div>
      ))}
      {keySuggestions && (
        <datalist id={`${id}-keys`}>
          {keySuggestions.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      )}
      {dupes.size > 0 && <div className="field-error">Duplicate key: {[...dupes].join(", ")}</div>}
      {help && <HelpText help={help} />}
    </div>
  );
}

/**
 * Free-form YAML (or JSON) for nested structures: affinity, tolerations, resources extras. Its
 * code (with the YAML library) is loaded on first use, outside the editor's initial bundle.
 */
export const StructuredField = lazyComponent(() => import("./structuredField").then((m) => m.StructuredField), "field editor");
