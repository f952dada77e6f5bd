/** A box of the Flow view (a model, a decision, a merge, an exit…) and a group's frame. */
import { Handle, Position, type Node, type NodeProps } from "@xyflow/react";
import { createContext, memo, useContext, useId, type KeyboardEvent, type MouseEvent } from "react";
import { worstSeverity } from "../graph/queries";
import type { Issue } from "../graph/types";
import type { Mark } from "../canvas/RouterNode";
import { shorten } from "../canvas/labels";
import { StatusIcon } from "../common/icons";
import { formatMs } from "../graph/format";
import type { BoxRun } from "./marks";
import { isDirection, type Direction } from "./navigate";
import type { FlowDirection } from "./layout";
import { describeBox, type FlowBox, type FlowGroup, type InsertPoint, type StepRef } from "./project";
import type { ServiceContracts } from "../api";
import { contractBadge, contractText } from "../environments/contracts";

export interface FlowActions {
  select(box: FlowBox): void;
  /** Brings the box into view (when it gets the keyboard focus). */
  reveal(box: FlowBox): void;
  /** Moves the keyboard focus to the nearest box in an arrow key's direction. */
  focusNear(box: FlowBox, direction: Direction): void;
  /** Selects the step that calls the group's node (or the node, when no step does). */
  selectGroup(group: FlowGroup): void;
  /** Inserts a model there: one that calls `service`, or a blank one to fill in. */
  insert(at: InsertPoint, service?: string): void;
  /** The services "+" on an arrow offers (the palette's). */
  services: readonly string[];
  parallel(ref: StepRef): void;
  conditional(ref: StepRef): void;
  split(ref: StepRef): void;
  remove(ref: StepRef): void;
  move(ref: StepRef, delta: number): void;
  toggleGroup(id: string): void;
}

const noop = () => undefined;
/** Which way the flow runs: where a box's arrows come in and go out. */
export const FlowDirectionContext = createContext<FlowDirection>("LR");

export const FlowActionsContext = createContext<FlowActions>({
  select: noop,
  reveal: noop,
  focusNear: noop,
  selectGroup: noop,
  insert: noop,
  services: [],
  parallel: noop,
  conditional: noop,
  split: noop,
  remove: noop,
  move: noop,
  toggleGroup: noop,
});

export interface FlowBoxData extends Record<string, unknown> {
  box: FlowBox;
  selected: boolean;
  readOnly: boolean;
  run: BoxRun | null;
  mark?: Mark;
  issues: Issue[];
  /** The Sequence this box's step sits in, when it is one: "+ after" inserts there. */
  after: InsertPoint | null;
  /** Whether the step can move earlier / later along its chain. */
  canMove: [boolean, boolean];
  /** The group this collapsed call box stands for. */
  collapsedGroup: string | null;
  /** What Test connection learned of the box's service (its v2 inputs and outputs), if anything. */
  contract?: ServiceContracts[string] | null;
}

export type FlowBoxFlowNode = Node<FlowBoxData, "flowBox">;

export interface FlowGroupData extends Record<string, unknown> {
  group: FlowGroup;
  selected: boolean;
  mark?: Mark;
  issues: Issue[];
}

export type FlowGroupFlowNode = Node<FlowGroupData, "flowGroup">;

export interface FlowJoinData extends Record<string, unknown> {
  box: FlowBox;
}

export type FlowJoinFlowNode = Node<FlowJoinData, "flowJoin">;

const KIND_TAG: Record<string, string> = {
  request: "",
  response: "",
  step: "",
  ref: "REF",
  call: "CALL",
  switch: "SW",
  splitter: "SPL",
  merge: "ENS",
  exit: "END",
  empty: "",
  unknown: "?",
};

function IssuePin({ issues }: { issues: Issue[] }) {
  const severity = worstSeverity(issues);
  if (!severity) return null;
  return (
    <span className={`issue-count issue-${severity}`} title={issues.map((i) => i.message).join("\n")} aria-label={`${issues.length} issue${issues.length === 1 ? "" : "s"}: ${issues.map((i) => i.message).join(" ")}`}>
      {severity === "error" ? "✕" : "!"} {issues.length}
    </span>
  );
}

