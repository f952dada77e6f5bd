import { useState } from "react";
import { TOKEN_VARIABLE } from "./curl";

/**
 * A button that copies a shell command, and says so; when the browser refuses the clipboard the
 * command is shown in a read-only box to copy by hand.
 */
export function CopyCommandButton({ command, label, title }: { command: string; label: string; title: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" className="btn btn-small" onClick={() => void copy()} title={title}>
        {label}
      </button>
      <span role="status" className="small muted copy-command-status">
        {state === "copied" ? `Copied; it reads your API token from $${TOKEN_VARIABLE}.` : ""}
      </span>
      {state === "failed" && <textarea className="copy-command-text mono small" readOnly aria-label="curl command" value={command} onFocus={(e) => e.currentTarget.select()} />}
    </>
  );
}
