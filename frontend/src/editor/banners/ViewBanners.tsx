import { formatTime } from "../../common/ui";
import type { View } from "../types";
import { SuiteChip } from "../../suites/SuiteChip";

/** Over the canvas: what is shown read-only (a locked version, a viewed version, a comparison) and the way back. */
export function ViewBanners({ graphName, lockedVersion, base, view, onBack, onRollback }: { graphName: string; lockedVersion: number | null; base?: number | null; view: View; onBack: () => void; onRollback: (version: number) => void }) {
  const marks = view?.kind === "compare" ? [...view.cmp.marks.nodes.values()] : [];
  const count = (mark: string) => marks.filter((m) => m === mark).length;
  return (
    <>
      {lockedVersion !== null && (
        <div className="view-banner">
          Version {lockedVersion} is shown read-only.
          <a className="btn btn-small" href={`/graphs/${encodeURIComponent(graphName)}/`}>
            Open the latest version for editing
          </a>
        </div>
      )}
      {view?.kind === "version" && (
        <div className="view-banner">
          <span>
            Viewing <strong>version {view.version.number}</strong> (read-only) · {view.version.author ?? "unknown"} · {formatTime(view.version.created_at)}
            {view.version.message && <> · “{view.version.message}”</>}
          </span>
          <SuiteChip tests={view.version.tests} />
          <button type="button" className="btn btn-small" onClick={onBack}>
            Back to editing{base ? ` v${base}` : ""}
          </button>
          {lockedVersion === null && (
            <button type="button" className="btn btn-small" onClick={() => onRollback(view.version.number)}>
              Roll back to v{view.version.number}
            </button>
          )}
        </div>
      )}
      {view?.kind === "compare" && (
        <div className="view-banner compare-banner">
          <span>
            Comparing <strong>v{view.cmp.from.number}</strong> → <strong>v{view.cmp.to.number}</strong>:
          </span>
          <span className="legend legend-added">{count("added")} added</span>
          <span className="legend legend-removed">{count("removed")} removed</span>
          <span className="legend legend-changed">{count("changed")} changed</span>
          <button type="button" className="btn btn-small" onClick={onBack}>
            Close comparison
          </button>
        </div>
      )}
    </>
  );
}
