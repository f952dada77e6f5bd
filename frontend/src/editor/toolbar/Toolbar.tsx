import { useRef, type ReactNode } from "react";
import { ExportIcon, FitIcon, HistoryIcon, ImportIcon, LayoutIcon, PanelHideIcon, PanelShowIcon, RedoIcon, RunsIcon, UndoIcon } from "../../common/icons";
import { Spinner } from "../../common/ui";
import { ViewToggle } from "../../flow/ViewToggle";
import type { CanvasView } from "../../flow/viewPref";
import type { Busy } from "../types";

interface ToolbarProps {
  readOnly: boolean;
  dirty: boolean;
  busy: Busy;
  canUndo: boolean;
  canRedo: boolean;
  onUndo: () => void;
  onRedo: () => void;
  onAutoLayout: () => void;
  /** Flow (boxes and arrows) or Nodes (router cards). */
  canvasView: CanvasView;
  onCanvasView: (view: CanvasView) => void;
  onFitView: () => void;
  onHelp: () => void;
  /** The version message typed next to Save. */
  message: string;
  onMessage: (message: string) => void;
  saving: boolean;
  onSave: () => void;
  exportOpen: boolean;
  onExportOpen: (open: boolean) => void;
  onExport: (format: "yaml" | "json") => void;
  /** Copies a curl command that downloads the export (YAML) through the API. */
  onCopyExportCurl?: () => void;
  /** Opens the deploy dialog for the exported version (absent: nothing to deploy). */
  onDeploy?: () => void;
  /** Said in the export menu (the version's test state). */
  exportNote?: ReactNode;
  /** Asked before the file picker opens; calls `pick` when the user goes on. */
  onImportStart: (pick: () => void) => void;
  onImportFile: (file: File, done: () => void) => void;
  historyActive: boolean;
  onHistory: () => void;
  onRuns: () => void;
  /** Whether the side panel is shown; the last button folds it away or back. */
  panelOpen: boolean;
  onPanelOpen: (open: boolean) => void;
}

/** The editor's toolbar: undo/redo, layout and view, save with a message, export/import, history and runs. */
export function Toolbar(p: ToolbarProps) {
  const importRef = useRef<HTMLInputElement>(null);
  return (
    <div className="toolbar" role="toolbar" aria-label="Editor">
      <div className="tool-group">
        <button type="button" className="btn btn-tool" onClick={p.onUndo} disabled={p.readOnly || !p.canUndo} title="Undo (Ctrl+Z)">
          <UndoIcon />
          <span>Undo</span>
        </button>
        <button type="button" className="btn btn-tool" onClick={p.onRedo} disabled={p.readOnly || !p.canRedo} title="Redo (Ctrl+Shift+Z)">
          <RedoIcon />
          <span>Redo</span>
        </button>
      </div>
      <div className="tool-group">
        <ViewToggle view={p.canvasView} onView={p.onCanvasView} />
      </div>
      <div className="tool-group">
        <button type="button" className="btn btn-tool" onClick={p.onAutoLayout} disabled={p.readOnly || p.busy === "layout"} title={p.canvasView === "flow" ? "Forget moved boxes: the automatic layout again (L)" : "Arrange the cards automatically (L)"}>
          <LayoutIcon />
          <span>Auto layout</span>
        </button>
        <button type="button" className="btn btn-tool" onClick={p.onFitView} title="Fit the graph in view (F)">
          <FitIcon />
          <span>Fit view</span>
        </button>
        <button type="button" className="btn btn-tool" onClick={p.onHelp} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">
          ?
        </button>
      </div>
      <div className="spacer" />
      <div className="tool-group save-group">
        <input
          className="input message-input"
          placeholder={p.dirty ? "Describe your change…" : "Version message"}
          aria-label="Version message"
          value={p.message}
          disabled={p.readOnly}
          onChange={(e) => p.onMessage(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") p.onSave();
          }}
        />
        <button type="button" className={`btn btn-primary${p.dirty ? " pulse" : ""}`} onClick={p.onSave} disabled={p.readOnly || p.saving} title="Save a new version (Ctrl+S)" aria-busy={p.saving || undefined}>
          {p.saving && <Spinner decorative />}
          <span>Save</span>
        </button>
      </div>
      <div className="tool-group">
        <div className="menu-wrap">
          <button type="button" className="btn btn-tool" aria-haspopup="menu" aria-expanded={p.exportOpen} onClick={() => p.onExportOpen(!p.exportOpen)} disabled={p.busy === "export"} title="Download the saved version as YAML or JSON">
            {p.busy === "export" ? <Spinner decorative /> : <ExportIcon />}
            <span>Export</span>
          </button>
          {p.exportOpen && (
            <div className="menu">
              {p.exportNote}
              <div role="menu" aria-label="Export format">
                <button type="button" role="menuitem" onClick={() => p.onExport("yaml")}>
                  YAML
                </button>
                <button type="button" role="menuitem" onClick={() => p.onExport("json")}>
                  JSON
                </button>
                {p.onCopyExportCurl && (
                  <button type="button" role="menuitem" onClick={p.onCopyExportCurl} title="A curl command that downloads this version as YAML through the API">
                    Copy as curl
                  </button>
                )}
                {p.onDeploy && (
                  <button type="button" role="menuitem" onClick={p.onDeploy}>
                    Deploy to Git…
                  </button>
                )}
              </div>
            </div>
          )}
        </div>
        <button type="button" className="btn btn-tool" onClick={() => p.onImportStart(() => importRef.current?.click())} disabled={p.readOnly || p.busy === "import"} title="Import a YAML or JSON file as a new version">
          {p.busy === "import" ? <Spinner decorative /> : <ImportIcon />}
          <span>Import</span>
        </button>
        <input
          ref={importRef}
          type="file"
          hidden
          accept=".yaml,.yml,.json,application/yaml,application/json,text/yaml"
          aria-label="Import file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f)
              p.onImportFile(f, () => {
                if (importRef.current) importRef.current.value = "";
              });
          }}
        />
        <button type="button" className={`btn btn-tool${p.historyActive ? " active" : ""}`} onClick={p.onHistory} title="Versions of this graph">
          <HistoryIcon />
          <span>History</span>
        </button>
        <button type="button" className="btn btn-tool" onClick={p.onRuns} title="Past test runs of this graph: replay, run again, compare">
          <RunsIcon />
          <span>Runs</span>
        </button>
        <button
          type="button"
          className="btn btn-tool btn-panel-toggle"
          onClick={() => p.onPanelOpen(!p.panelOpen)}
          aria-expanded={p.panelOpen}
          aria-controls="side-panel"
          aria-label={p.panelOpen ? "Hide the side panel" : "Show the side panel"}
          title={`${p.panelOpen ? "Hide" : "Show"} the side panel: more room for the canvas (P)`}
        >
          {p.panelOpen ? <PanelHideIcon /> : <PanelShowIcon />}
        </button>
      </div>
    </div>
  );
}