function FlowBoxView({ data }: NodeProps<FlowBoxFlowNode>) {
  const actions = useContext(FlowActionsContext);
  const vertical = useContext(FlowDirectionContext) === "TB";
  const descId = useId();
  const { box, selected, readOnly, run, mark, issues, after, canMove, collapsedGroup, contract } = data;
  const io = contractBadge(contract);
  const ioText = contractText(contract);
  const severity = worstSeverity(issues);
  const classes = ["flow-box", `flow-${box.kind}`];
  if (selected) classes.push("selected");
  if (severity) classes.push(`has-${severity}`);
  if (mark) classes.push(`mark-${mark}`);
  if (run) classes.push(`flow-run-${run.status}`);
  if (box.warning) classes.push("has-warning");
  const ref = box.step;
  const editable = !readOnly && ref !== null;

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== e.currentTarget) return;
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      actions.select(box);
    } else if (editable && e.altKey && (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      e.stopPropagation();
      actions.move(ref, e.key === "ArrowLeft" || e.key === "ArrowUp" ? -1 : 1);
    } else if (!e.altKey && !e.ctrlKey && !e.metaKey && !e.shiftKey && isDirection(e.key)) {
      e.preventDefault();
      e.stopPropagation();
      actions.focusNear(box, e.key);
    }
  };

  // The box's focusable body: a toggle button that selects the box.
  const bodyProps = {
    className: "flow-box-body",
    role: "button",
    tabIndex: 0,
    "aria-pressed": selected,
    onKeyDown,
    onFocus: () => actions.reveal(box),
    onClick: (e: MouseEvent) => {
      e.stopPropagation();
      actions.select(box);
    },
  } as const;

  return (
    <div className={classes.join(" ")} data-box={box.id} data-kind={box.kind} data-detail="full">
      <Handle type="target" position={vertical ? Position.Top : Position.Left} isConnectable={false} className="flow-handle" />
      <div {...bodyProps} aria-describedby={descId} title={box.warning ?? undefined}>
        <span id={descId} className="visually-hidden">
          {describeBox(box) + (ioText ? `; ${ioText}` : "") + (run ? `; run: ${run.text}` : "")}
        </span>
        <div className="flow-box-head">
          {KIND_TAG[box.kind] && <span className="flow-tag">{KIND_TAG[box.kind]}</span>}
          <span className="flow-title">{box.title}</span>
          {mark && <span className={`mark-tag mark-tag-${mark}`}>{mark}</span>}
          <IssuePin issues={issues} />
        </div>
        {box.subtitle && (
          <div className="flow-box-sub" title={box.subtitle}>
            {box.protocol && <span className={`flow-proto flow-proto-${box.protocol.toLowerCase()}`}>{box.protocol}</span>}
            <span className="flow-sub-text">{box.subtitle}</span>
          </div>
        )}
        <div className="flow-box-badges">
          {box.dependency && (
            <span className={`badge badge-dep-${box.dependency.toLowerCase()}`} title={box.dependency === "Hard" ? "Hard dependency: a failure here stops the graph" : "Soft dependency: the graph goes on after a failure here"}>
              {box.dependency}
            </span>
          )}
          {box.condition && box.kind !== "switch" && (
            <span className="badge flow-cond" title={`condition: ${box.condition}`}>
              if {shorten(box.condition, 18)}
            </span>
          )}
          {box.weight !== null && <span className="badge badge-weight">{box.weight}%</span>}
          {io && (
            <span className="badge flow-io" title={ioText ?? undefined} data-io={ioText ?? undefined}>
              {shorten(io, 22)}
            </span>
          )}
          {box.mapPredictions && (
            <span className="badge badge-map" title="mapPredictionsToInstances: the request becomes {instances: <predictions>}">
              p→i
            </span>
          )}
          {box.warning && (
            <span className="flow-warning" title={box.warning} aria-hidden="true">
              ⚠
            </span>
          )}
          {run && (
            <span className={`run-badge flow-run-badge run-step-${run.status}`} title={run.text}>
              <StatusIcon status={run.status} />
              {run.status === "soft-failed" && " soft"}
              {run.durationMs !== null && ` ${formatMs(run.durationMs)}`}
            </span>
          )}
        </div>
      </div>
      <Handle type="source" position={vertical ? Position.Bottom : Position.Right} isConnectable={false} className="flow-handle" />
      {collapsedGroup && (
        <button type="button" className="btn btn-tiny flow-expand nodrag" onClick={() => actions.toggleGroup(collapsedGroup)} aria-label={`Expand ${box.title}`}>
          ▸ expand
        </button>
      )}
      {selected && editable && (
        <div className="flow-actions nodrag" role="toolbar" aria-label={`Actions for ${box.title}`}>
          {after && (
            <button type="button" className="btn btn-tiny" onClick={() => actions.insert(after)} title="Insert a model after this one">
              + after
            </button>
          )}
          <button type="button" className="btn btn-tiny" onClick={() => actions.parallel(ref)} title="Add a model that runs in parallel (an Ensemble)">
            ‖ parallel
          </button>
          <button type="button" className="btn btn-tiny" onClick={() => actions.conditional(ref)} title="Add a branch taken on a condition (a Switch)">
            ◇ condition
          </button>
          <button type="button" className="btn btn-tiny" onClick={() => actions.split(ref)} title="Split the traffic by weight (a Splitter)">
            % split
          </button>
          <button type="button" className="btn btn-tiny" disabled={!canMove[0]} onClick={() => actions.move(ref, -1)} aria-label="Move earlier" title={`Move earlier along the chain (Alt+${vertical ? "↑" : "←"})`}>
            {vertical ? "▲" : "◀"}
          </button>
          <button type="button" className="btn btn-tiny" disabled={!canMove[1]} onClick={() => actions.move(ref, 1)} aria-label="Move later" title={`Move later along the chain (Alt+${vertical ? "↓" : "→"})`}>
            {vertical ? "▼" : "▶"}
          </button>
          <button type="button" className="btn btn-tiny btn-danger" onClick={() => actions.remove(ref)} aria-label={`Delete ${box.title}`} title="Delete this step (Delete)">
            Delete
          </button>
        </div>
      )}
    </div>
  );
}

