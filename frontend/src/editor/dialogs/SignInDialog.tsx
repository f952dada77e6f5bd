import { useEffect, useState, type FormEvent } from "react";
import { Modal } from "../../common/ui";

/**
 * The session ended while editing: sign in again here and the save goes on; the edit stays on
 * the canvas (and in the kept draft) whatever happens. Single sign-on works through the sign-in
 * page in a new tab, then "Save again".
 */
export function SignInDialog({ open, user, loginUrl, onSignIn, onRetry, onClose }: { open: boolean; user: string; loginUrl: string; onSignIn: (password: string) => Promise<string | null>; onRetry: () => void; onClose: () => void }) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!open) {
      setPassword("");
      setError(null);
    }
  }, [open]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!password || busy) return;
    setBusy(true);
    setError(null);
    const problem = await onSignIn(password);
    setBusy(false);
    if (problem) setError(problem);
  };

  return (
    <Modal open={open} title="Sign in again to save" onClose={onClose}>
      <form className="signin-form" onSubmit={(e) => void submit(e)}>
        <p>Your session has ended. Your changes are still here and kept in this browser; sign in and they are saved.</p>
        <label className="field">
          <span>User name</span>
          <input type="text" value={user} readOnly autoComplete="username" />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" autoFocus required />
        </label>
        {error && (
          <p className="text-error" role="alert">
            {error}
          </p>
        )}
        <div className="modal-foot">
          <a className="btn" href={loginUrl} target="_blank" rel="noopener">
            Sign in on a new tab
          </a>
          <button type="button" className="btn" onClick={onRetry}>
            Save again
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !password}>
            {busy ? "Signing in…" : "Sign in and save"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
