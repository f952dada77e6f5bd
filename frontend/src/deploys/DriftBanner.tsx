/** "Changed outside the studio": the live file differs from the deployed version; its diff and Import. */
import { useState } from "react";
import type { Deployment } from "../api";
import { Spinner } from "../common/ui";
import { DiffView } from "../panels/DiffView";

export function DriftBanner({ deployment, canImport, onImport }: { deployment: Deployment; canImport: boolean; onImport: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const commit = deployment.drift_commit;
  return (
    <div className="view-banner drift-banner" role="status" aria-label="Changed outside the studio">
      <div>
        <strong>Changed outside the studio:</strong> {deployment.path} on {deployment.target} ({deployment.branch}) differs from v{deployment.version}, deployed at {deployment.commit?.slice(0, 7)}.
        {commit && (
          <span className="small">
            {" "}
            Commit {commit.commit?.slice(0, 7)} by {commit.author}: “{commit.message}”.
          </span>
        )}
      </div>
      <div className="drift-actions">
        <button type="button" className="btn btn-small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Hide the diff" : "Show the diff"}
        </button>
        {canImport && (
          <button
            type="button"
            className="btn btn-small btn-primary"
            disabled={busy}
            aria-busy={busy || undefined}
            onClick={() => {
              setBusy(true);
              void onImport().finally(() => setBusy(false));
            }}
          >
            {busy && <Spinner decorative />} Import as a new version
          </button>
        )}
      </div>
      {open && (deployment.diff ? <DiffView diff={deployment.diff} /> : <p className="small">The file no longer reads as one InferenceGraph, or it was removed.</p>)}
    </div>
  );
}
