/** What the server refused, with the issues not pinned to a field shown as a list under it. */
import type { CaseIssue } from "./expectations";

export function ProblemBanner({ message, issues }: { message: string; issues: readonly CaseIssue[] }) {
  return (
    <div className="error-banner" role="alert">
      <div>
        <div>{message}</div>
        {issues.length > 0 && (
          <ul>
            {issues.map((issue, j) => (
              <li key={j}>
                {issue.path ? <span className="mono">{issue.path}: </span> : null}
                {issue.line ? (
                  <span className="mono">
                    line {issue.line}
                    {issue.column ? `:${issue.column}` : ""}:{" "}
                  </span>
                ) : null}
                {issue.message}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
