/** Small shared pieces: the app header, dialogs, spinners, error banners. */
import { CloseIcon } from "./icons";
import { useEffect, useRef, type ReactNode } from "react";
import { ApiError, type StudioConfig } from "../api";

/**
 * The header of every page: the brand, what the page shows (`children`), the studio's pages and
 * the user. "Graphs" is said once: in the nav, or as the list page's own title (`page="graphs"`).
 */
export function AppHeader({ config, children, page }: { config: StudioConfig; children?: ReactNode; page?: "graphs" }) {
  return (
    <header className="app-header">
      <a className="brand" href="/">
        <span className="brand-mark" aria-hidden="true">
          ◈
        </span>
        Inference Graph Studio
      </a>
      <div className="header-middle">{children}</div>
      <nav className="header-nav" aria-label="Studio">
        {page !== "graphs" && (
          <a className="btn btn-ghost btn-small" href="/">
            Graphs
          </a>
        )}
        <a className="btn btn-ghost btn-small" href="/environments/">
          Environments
        </a>
        <a className="btn btn-ghost btn-small" href="/deploy-targets/">
          Deploy targets
        </a>
        <a className="btn btn-ghost btn-small" href="/api/docs/">
          API docs
        </a>
      </nav>
      <div className="header-user">
        {config.user && <span className="user-name" title="Signed in">{config.user}</span>}
        <a className="btn btn-ghost btn-small" href="/tokens/">
          API tokens
        </a>
        <form method="post" action={config.logoutUrl} className="logout-form">
          <input type="hidden" name="csrfmiddlewaretoken" value={config.csrfToken} />
          <button type="submit" className="btn btn-ghost btn-small">
            Log out
          </button>
        </form>
      </div>
    </header>
  );
}

/** A spinner; `decorative` inside a button whose own text says what happens. */
export function Spinner({ label = "Loading", decorative }: { label?: string; decorative?: boolean }) {
  if (decorative) return <span className="spinner" aria-hidden="true" />;
  return <span className="spinner" role="status" aria-label={label} />;
}

export function ErrorBanner({ error, onDismiss }: { error: string | null; onDismiss?: () => void }) {
  if (!error) return null;
  return (
    <div className="error-banner" role="alert">
      <span>{error}</span>
      {onDismiss && (
        <button type="button" className="btn btn-ghost btn-small" onClick={onDismiss} aria-label="Dismiss error">
          <CloseIcon />
        </button>
      )}
    </div>
  );
}

/** A modal `<dialog>`; Escape or the close button calls `onClose`. */
export function Modal({
  open,
  title,
  onClose,
  children,
  footer,
  wide,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) el.showModal();
    if (!open && el.open) el.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={`modal${wide ? " modal-wide" : ""}`}
      aria-label={title}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <div className="modal-head">
            <h2>{title}</h2>
            <button type="button" className="btn btn-ghost btn-small" onClick={onClose} aria-label="Close dialog">
              <CloseIcon />
            </button>
          </div>
          <div className="modal-body">{children}</div>
          {footer && <div className="modal-foot">{footer}</div>}
        </>
      )}
    </dialog>
  );
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** An API error with its detail and first issues, for a banner or toast. */
export function describeApiError(err: unknown): string {
  if (err instanceof ApiError) {
    const head = err.body?.detail ?? err.message;
    // An issue that only repeats the detail (a taken name says it in both) is not said twice.
    const issues = err.issues
      .filter((i) => i.line || i.message !== head)
      .slice(0, 5)
      .map((i) => `${i.line ? `line ${i.line}: ` : ""}${i.message}`);
    return [head, ...issues].join(" — ");
  }
  return errorText(err);
}