export const FlowBoxNode = memo(FlowBoxView);

function FlowGroupView({ data }: NodeProps<FlowGroupFlowNode>) {
  const actions = useContext(FlowActionsContext);
  const { group, selected, mark, issues } = data;
  const classes = ["flow-group", `flow-group-${group.routerType.toLowerCase() || "unknown"}`];
  if (selected) classes.push("selected");
  if (mark) classes.push(`mark-${mark}`);
  if (group.warning) classes.push("has-warning");
  return (
    <div className={classes.join(" ")} data-group={group.id} data-node={group.node}>
      <div className="flow-group-head">
        <button type="button" className="btn btn-ghost btn-tiny flow-collapse nodrag" onClick={() => actions.toggleGroup(group.id)} aria-expanded={!group.collapsed} aria-label={`Collapse ${group.title}`}>
          ▾
        </button>
        <button type="button" className="flow-group-title nodrag" onClick={() => actions.selectGroup(group)} title={group.call ? "Select the step that calls this node" : "Select this node"}>
          {group.title}
        </button>
        <span className="flow-group-type">{group.routerType || "no routerType"}</span>
        <IssuePin issues={issues} />
        {group.warning && (
          <span className="flow-warning" title={group.warning} role="img" aria-label={`warning: ${group.warning}`}>
            ⚠
          </span>
        )}
      </div>
    </div>
  );
}

export const FlowGroupNode = memo(FlowGroupView);

/**
 * A join point (project.ts): where several ends meet the next fan-out. A small dot, named for
 * assistive technology; nothing to select or edit (the arrows out of it carry the "+").
 */
function FlowJoinView({ data }: NodeProps<FlowJoinFlowNode>) {
  const { box } = data;
  const vertical = useContext(FlowDirectionContext) === "TB";
  return (
    <div className="flow-join" data-box={box.id} data-kind="join" role="img" aria-label="join" title="join">
      <Handle type="target" position={vertical ? Position.Top : Position.Left} isConnectable={false} className="flow-handle" />
      <Handle type="source" position={vertical ? Position.Bottom : Position.Right} isConnectable={false} className="flow-handle" />
    </div>
  );
}

export const FlowJoinNode = memo(FlowJoinView);
