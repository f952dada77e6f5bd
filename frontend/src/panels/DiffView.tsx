/** A semantic diff (from the spec core) as a readable list; tolerant of missing parts. */
import type { Diff, FieldChange } from "../api";

/**
 * A field's value as the diff prints it; null for a field that is not set (the server's diff
 * sends `null` or leaves the side out), which is shown as "unset" rather than as `null`.
 */
export function diffValue(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

function show(v: unknown) {
  const text = diffValue(v);
  return text === null ? <em className="diff-unset">unset</em> : text;
}

function Changes({ changes }: { changes?: FieldChange[] }) {
  if (!changes?.length) return null;
  return (
    <ul className="diff-fields">
      {changes.map((c, i) => (
        <li key={i}>
          <span className="mono">{c.field}</span>: <del>{show(c.before)}</del> → <ins>{show(c.after)}</ins>
        </li>
      ))}
    </ul>
  );
}

export function diffIsEmpty(diff: Diff | null | undefined): boolean {
  if (!diff) return true;
  const n = diff.nodes;
  return !diff.metadata?.length && !diff.spec?.length && !n?.added?.length && !n?.removed?.length && !n?.changed?.length;
}

export function DiffView({ diff }: { diff: Diff | null | undefined }) {
  if (!diff || diffIsEmpty(diff)) return <p className="empty-note">{diff?.summary || "No differences."}</p>;
  const n = diff.nodes ?? {};
  return (
    <div className="diff-view">
      {diff.summary && <p className="diff-summary">{diff.summary}</p>}
      {!!diff.metadata?.length && (
        <div className="diff-block">
          <h4>Metadata</h4>
          <Changes changes={diff.metadata} />
        </div>
      )}
      {!!diff.spec?.length && (
        <div className="diff-block">
          <h4>Spec</h4>
          <Changes changes={diff.spec} />
        </div>
      )}
      {!!n.added?.length && (
        <div className="diff-block">
          <h4 className="diff-added">Added nodes</h4>
          <p className="mono">{n.added.join(", ")}</p>
        </div>
      )}
      {!!n.removed?.length && (
        <div className="diff-block">
          <h4 className="diff-removed">Removed nodes</h4>
          <p className="mono">{n.removed.join(", ")}</p>
        </div>
      )}
      {n.changed?.map((c) => (
        <div className="diff-block" key={c.node}>
          <h4 className="diff-changed">
            Changed node <span className="mono">{c.node}</span>
          </h4>
          <Changes changes={c.fields} />
          {c.steps?.added?.map((s, i) => (
            <div key={`a${i}`} className="diff-step diff-added">
              + step {s.index} {s.name ? `(${s.name})` : ""}
            </div>
          ))}
          {c.steps?.removed?.map((s, i) => (
            <div key={`r${i}`} className="diff-step diff-removed">
              − step {s.index} {s.name ? `(${s.name})` : ""}
            </div>
          ))}
          {c.steps?.moved?.map((s, i) => (
            <div key={`m${i}`} className="diff-step diff-moved">
              ↕ step {s.name ? `${s.name} ` : ""}moved {s.from} → {s.to}
            </div>
          ))}
          {c.steps?.changed?.map((s, i) => (
            <div key={`c${i}`} className="diff-step diff-changed">
              ~ step {s.index} {s.name ? `(${s.name})` : ""}
              <Changes changes={s.fields} />
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}
