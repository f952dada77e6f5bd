/** The version and environment pickers of the suite and compare sections. */
import type { Environment } from "../api";

export function VersionSelect({ id, label, value, onChange, versions, onScreen, placeholder }: { id: string; label: string; value: number | ""; onChange: (n: number | "") => void; versions: number[]; onScreen?: number | null; placeholder?: string }) {
  return (
    <div className="field">
      <label className="label" htmlFor={id}>
        {label}
      </label>
      <select id={id} className="input input-small" value={value} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : "")} disabled={!versions.length}>
        {placeholder !== undefined && <option value="">{placeholder}</option>}
        {versions.map((n) => (
          <option key={n} value={n}>
            v{n}
            {n === onScreen ? " (on screen)" : ""}
          </option>
        ))}
      </select>
    </div>
  );
}

/** "" runs each case in its own environment (else `local`). */
export function EnvironmentSelect({ id, value, onChange, environments }: { id: string; value: string; onChange: (name: string) => void; environments: Environment[] }) {
  return (
    <div className="field">
      <label className="label" htmlFor={id}>
        Environment
      </label>
      <select id={id} className="input input-small" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">each case's own</option>
        {value && !environments.some((e) => e.name === value) && <option value={value}>{value}</option>}
        {environments.map((e) => (
          <option key={e.id} value={e.name}>
            {e.name}
          </option>
        ))}
      </select>
    </div>
  );
}
