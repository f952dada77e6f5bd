/** Every issue of the working copy; activating one selects the node or step it names. */
import type { IssueFix } from "../graph/fixes";
import type { Issue } from "../graph/types";

export function issueLocation(issue: Issue): string {
  if (!issue.node) return issue.path ?? "graph";
  if (typeof issue.step === "number") return `${issue.node} › step ${issue.step}${issue.step_name ? ` (${issue.step_name})` : ""}`;
  return issue.node;
}

export function ProblemsPanel({
  issues,
  checking,
  source,
  onActivate,
  fixFor,
  onFix,
}: {
  issues: Issue[];
  checking: boolean;
  source: "server" | "local" | "none";
  onActivate: (issue: Issue) => void;
  /** The one-click fix of an issue, if any (none while the page is read-only). */
  fixFor?: (issue: Issue) => IssueFix | null;
  onFix?: (fix: IssueFix) => void;
}) {
  const sorted = [...issues].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1));
  const errors = issues.filter((i) => i.severity === "error").length;
  return (
    <div className="problems-panel">
      <div className="panel-subhead">
        <span>
          {errors} error{errors === 1 ? "" : "s"}, {issues.length - errors} warning{issues.length - errors === 1 ? "" : "s"}
        </span>
        <span className="muted small">{checking ? "Checking…" : source === "local" ? "Quick checks (server not reached)" : source === "server" ? "Checked by the server" : ""}</span>
      </div>
      {sorted.length === 0 ? (
        <p className="empty-note">No problems. KServe would accept this graph.</p>
      ) : (
        <ul className="problem-list" aria-label="Problems">
          {sorted.map((issue, i) => (
            <li
              key={i}
              className={`problem sev-${issue.severity}`}
              tabIndex={0}
              onClick={() => onActivate(issue)}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  onActivate(issue);
                }
              }}
            >
              <span className="sev-icon" aria-label={issue.severity}>
                {issue.severity === "error" ? "✕" : "!"}
              </span>
              <span className="problem-body">
                <span className="problem-message">{issue.message}</span>
                <span className="problem-where mono">
                  {issueLocation(issue)}
                  {issue.code && <span className="muted"> · {issue.code}</span>}
                </span>
              </span>
              {(() => {
                const fix = onFix ? fixFor?.(issue) : null;
                return fix ? (
                  <button
                    type="button"
                    className="btn btn-small problem-fix"
                    onClick={(e) => {
                      e.stopPropagation();
                      onFix?.(fix);
                    }}
                    onKeyDown={(e) => e.stopPropagation()}
                  >
                    {fix.label}
                  </button>
                ) : null;
              })()}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
