import type { ReactNode } from "react";
import { Modal } from "./ui";

/**
 * A yes/no question in a modal: Cancel closes it, the confirm button runs `onConfirm`. While
 * `busy` the confirm button is disabled and reads `busyLabel` (when given).
 */
export function ConfirmDialog({
  open,
  title,
  confirmLabel,
  busyLabel,
  busy = false,
  danger = true,
  onConfirm,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  confirmLabel: string;
  busyLabel?: string;
  busy?: boolean;
  danger?: boolean;
  onConfirm: () => void;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Modal
      open={open}
      title={title}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className={`btn ${danger ? "btn-danger" : "btn-primary"}`} disabled={busy} onClick={onConfirm}>
            {busy && busyLabel ? busyLabel : confirmLabel}
          </button>
        </>
      }
    >
      {children}
    </Modal>
  );
}
