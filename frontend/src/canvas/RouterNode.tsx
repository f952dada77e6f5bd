/** A router node drawn as a card: header (type, name, root marker, issues) and its ordered steps. */
import { Handle, Position, type Node, type NodeProps } from "@xyflow/react";
import { createContext, memo, useContext, useRef, useState, type DragEvent } from "react";
import { routerTypeOf, stepTarget, worstSeverity } from "../graph/queries";
import type { Issue, NodeState, StepState } from "../graph/types";
import { formatMs } from "../graph/format";
import type { NodeMark, StepMark } from "../graph/runMarks";
import { StatusIcon } from "../common/icons";
import { rowDropIndex } from "./dropPoint";
import { shorten } from "./labels";

export type Mark = "added" | "removed" | "changed" | "moved";

export interface RouterNodeData extends Record<string, unknown> {
  node: NodeState;
  isRoot: boolean;
  reachable: boolean;
  nodeIssues: Issue[];
  allIssues: Issue[];
  stepIssues: (Issue[] | undefined)[];
  selectedStep: number | null;
  existing: Set<string>;
  mark?: Mark;
  stepMarks?: (Mark | undefined)[];
  removedSteps?: { index: number; name: string }[];
  /** Marks of the run shown in the console (an overlay; never part of the graph). */
  run?: NodeMark;
  stepRuns?: (StepMark | undefined)[];
  readOnly: boolean;
}

export type RouterFlowNode = Node<RouterNodeData, "router">;

export const PALETTE_MIME = "application/x-igs-palette";
/** Beside PALETTE_MIME, a router type's own data type: unlike the data, types can be read while dragging. */
export const PALETTE_ROUTER_MIME = "application/x-igs-palette-router-";
export const STEP_MIME = "application/x-igs-step";

export interface CanvasActions {
  selectStep(node: string, index: number): void;
  /** A palette step or a dragged step dropped on a card; `index` = insert before (undefined = end). */
  dropOnNode(node: string, index: number | undefined, data: DataTransfer): void;
}

export const CanvasActionsContext = createContext<CanvasActions>({
  selectStep: () => undefined,
  dropOnNode: () => undefined,
});

const TYPE_SHORT: Record<string, string> = { Sequence: "SEQ", Switch: "SW", Ensemble: "ENS", Splitter: "SPL" };

function acceptsDrop(e: DragEvent): boolean {
  return e.dataTransfer.types.includes(PALETTE_MIME) || e.dataTransfer.types.includes(STEP_MIME);
}

function shortUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname.length > 1 ? u.pathname : ""}`;
  } catch {
    return url;
  }
}

function TargetChip({ step, existing }: { step: StepState; existing: Set<string> }) {
  const target = stepTarget(step.fields);
  const many = ["serviceName", "serviceUrl", "nodeName"].filter((k) => step.fields[k] !== undefined).length > 1;
  if (!target) return <span className="chip chip-missing">no target</span>;
  const suffix = many ? <span className="chip chip-missing" title="More than one target">+1</span> : null;
  if (target.kind === "serviceName") {
    return (
      <>
        <span className="chip chip-svc" title={`serviceName: ${target.value}`}>
          <span className="chip-kind">svc</span>
          {target.value || <em>unset</em>}
        </span>
        {suffix}
      </>
    );
  }
  if (target.kind === "serviceUrl") {
    return (
      <>
        <span className="chip chip-url" title={`serviceUrl: ${target.value}`}>
          <span className="chip-kind">url</span>
          {target.value ? shortUrl(target.value) : <em>unset</em>}
        </span>
        {suffix}
      </>
    );
  }
  const ok = existing.has(target.value);
  return (
    <>
      <span className={`chip ${ok ? "chip-node" : "chip-missing"}`} title={ok ? `nodeName: ${target.value}` : `nodeName "${target.value}" names no node`}>
        <span className="chip-kind">node</span>
        {target.value || <em>draw →</em>}
      </span>
      {suffix}
    </>
  );
}

function Badges({ step }: { step: StepState }) {
  const f = step.fields;
  const out = [];
  if (f.weight !== undefined) {
    out.push(
      <span key="w" className="badge badge-weight" title="weight">
        {String(f.weight)}%
      </span>,
    );
  }
  if (typeof f.data === "string" && f.data) {
    out.push(
      <span key="d" className={`badge badge-data${f.data === "$response" ? "" : " badge-dim"}`} title={`data: ${f.data}`}>
        {f.data === "$response" ? "$resp" : f.data.length > 8 ? `${f.data.slice(0, 7)}…` : f.data}
      </span>,
    );
  }
  if (f.dependency === "Hard" || f.dependency === "Soft") {
    out.push(
      <span key="h" className={`badge badge-dep-${f.dependency.toLowerCase()}`} title={`dependency: ${f.dependency}`}>
        {f.dependency}
      </span>,
    );
  }
  if (f.mapPredictionsToInstances === true) {
    out.push(
      <span key="m" className="badge badge-map" title="mapPredictionsToInstances: true">
        p→i
      </span>,
    );
  }
  return <>{out}</>;
}

/**
 * A step's condition printed on its row, as Node-RED labels a switch's outputs: shortened, the
 * whole text in the tooltip. Only Sequence and Switch read conditions (docs/router-semantics.md),
 * so under Ensemble and Splitter it is dimmed and says so.
 */
function ConditionLine({ condition, routerType }: { condition: string; routerType: string }) {
  const ignored = routerType === "Ensemble" || routerType === "Splitter";
  return (
    <span className={`step-cond${ignored ? " step-cond-ignored" : ""}`} title={`condition: ${condition}${ignored ? ` (ignored by ${routerType})` : ""}`}>
      <span className="step-cond-tag">if</span>
      <span className="step-cond-text">{shorten(condition)}</span>
    </span>
  );
}


/** "2 failed calls below went on (Soft)", for a badge whose own call succeeded. */
function softText(count: number): string {
  return `${count} call${count === 1 ? "" : "s"} below failed, but the graph went on (Soft dependency)`;
}

function RunNodeBadge({ run }: { run: NodeMark }) {
  const route = run.route;
  const draw = route && route.router === "Splitter" && "draw" in route ? route : null;
  return (
    <>
      {draw && (
        <span className="run-badge run-draw" title={`Splitter draw ${draw.draw} of 100 (cumulative weights ${draw.cumulative.join(", ")}) → step ${draw.chosen}`}>
          draw {draw.draw}
        </span>
      )}
      <span
        className={`run-badge run-node-${run.status}${run.softFailures ? " run-soft-below" : ""}`}
        title={
          run.status === "not-reached"
            ? "The run never reached this node"
            : `This node ${run.status === "running" ? "is running" : run.status}${run.statusCode !== null ? ` (${run.statusCode})` : ""}${run.durationMs !== null ? ` in ${formatMs(run.durationMs)}` : ""}${run.softFailures ? `; ${softText(run.softFailures)}` : ""}`
        }
      >
        <StatusIcon status={run.status} />
        {run.softFailures > 0 && ` ${run.softFailures} soft`}
        {run.durationMs !== null && ` ${formatMs(run.durationMs)}`}
      </span>
    </>
  );
}

function RunStepBadge({ mark }: { mark: StepMark }) {
  const cond = mark.condition;
  const what =
    mark.status === "not-taken" ? "not taken" : mark.status === "skipped" || mark.status === "not-reached" ? (mark.note ?? mark.status) : `${mark.status}${mark.statusCode !== null ? ` (${mark.statusCode})` : ""}${mark.durationMs !== null ? ` in ${formatMs(mark.durationMs)}` : ""}`;
  return (
    <>
      {cond && cond.matches !== null && (
        <span
          className={`run-badge run-cond ${cond.matches ? "run-cond-match" : "run-cond-nomatch"}`}
          title={`${cond.condition} → ${cond.matches ? `matched${cond.raw !== null ? ` (${cond.raw})` : ""}` : `no match${cond.reason ? ` (${cond.reason})` : ""}`}`}
        >
          {cond.matches ? "✓ match" : "✗ no match"}
        </span>
      )}
      <span
        className={`run-badge run-step-${mark.status}${mark.softBelow ? " run-soft-below" : ""}`}
        title={[what, mark.note && mark.status !== "skipped" && mark.status !== "not-reached" ? mark.note : null, mark.softBelow ? softText(mark.softBelow) : null, mark.calls > 1 ? `called ${mark.calls} times` : null].filter(Boolean).join(" · ")}
      >
        {mark.softBelow > 0 ? "!" : <StatusIcon status={mark.status} />}
        {mark.durationMs !== null && ` ${formatMs(mark.durationMs)}`}
        {mark.calls > 1 && ` ×${mark.calls}`}
      </span>
    </>
  );
}

function RouterNodeView({ data, selected }: NodeProps<RouterFlowNode>) {
  const actions = useContext(CanvasActionsContext);
  const { node, isRoot, allIssues, stepIssues, selectedStep, readOnly, mark, stepMarks, removedSteps, run, stepRuns } = data;
  const routerType = routerTypeOf(node);
  const severity = worstSeverity(allIssues);
  const [dropAt, setDropAt] = useState<number | null>(null);
  // A press on a step's connection handle starts a connection, not an HTML5 drag of the row.
  const pressOnHandle = useRef(false);

  const onRowDragOver = (e: DragEvent, index: number) => {
    if (readOnly || !acceptsDrop(e)) return;
    e.preventDefault();
    e.stopPropagation();
    const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
    setDropAt(rowDropIndex(e.clientY - rect.top, rect.height, index, node.steps.length));
    e.dataTransfer.dropEffect = e.dataTransfer.types.includes(STEP_MIME) ? "move" : "copy";
  };

  const onDrop = (e: DragEvent, index: number | undefined) => {
    if (readOnly || !acceptsDrop(e)) return;
    e.preventDefault();
    e.stopPropagation();
    setDropAt(null);
    actions.dropOnNode(node.name, index, e.dataTransfer);
  };

  const classes = ["router-card", `type-${routerType.toLowerCase() || "unknown"}`];
  if (selected) classes.push("selected");
  if (severity) classes.push(`has-${severity}`);
  if (mark) classes.push(`mark-${mark}`);
  if (!data.reachable && !isRoot) classes.push("unreachable");
  if (run) classes.push(`run-${run.status}`);
  if (dropAt !== null) classes.push("drop-target");

  return (
    <div
      className={classes.join(" ")}
      data-node={node.name}
      data-detail="full"
      onDragOver={(e) => {
        if (readOnly || !acceptsDrop(e)) return;
        e.preventDefault();
        e.stopPropagation();
        // Rows stop their own dragover, so this is the card's head, type line or foot: append.
        setDropAt(node.steps.length);
      }}
      onDragLeave={(e) => {
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as globalThis.Node | null)) setDropAt(null);
      }}
      onDrop={(e) => onDrop(e, undefined)}
    >
      <Handle type="target" position={Position.Left} id="in" className="handle-in" isConnectable={!readOnly} />
      <div className="card-head">
        <span className="type-tag" title={routerType || "routerType missing"}>
          {TYPE_SHORT[routerType] ?? (routerType ? routerType.slice(0, 3).toUpperCase() : "?")}
        </span>
        <span className="card-name" title={node.name}>
          {node.name}
        </span>
        {isRoot && (
          <span className="root-marker" title="Entry point: the router starts here">
            root
          </span>
        )}
        {mark && <span className={`mark-tag mark-tag-${mark}`}>{mark}</span>}
        {run && <RunNodeBadge run={run} />}
        {severity && (
          <span className={`issue-count issue-${severity}`} title={allIssues.map((i) => i.message).join("\n")} aria-label={`${allIssues.length} issue${allIssues.length === 1 ? "" : "s"}`}>
            {severity === "error" ? "✕" : "!"} {allIssues.length}
          </span>
        )}
      </div>
      <div className="card-type-line">{routerType || <span className="text-error">routerType missing</span>}</div>
      <ol className="steps">
        {node.steps.map((step, i) => {
          const issues = stepIssues[i];
          const sev = worstSeverity(issues);
          const stepMark = stepMarks?.[i];
          const stepRun = stepRuns?.[i];
          const name = typeof step.fields.name === "string" ? step.fields.name : "";
          return (
            <li
              key={step.id}
              className={[
                "step-row",
                "nodrag",
                selectedStep === i ? "selected" : "",
                sev ? `has-${sev}` : "",
                stepMark ? `mark-${stepMark}` : "",
                stepRun ? `run-${stepRun.status}` : "",
                dropAt === i ? "drop-before" : "",
                dropAt === i + 1 && i === node.steps.length - 1 ? "drop-after" : "",
              ].join(" ")}
              data-step={i}
              tabIndex={0}
              aria-label={`Step ${i}${name ? ` ${name}` : ""} of ${node.name}`}
              onKeyDown={(e) => {
                // Enter or Space selects the step; Up and Down go to the row above or below
                // (without this the card's own handler would move the card).
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  e.stopPropagation();
                  actions.selectStep(node.name, i);
                } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
                  e.preventDefault();
                  e.stopPropagation();
                  const row = e.currentTarget;
                  const next = e.key === "ArrowUp" ? row.previousElementSibling : row.nextElementSibling;
                  if (next instanceof HTMLElement && next.dataset.step !== undefined) next.focus();
                } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
                  e.stopPropagation();
                }
              }}
              draggable={!readOnly}
              title={issues?.map((x) => x.message).join("\n")}
              onClick={(e) => {
                e.stopPropagation();
                actions.selectStep(node.name, i);
              }}
              onPointerDown={(e) => {
                pressOnHandle.current = !!(e.target as HTMLElement).closest(".react-flow__handle");
              }}
              onDragStart={(e) => {
                e.stopPropagation();
                if (pressOnHandle.current) {
                  e.preventDefault();
                  return;
                }
                e.dataTransfer.setData(STEP_MIME, JSON.stringify({ node: node.name, index: i }));
                e.dataTransfer.effectAllowed = "move";
              }}
              onDragOver={(e) => onRowDragOver(e, i)}
              onDrop={(e) => {
                const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
                onDrop(e, rowDropIndex(e.clientY - rect.top, rect.height, i, node.steps.length));
              }}
            >
              <span className="step-index">{i}</span>
              <span className={`step-name${name ? "" : " muted"}`}>{name || "unnamed"}</span>
              <span className="step-target">
                <TargetChip step={step} existing={data.existing} />
              </span>
              {typeof step.fields.condition === "string" && step.fields.condition && (
                <ConditionLine condition={step.fields.condition} routerType={routerType} />
              )}
              <span className="step-badges">
                <Badges step={step} />
                {stepRun && <RunStepBadge mark={stepRun} />}
                {sev && <span className={`dot dot-${sev}`} aria-label={sev} />}
              </span>
              <Handle type="source" position={Position.Right} id={step.id} className="handle-step" isConnectable={!readOnly} />
            </li>
          );
        })}
        {removedSteps?.map((r) => (
          <li key={`removed-${r.index}`} className="step-row mark-removed">
            <span className="step-index">{r.index}</span>
            <span className="step-name">{r.name || "unnamed"}</span>
            <span className="step-target muted">removed</span>
          </li>
        ))}
      </ol>
      {!readOnly && (
        <div className="card-foot nodrag">
          <span>{node.steps.length === 0 ? "Drop steps here" : "Drag to connect a new step"}</span>
          <Handle type="source" position={Position.Right} id="__new" className="handle-new" title="Drag to another card: adds a step that calls it" />
        </div>
      )}
    </div>
  );
}

export const RouterNode = memo(RouterNodeView);
