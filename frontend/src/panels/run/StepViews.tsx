/**
 * How one step call reads in the run console: its line (status, position, latency; a click
 * expands it), its details (position, target, condition, error, headers and other trace fields,
 * the request sent and the response received), and the block that shows a body.
 */
import { Fragment } from "react";
import { StatusIcon } from "../../common/icons";
import { formatMs, formatSize } from "../../graph/format";
import { showBody, type ShownBody } from "./bodies";
import type { ConsoleLine, StepLine } from "./console";
import { otherStepFields } from "./consoleViews";
import { describeSkip, SOFT_NOTE, stepPosition } from "./describe";
import { JsonTree } from "../../suites/JsonTree";
import { BodyImages } from "./RunImages";

export function BodyBlock({ label, body, meta }: { label: string; body: ShownBody | null; meta?: string }) {
  if (!body) {
    return (
      <div className="body-block">
        <div className="body-head">
          <span className="body-label">{label}</span>
          <span className="muted">none</span>
        </div>
      </div>
    );
  }
  return (
    <div className="body-block">
      <div className="body-head">
        <span className="body-label">{label}</span>
        {meta && <span className="muted">{meta}</span>}
        <span className="muted">
          {body.binary ? "binary (base64), " : body.json ? "JSON, " : "text, "}
          {formatSize(body.size)}
          {body.truncated ? " (truncated)" : ""}
        </span>
      </div>
      {body.json && !body.truncated && body.value !== undefined && <BodyImages value={body.value} label={label} />}
      {body.json && !body.truncated && body.value !== undefined ? (
        <JsonTree value={body.value} label={label} listClassName="body-text json" />
      ) : (
        <pre className={`code-block body-text${body.json ? " json" : ""}`}>{body.text || <span className="muted">(empty)</span>}</pre>
      )}
    </div>
  );
}

export function StepDetails({ line }: { line: StepLine }) {
  return (
    <div className="step-details">
      <dl className="step-facts">
        <dt>Position</dt>
        <dd className="mono">
          {line.node} › step {line.stepIndex ?? "?"}
          {line.stepName ? ` "${line.stepName}"` : ""} <span className="muted">({line.callId})</span>
        </dd>
        {line.target && (
          <>
            <dt>{line.stepKind === "node" ? "Node" : "Target"}</dt>
            <dd className="mono break">
              {line.method ? `${line.method} ` : ""}
              {line.target}
            </dd>
          </>
        )}
        {line.condition && (
          <>
            <dt>Condition</dt>
            <dd className="mono break">
              {line.condition.condition}
              {line.condition.matches !== null && <> → {line.condition.matches ? "matched" : `no match${line.condition.reason ? ` (${line.condition.reason})` : ""}`}</>}
            </dd>
          </>
        )}
        {line.status === "skipped" && (
          <>
            <dt>Skipped</dt>
            <dd>{describeSkip(line.skipReason)}</dd>
          </>
        )}
        {line.error && (
          <>
            <dt>Error</dt>
            <dd className="text-error break">{line.error}</dd>
          </>
        )}
        {line.headers.length > 0 && (
          <>
            <dt>Headers</dt>
            <dd className="mono break">
              {line.headers.map(([k, v], i) => (
                <div key={i}>
                  {k}: {v}
                </div>
              ))}
            </dd>
          </>
        )}
        {otherStepFields(line).map(([name, value]) => (
          <Fragment key={name}>
            <dt className="mono">{name}</dt>
            <dd className="mono break" data-trace-field={name}>
              {typeof value === "string" ? value : JSON.stringify(value)}
            </dd>
          </Fragment>
        ))}
      </dl>
      {line.status !== "skipped" && (
        <>
          <BodyBlock label="Request sent" body={showBody(line.request)} />
          {line.status !== "running" && (
            <BodyBlock label="Response received" body={showBody(line.response)} meta={[line.statusCode !== null ? `HTTP ${line.statusCode}` : null, line.contentType].filter(Boolean).join(" · ")} />
          )}
        </>
      )}
    </div>
  );
}

/** A step call's status as a mark: a spinner while it runs, else its icon (Soft failures apart). */
function StepStatusMark({ status, soft }: { status: StepLine["status"]; soft: boolean }) {
  return (
    <span className={`step-status status-${soft ? "soft-failed" : status}`} aria-label={soft ? "failed, went on (Soft)" : status}>
      {status === "running" ? <span className="spinner spinner-tiny" aria-hidden="true" /> : <StatusIcon status={soft ? "soft-failed" : status} size={13} />}
    </span>
  );
}

export function LineView({ line, current, selected, expanded, soft, onToggle }: { line: ConsoleLine; current: boolean; selected: boolean; expanded: boolean; soft: boolean; onToggle: () => void }) {
  if (line.kind === "note") {
    return (
      <li className={`console-line console-note note-${line.level}`} data-line-key={line.key}>
        {line.text}
      </li>
    );
  }
  if (line.kind === "route") {
    return (
      <li className={`console-line console-route${current ? "" : " stale"}`} data-node={line.node} data-line-key={line.key}>
        <span className="route-icon" aria-hidden="true">
          ↳
        </span>
        {line.text}
      </li>
    );
  }
  const latency = line.durationMs !== null ? formatMs(line.durationMs) : line.status === "running" ? "…" : "";
  return (
    <li
      className={`console-line console-step status-${soft ? "soft-failed" : line.status}${selected ? " selected" : ""}${current ? "" : " stale"}`}
      data-node={line.node}
      data-step={line.stepIndex ?? undefined}
      data-call-id={line.callId}
      data-line-key={line.key}
      style={{ paddingLeft: `${6 + line.depth * 14}px` }}
    >
      <button type="button" className="console-line-head" aria-expanded={expanded} onClick={onToggle} title={`${line.callId}: click to ${expanded ? "hide" : "show"} the request and response, and to select the step on the canvas`}>
        <StepStatusMark status={line.status} soft={soft} />
        <span className="step-pos">
          {stepPosition(line)}
          <span className="muted step-idx">#{line.stepIndex ?? "?"}</span>
        </span>
        {line.statusCode !== null && <span className={`http-code${line.statusCode >= 400 ? " bad" : ""}`}>{line.statusCode}</span>}
        {line.status === "skipped" && <span className="muted small">skipped</span>}
        {soft && (
          <span className="soft-tag small" title={SOFT_NOTE}>
            went on (Soft)
          </span>
        )}
        <span className="latency">{latency}</span>
      </button>
      {expanded && <StepDetails line={line} />}
    </li>
  );
}
