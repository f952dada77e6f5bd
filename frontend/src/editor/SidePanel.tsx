import type { KeyboardEvent, ReactNode } from "react";

/** The side panel tabs; the editor renders each one's content. */
export const PANEL_TABS = [
  { id: "properties", label: "Properties" },
  { id: "yaml", label: "YAML" },
  { id: "problems", label: "Problems" },
  { id: "history", label: "History" },
  { id: "run", label: "Run" },
  { id: "tests", label: "Tests" },
  { id: "load", label: "Load" },
] as const;
export type PanelTab = (typeof PANEL_TABS)[number]["id"];

interface SidePanelProps {
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  width: number;
  /** Folded away (kept mounted, so that the YAML panel and the console keep their state). */
  hidden?: boolean;
  issueCount: number;
  errorCount: number;
  /** The YAML panel, kept mounted so that its text undo history survives tab switches. */
  yaml: ReactNode;
  /** The content of another tab (rendered only while that tab is shown). */
  panel: (tab: Exclude<PanelTab, "yaml">) => ReactNode;
}

export function SidePanel({ tab, onTab, width, hidden = false, issueCount, errorCount, yaml, panel }: SidePanelProps) {
  /**
   * The WAI-ARIA tabs pattern: the tab list is one Tab stop; Left/Right (wrapping), Home and End
   * move to another tab and show its panel.
   */
  const onTabKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = PANEL_TABS.findIndex((t) => t.id === tab);
    const n = PANEL_TABS.length;
    const to = e.key === "ArrowRight" ? (at + 1) % n : e.key === "ArrowLeft" ? (at - 1 + n) % n : e.key === "Home" ? 0 : e.key === "End" ? n - 1 : null;
    if (to === null) return;
    e.preventDefault();
    const id = PANEL_TABS[to].id;
    onTab(id);
    document.getElementById(`tab-${id}`)?.focus();
  };

  return (
    <section className="side-panel" id="side-panel" aria-label="Panels" style={{ width }} hidden={hidden}>
      <div className="tabs" role="tablist" aria-label="Panels" onKeyDown={onTabKey}>
        {PANEL_TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            className={`tab${tab === t.id ? " active" : ""}`}
            onClick={() => onTab(t.id)}
          >
            {t.label}
            {t.id === "problems" && issueCount > 0 && <span className={`tab-count ${errorCount ? "bad" : "warn"}`}>{issueCount}</span>}
          </button>
        ))}
      </div>
      {PANEL_TABS.map((t) =>
        t.id === "yaml" ? (
          <div key={t.id} id="panel-yaml" role="tabpanel" aria-labelledby="tab-yaml" className="tab-panel tab-panel-yaml" hidden={tab !== "yaml"}>
            {yaml}
          </div>
        ) : (
          tab === t.id && (
            <div key={t.id} id={`panel-${t.id}`} role="tabpanel" aria-labelledby={`tab-${t.id}`} className="tab-panel">
              {panel(t.id)}
            </div>
          )
        ),
      )}
    </section>
  );
}
