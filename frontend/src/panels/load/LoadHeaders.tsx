/**
 * The Load tab's request headers: rows of name and value, sent with every request of the load
 * test (with a test case, on top of its headers). Secret ones (an Authorization, an API key) are
 * kept as a run's are: stored and shown redacted, their values kept for the worker only until the
 * load test ends.
 */
import { CloseIcon } from "../../common/icons";

interface Props {
  rows: [string, string][];
  onChange: (rows: [string, string][]) => void;
}

export function LoadHeaders({ rows, onChange }: Props) {
  const set = (i: number, which: 0 | 1, value: string) => {
    const next = rows.map((r) => [...r] as [string, string]);
    next[i][which] = value;
    onChange(next);
  };
  return (
    <fieldset className="field load-headers" aria-describedby="load-headers-help">
      <legend className="label">Headers</legend>
      {rows.map(([name, value], i) => (
        <div key={i} className="load-header-row">
          <input className="input input-small mono" aria-label={`Load header ${i + 1} name`} placeholder="Name" value={name} onChange={(e) => set(i, 0, e.target.value)} />
          <input className="input input-small mono" aria-label={`Load header ${i + 1} value`} placeholder="Value" autoComplete="off" value={value} onChange={(e) => set(i, 1, e.target.value)} />
          <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove load header ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            <CloseIcon />
          </button>
        </div>
      ))}
      <button type="button" className="btn btn-ghost btn-small" onClick={() => onChange([...rows, ["", ""]])}>
        + Add header
      </button>
      <p id="load-headers-help" className="small muted">
        Sent with every request; with a test case, on top of its headers (give a header the case keeps redacted its value here to send it). Secret ones, such as Authorization or an API key, are stored and shown redacted, and their values are kept for the workers only until the load test ends.
      </p>
    </fieldset>
  );
}
