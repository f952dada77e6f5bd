import type { Deployment } from "../../api";
import { liveText } from "../../deploys/targetForm";
import type { View } from "../types";

interface HeaderStatusProps {
  graphName: string;
  description?: string;
  lockedVersion: number | null;
  view: View;
  base: number | null;
  dirty: boolean;
  /** False while loading or after a failed load (no validity chip then). */
  loaded: boolean;
  checking: boolean;
  errorCount: number;
  warningCount: number;
  /** The YAML tab holds text that does not parse (its first problem), else null. */
  yamlInvalid?: { line: number; message: string } | null;
  /** The graph's live deployments: "v5 live on prod, commit 3f2a9c1". */
  live?: Deployment[];
}

const plural = (n: number, word: string) => `${n} ${word}${n > 1 ? "s" : ""}`;

/** The header's breadcrumb and status: which version the canvas shows, unsaved changes, validity. */
export function HeaderStatus({ graphName, description, lockedVersion, view, base, dirty, loaded, checking, errorCount, warningCount, yamlInvalid, live = [] }: HeaderStatusProps) {
  return (
    <>
      <span className="crumb mono" title={description || undefined}>
        {graphName}
      </span>
      {lockedVersion !== null ? (
        <span className="badge badge-readonly">v{lockedVersion} · read-only</span>
      ) : view?.kind === "version" ? (
        // The header names what the canvas shows: the viewed version, not the working copy's base.
        <span className="badge badge-readonly" title={base !== null ? `Your working copy is based on v${base}; close the view to return to it` : undefined}>
          v{view.version.number} · read-only
        </span>
      ) : view?.kind === "compare" ? (
        <span className="badge badge-readonly">
          v{view.cmp.from.number} → v{view.cmp.to.number} · read-only
        </span>
      ) : (
        base !== null && (
          <span className="badge badge-base" title="The version your working copy is based on">
            v{base}
          </span>
        )
      )}
      {dirty && (
        <span className="unsaved" role="status" title="You have unsaved changes">
          ● Unsaved changes
        </span>
      )}
      {loaded && yamlInvalid ? (
        <span className="valid-chip bad" role="status" aria-live="polite" title={`Line ${yamlInvalid.line}: ${yamlInvalid.message}`}>
          YAML invalid (line {yamlInvalid.line})
        </span>
      ) : loaded && (
        <span className={`valid-chip ${checking ? "checking" : errorCount ? "bad" : warningCount ? "warn" : "ok"}`} role="status" aria-live="polite">
          {checking && !view ? "Checking…" : errorCount ? plural(errorCount, "error") : warningCount ? plural(warningCount, "warning") : "Valid"}
          {!checking && errorCount > 0 && warningCount > 0 && ` · ${plural(warningCount, "warning")}`}
        </span>
      )}
      {live.map((d) => (
        <span key={d.id} className={`badge live-chip${d.drift ? " live-drift" : ""}`} title={d.drift ? "The file in Git was changed outside the studio" : `${d.path} on ${d.branch}`}>
          {liveText(d)}
          {d.drift ? " · changed in Git" : ""}
        </span>
      ))}
    </>
  );
}
