import type { ConflictBody } from "../../api";
import { Modal, formatTime } from "../../common/ui";
import { DiffView } from "../../panels/DiffView";

/** A save answered 409: what changed on the server, and the three ways on. */
export function ConflictDialog({ conflict, busy, onRebase, onKeepMine, onClose }: { conflict: ConflictBody | null; busy: boolean; onRebase: () => void; onKeepMine: () => void; onClose: () => void }) {
  const latest = conflict?.latest;
  return (
    <Modal
      open={conflict !== null}
      title="Someone saved a newer version"
      onClose={onClose}
      wide
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            Keep editing
          </button>
          <button type="button" className="btn" onClick={onKeepMine} disabled={busy} title="Save your working copy exactly as it is, on top of the latest version">
            Overwrite with mine
          </button>
          <button type="button" className="btn btn-primary" onClick={onRebase} disabled={busy}>
            {busy ? "Working…" : "Apply my edits on top"}
          </button>
        </>
      }
    >
      {conflict && (
        <>
          <p>
            {conflict.detail} The latest is <strong>version {conflict.latest_version}</strong>
            {latest && (
              <>
                {" "}
                by {latest.author ?? "unknown"}, {formatTime(latest.created_at)}
                {latest.message && <> — “{latest.message}”</>}
              </>
            )}
            . Nothing you typed is lost.
          </p>
          <h4>What changed on the server since your base</h4>
          <DiffView diff={conflict.diff} />
          <p className="field-help">
            <strong>Apply my edits on top</strong> loads version {conflict.latest_version} and replays your edits on it, so you can review before saving. <strong>Overwrite with mine</strong> saves your working copy as
            it is as the next version.
          </p>
        </>
      )}
    </Modal>
  );
}
