import { Modal, formatTime } from "../../common/ui";
import type { Draft } from "../draft/draft";

/**
 * After loading: unsaved changes kept in this browser (a reload, a closed tab, an ended session)
 * are offered back. Restore puts them on the canvas, unsaved; Discard drops them. Closing the
 * dialog without answering keeps the draft for the next visit.
 */
export function RestoreDraftDialog({ draft, graphName, base, onRestore, onDiscard, onLater }: { draft: Draft | null; graphName: string; base: number | null; onRestore: () => void; onDiscard: () => void; onLater: () => void }) {
  const drawnOn = draft?.base ? `version ${draft.base}` : "the unsaved graph";
  const newer = draft && draft.base !== null && base !== null && draft.base !== base;
  return (
    <Modal
      open={draft !== null}
      title="Restore your unsaved changes?"
      onClose={onLater}
      footer={
        <>
          <button type="button" className="btn btn-danger" onClick={onDiscard}>
            Discard them
          </button>
          <button type="button" className="btn btn-primary" onClick={onRestore} autoFocus>
            Restore
          </button>
        </>
      }
    >
      <p>
        This browser kept changes to <strong className="mono">{graphName}</strong> that were not saved ({formatTime(draft?.savedAt)}, drawn on {drawnOn}).
      </p>
      {newer && <p>Version {base} was saved since: when you save, you can apply your changes on top of it or keep yours.</p>}
    </Modal>
  );
}
