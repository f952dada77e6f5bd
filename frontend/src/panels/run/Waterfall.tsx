/**
 * Where a run's time went: one bar per step call on a shared time axis, nested under its node,
 * parallel calls side by side, the critical path marked (a tag and a pattern, not only a colour).
 * A click on a bar picks that step (the console shows its request and response below).
 */
import { useMemo } from "react";
import type { ConsoleState, StepLine } from "./console";
import { formatMs } from "../../graph/format";
import { buildWaterfall, type WaterfallRow } from "./waterfall";

function pct(ms: number, totalMs: number): number {
  return totalMs > 0 ? (100 * ms) / totalMs : 0;
}

/** A step's name as it sits under its node: its name, else its index. */
function shortName(line: StepLine): string {
  return line.stepName ?? `step ${line.stepIndex ?? "?"}`;
}

function barLabel(row: WaterfallRow): string {
  const took = row.startMs !== null && row.endMs !== null ? formatMs(row.endMs - row.startMs) : "";
  const from = row.startMs !== null ? `, from ${formatMs(row.startMs) || "0 ms"}` : "";
  return `${row.label}: ${row.status === "running" ? "running, " : ""}${took}${from}${row.critical ? ", on the critical path" : ""}`;
}

/** Where a row's bar sits on the track, in percent: never thinner than a sliver, never past the end. */
function barStyle(row: WaterfallRow, totalMs: number): { left: string; width: string } {
  const hasBar = row.startMs !== null && row.endMs !== null;
  const left = Math.min(hasBar ? pct(row.startMs!, totalMs) : 0, 99.6);
  const width = hasBar ? Math.max(0.4, pct(row.endMs! - row.startMs!, totalMs)) : 0;
  return { left: `${left}%`, width: `${Math.min(width, 100 - left)}%` };
}

/** A row's name: a step's tagged (critical or not) short name, or its node's name. */
function RowLabel({ row }: { row: WaterfallRow }) {
  return (
    <span className="wf-label" style={{ paddingLeft: `${4 + row.depth * 10}px` }} title={`${row.label} (${row.callId})${row.critical ? ", on the critical path" : ""}`}>
      {row.kind === "step" && (
        <span className={`wf-crit-mark${row.critical ? " wf-crit-tag" : ""}`} title={row.critical ? "On the critical path: the run's end waited for this call" : undefined}>
          <span aria-hidden="true">{row.critical ? "◆" : ""}</span>
          {row.critical && <span className="visually-hidden">critical</span>}
        </span>
      )}
      <span className={row.kind === "node" ? "wf-node-name" : "wf-step-name"}>{row.kind === "step" && row.line ? shortName(row.line) : row.label}</span>
    </span>
  );
}

/** A row's bar: none yet (or skipped), a step's bar to click, or its node's span. */
function RowBar({ row, totalMs, picked, onPick }: { row: WaterfallRow; totalMs: number; picked: boolean; onPick: (line: StepLine) => void }) {
  if (row.startMs === null || row.endMs === null) return <span className="muted small wf-nobar">{row.status === "skipped" ? "skipped" : ""}</span>;
  const style = barStyle(row, totalMs);
  const line = row.kind === "step" ? row.line : undefined;
  if (!line) return <span className={`wf-bar wf-node-bar${row.critical ? " critical" : ""}`} style={style} title={barLabel(row)} />;
  return (
    <button
      type="button"
      className={`wf-bar status-${row.status}${row.critical ? " critical" : ""}${picked ? " picked" : ""}`}
      style={style}
      aria-label={barLabel(row)}
      aria-pressed={picked}
      title={`${barLabel(row)}. Click for its request and response.`}
      onClick={() => onPick(line)}
    />
  );
}

function WaterfallRowView({ row, totalMs, picked, onPick }: { row: WaterfallRow; totalMs: number; picked: boolean; onPick: (line: StepLine) => void }) {
  return (
    <li className={`wf-row wf-${row.kind}${row.critical ? " wf-critical" : ""}`} data-call-id={row.callId} data-critical={row.critical ? "true" : "false"} data-status={row.status}>
      <RowLabel row={row} />
      <span className="wf-track">
        <RowBar row={row} totalMs={totalMs} picked={picked} onPick={onPick} />
      </span>
    </li>
  );
}

export function Waterfall({ state, now, picked, onPick }: { state: ConsoleState; now: number; picked: string | null; onPick: (line: StepLine) => void }) {
  const w = useMemo(() => buildWaterfall(state, now / 1000), [state, now]);
  if (w.rows.length === 0) return <p className="empty-note waterfall-empty">No step has started yet.</p>;
  return (
    <div className="waterfall" role="group" aria-label="Waterfall: each step call on one time axis">
      <div className="wf-row wf-axis" aria-hidden="true">
        <span className="wf-label muted small">total {formatMs(w.totalMs) || "0 ms"}</span>
        <span className="wf-track">
          {w.ticks.map((t) => (
            <span key={t} className="wf-tick" style={{ left: `${pct(t, w.totalMs)}%` }}>
              {t === 0 ? "0" : formatMs(t)}
            </span>
          ))}
        </span>
      </div>
      <ol className="wf-rows">
        {w.rows.map((row) => (
          <WaterfallRowView key={row.key} row={row} totalMs={w.totalMs} picked={picked === row.key} onPick={onPick} />
        ))}
      </ol>
      {w.criticalPath.length > 0 && (
        <p className="wf-caption small">
          <span aria-hidden="true">◆</span> Critical path (what the run waited for): {w.criticalPath.join(" → ")}
        </p>
      )}
    </div>
  );
}
