import { Modal } from "../../common/ui";

/**
 * Runs use saved versions: with unsaved edits the Run button asks whether to save and run them,
 * or run the last saved version (`base`) without them.
 */
export function RunConfirmDialog({ open, base, onCancel, onRunBase, onSaveAndRun }: { open: boolean; base: number | null; onCancel: () => void; onRunBase: () => void; onSaveAndRun: () => void }) {
  return (
    <Modal
      open={open}
      title="Run unsaved changes?"
      onClose={onCancel}
      footer={
        <>
          <button type="button" className="btn" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="btn" disabled={base === null} onClick={onRunBase}>
            Run last saved version
          </button>
          <button type="button" className="btn btn-primary" onClick={onSaveAndRun}>
            Save and run
          </button>
        </>
      }
    >
      <p>
        Runs use saved versions. Save your edits as a new version and run it, or run {base !== null ? <>version {base}, the last one saved,</> : "the last saved version"} without them.
      </p>
    </Modal>
  );
}
