/** Properties of the selected step, node, or (with nothing selected) the whole graph. */
import { useEffect, useState, type ReactNode } from "react";
import type { Api, ConditionResult } from "../api";
import type { Selection } from "../graph/selection";
import type { Edit } from "../graph/edits";
import { isObject } from "../graph/manifest";
import { GRAPH_NAME_RE, incoming, issueKey, routerTypeOf, splitterWeightSum, stepTarget, stepTargets, type IssueIndex } from "../graph/queries";
import { ROUTER_TYPES, TARGET_KINDS, type GraphState, type Issue, type Json, type JsonObject, type NodeState, type TargetKind } from "../graph/types";
import { CheckField, IntField, KeyValueField, SelectField, StructuredField, TextField } from "./fields";

export type EditFn = (edit: Edit, options?: { key?: string; select?: Selection }) => void;

interface Props {
  state: GraphState;
  selection: Selection;
  issues: IssueIndex;
  readOnly: boolean;
  api: Api;
  onEdit: EditFn;
  onSelect: (s: Selection) => void;
  /** The latency budget check's warnings by the field they are pinned to (`spec.routerTimeouts.serverWrite`). */
  budgetWarnings?: Map<string, string>;
}

export function PropertiesPanel(props: Props) {
  const { state, selection } = props;
  if (selection.kind === "step") {
    const node = state.nodes.find((n) => n.name === selection.node);
    if (node && node.steps[selection.index]) return <StepProperties {...props} node={node} index={selection.index} />;
  }
  if (selection.kind === "nodes") {
    if (selection.names.length === 1) {
      const node = state.nodes.find((n) => n.name === selection.names[0]);
      if (node) return <NodeProperties {...props} node={node} />;
    } else {
      return (
        <div className="props">
          <h3 className="props-title">{selection.names.length} nodes selected</h3>
          <p className="muted">{selection.names.join(", ")}</p>
          <p className="field-help">Drag to move them together, Ctrl+C to copy, Delete to remove.</p>
          {!props.readOnly && (
            <button type="button" className="btn btn-danger-ghost" onClick={() => props.onEdit({ type: "removeNodes", names: selection.names }, { select: { kind: "none" } })}>
              Delete {selection.names.length} nodes
            </button>
          )}
        </div>
      );
    }
  }
  return <GraphProperties {...props} />;
}

function IssueList({ issues }: { issues: Issue[] | undefined }) {
  if (!issues?.length) return null;
  return (
    <ul className="props-issues">
      {issues.map((i, k) => (
        <li key={k} className={`sev-${i.severity}`}>
          <span className="sev-icon" aria-hidden="true">
            {i.severity === "error" ? "✕" : "!"}
          </span>
          {i.message}
        </li>
      ))}
    </ul>
  );
}

function Section({ title, children, defaultOpen = true }: { title: string; children: ReactNode; defaultOpen?: boolean }) {
  return (
    <details className="props-section" open={defaultOpen}>
      <summary>{title}</summary>
      <div className="props-section-body">{children}</div>
    </details>
  );
}

const ANNOTATION_KEYS = ["serving.kserve.io/deploymentMode", "serving.kserve.io/stop", "serving.kserve.io/enable-tag-routing"];

function GraphProperties({ state, readOnly, onEdit, issues, budgetWarnings }: Props) {
  const warn = (path: string) => budgetWarnings?.get(path) ?? null;
  const meta = isObject(state.doc.metadata) ? state.doc.metadata : {};
  const spec = isObject(state.doc.spec) ? state.doc.spec : {};
  const rt = isObject(spec.routerTimeouts) ? spec.routerTimeouts : {};
  const res = isObject(spec.resources) ? spec.resources : {};
  const set = (path: string[]) => (value: Json | undefined) => onEdit({ type: "setGraphField", path, value }, { key: `graph:${path.join(".")}` });
  const name = typeof meta.name === "string" ? meta.name : "";
  const nameError = name && !GRAPH_NAME_RE.test(name) ? "Must match ^[a-z]([-a-z0-9]*[a-z0-9])?$ (KServe's rule)." : null;
  const minR = typeof spec.minReplicas === "number" ? spec.minReplicas : null;
  const maxR = typeof spec.maxReplicas === "number" ? spec.maxReplicas : null;
  const replicaError = minR !== null && maxR !== null && maxR !== 0 && maxR < minR ? "maxReplicas is below minReplicas." : null;
  return (
    <div className="props">
      <h3 className="props-title">
        Graph <span className="muted mono">{name}</span>
      </h3>
      <IssueList issues={issues.graph} />
      <Section title="Metadata">
        <TextField label="Name" value={meta.name} onChange={() => undefined} readOnly mono error={nameError} help="The graph's identity; fixed when it was created." />
        <TextField label="Namespace" value={meta.namespace} onChange={set(["metadata", "namespace"])} readOnly={readOnly} mono placeholder="(the graph's namespace)" />
        <KeyValueField label="Labels" value={meta.labels} onChange={set(["metadata", "labels"])} readOnly={readOnly} />
        <KeyValueField label="Annotations" value={meta.annotations} onChange={set(["metadata", "annotations"])} readOnly={readOnly} keySuggestions={ANNOTATION_KEYS} help="serving.kserve.io/deploymentMode: Standard or Knative." />
      </Section>
      <Section title="Scaling">
        <IntField label="minReplicas" value={spec.minReplicas} onChange={set(["spec", "minReplicas"])} min={0} readOnly={readOnly} help="Default 1; 0 scales to zero." />
        <IntField label="maxReplicas" value={spec.maxReplicas} onChange={set(["spec", "maxReplicas"])} min={0} readOnly={readOnly} error={replicaError} help="0 means unlimited." />
        <IntField label="scaleTarget" value={spec.scaleTarget} onChange={set(["spec", "scaleTarget"])} readOnly={readOnly} />
        <SelectField label="scaleMetric" value={spec.scaleMetric} onChange={set(["spec", "scaleMetric"])} disabled={readOnly} options={["cpu", "memory", "concurrency", "rps"].map((v) => ({ value: v }))} />
      </Section>
      <Section title="Timeouts">
        <IntField label="timeout (s)" value={spec.timeout} onChange={set(["spec", "timeout"])} min={0} warning={warn("spec.timeout")} readOnly={readOnly} help="Knative revision timeout; ignored in Standard mode." />
        <div className="grid-2">
          <IntField label="serverRead (s)" value={rt.serverRead} onChange={set(["spec", "routerTimeouts", "serverRead"])} min={0} warning={warn("spec.routerTimeouts.serverRead")} readOnly={readOnly} placeholder="60" />
          <IntField label="serverWrite (s)" value={rt.serverWrite} onChange={set(["spec", "routerTimeouts", "serverWrite"])} min={0} warning={warn("spec.routerTimeouts.serverWrite")} readOnly={readOnly} placeholder="60" />
          <IntField label="serverIdle (s)" value={rt.serverIdle} onChange={set(["spec", "routerTimeouts", "serverIdle"])} min={0} readOnly={readOnly} placeholder="180" />
          <IntField label="serviceClient (s)" value={rt.serviceClient} onChange={set(["spec", "routerTimeouts", "serviceClient"])} min={0} warning={warn("spec.routerTimeouts.serviceClient")} readOnly={readOnly} placeholder="none" />
        </div>
      </Section>
      <Section title="Router pod" defaultOpen={false}>
        <div className="grid-2">
          <TextField label="requests.cpu" value={isObject(res.requests) ? res.requests.cpu : undefined} onChange={set(["spec", "resources", "requests", "cpu"])} readOnly={readOnly} mono placeholder="100m" />
          <TextField label="requests.memory" value={isObject(res.requests) ? res.requests.memory : undefined} onChange={set(["spec", "resources", "requests", "memory"])} readOnly={readOnly} mono placeholder="100Mi" />
          <TextField label="limits.cpu" value={isObject(res.limits) ? res.limits.cpu : undefined} onChange={set(["spec", "resources", "limits", "cpu"])} readOnly={readOnly} mono placeholder="1" />
          <TextField label="limits.memory" value={isObject(res.limits) ? res.limits.memory : undefined} onChange={set(["spec", "resources", "limits", "memory"])} readOnly={readOnly} mono placeholder="1Gi" />
        </div>
        <TextField label="serviceAccountName" value={spec.serviceAccountName} onChange={set(["spec", "serviceAccountName"])} readOnly={readOnly} mono />
        <TextField label="nodeName (Kubernetes node)" value={spec.nodeName} onChange={set(["spec", "nodeName"])} readOnly={readOnly} mono help="Pins the router pod to a cluster node; not a graph node." />
        <KeyValueField label="nodeSelector" value={spec.nodeSelector} onChange={set(["spec", "nodeSelector"])} readOnly={readOnly} />
        <StructuredField label="tolerations" value={spec.tolerations} onChange={set(["spec", "tolerations"])} expect="array" readOnly={readOnly} />
        <StructuredField label="affinity" value={spec.affinity} onChange={set(["spec", "affinity"])} expect="object" readOnly={readOnly} />
      </Section>
      <OtherFields obj={spec} known={SPEC_KNOWN} title="Other spec fields" />
    </div>
  );
}

const SPEC_KNOWN = ["nodes", "resources", "affinity", "timeout", "routerTimeouts", "minReplicas", "maxReplicas", "scaleTarget", "scaleMetric", "tolerations", "nodeSelector", "nodeName", "serviceAccountName"];
const NODE_KNOWN = ["routerType", "steps"];
const STEP_KNOWN = ["name", "nodeName", "serviceName", "serviceUrl", "data", "mapPredictionsToInstances", "weight", "condition", "dependency"];

function OtherFields({ obj, known, title }: { obj: JsonObject; known: string[]; title: string }) {
  const extra = Object.entries(obj).filter(([k]) => !known.includes(k));
  if (!extra.length) return null;
  return (
    <Section title={title}>
      <p className="field-help">Not part of the InferenceGraph schema; kept as written (edit in the YAML view). KServe prunes or rejects unknown fields.</p>
      <pre className="code-block">{JSON.stringify(Object.fromEntries(extra), null, 2)}</pre>
    </Section>
  );
}

function NodeProperties({ state, node, readOnly, onEdit, onSelect, issues }: Props & { node: NodeState }) {
  const [draftName, setDraftName] = useState(node.name);
  useEffect(() => setDraftName(node.name), [node.name]);
  const routerType = routerTypeOf(node);
  const taken = draftName !== node.name && state.nodes.some((n) => n.name === draftName);
  const nameError = !draftName ? "A node needs a name." : taken ? `A node named "${draftName}" exists.` : null;
  const commitName = () => {
    if (nameError || draftName === node.name) return;
    onEdit({ type: "renameNode", from: node.name, to: draftName }, { select: { kind: "nodes", names: [draftName] } });
  };
  const refs = incoming(state, node.name);
  const sum = splitterWeightSum(node);
  const missingWeights = node.steps.filter((s) => typeof s.fields.weight !== "number").length;
  return (
    <div className="props">
      <h3 className="props-title">
        Node <span className="mono">{node.name}</span>
        {node.name === "root" && <span className="root-marker">root</span>}
      </h3>
      <IssueList issues={issues.byNodeAll.get(node.name)} />
      <div className="field">
        <label htmlFor="node-name">Name</label>
        <input
          id="node-name"
          className={`input mono${nameError ? " input-invalid" : ""}`}
          value={draftName}
          readOnly={readOnly}
          spellCheck={false}
          aria-invalid={nameError ? true : undefined}
          onChange={(e) => setDraftName(e.target.value.trim())}
          onBlur={commitName}
          onKeyDown={(e) => {
            if (e.key === "Enter") commitName();
            if (e.key === "Escape") setDraftName(node.name);
          }}
        />
        {nameError ? (
          <div className="field-error">{nameError}</div>
        ) : (
          <div className="field-help">
            {node.name === "root" ? "The router starts at the node named root." : "Renaming updates every step that calls this node."}
            {refs.length > 0 && ` Called by ${refs.map((r) => `${r.node}[${r.index}]`).join(", ")}.`}
          </div>
        )}
      </div>
      <SelectField
        label="routerType"
        value={node.raw.routerType}
        unsetLabel="(missing)"
        disabled={readOnly}
        options={ROUTER_TYPES.map((t) => ({ value: t }))}
        error={routerType ? null : "routerType is required."}
        onChange={(v) => onEdit({ type: "setNodeField", node: node.name, field: "routerType", value: v })}
        help={ROUTER_HELP[routerType]}
      />
      {routerType === "Splitter" && (
        <div className={`weight-sum ${sum === 100 && !missingWeights ? "ok" : "bad"}`} role="status">
          Weights: {sum} / 100{missingWeights ? ` · ${missingWeights} step${missingWeights > 1 ? "s" : ""} without weight` : ""}
        </div>
      )}
      <div className="field-label-row">
        <span className="label">Steps ({node.steps.length})</span>
      </div>
      <ol className="step-list">
        {node.steps.map((s, i) => {
          const t = stepTarget(s.fields);
          const sev = issues.byStep.get(issueKey(node.name, i));
          return (
            <li key={s.id} className={sev?.length ? `sev-${sev.some((x) => x.severity === "error") ? "error" : "warning"}` : ""}>
              <button type="button" className="link-button" onClick={() => onSelect({ kind: "step", node: node.name, index: i })}>
                <span className="step-index">{i}</span> {typeof s.fields.name === "string" && s.fields.name ? s.fields.name : <em>unnamed</em>}
                <span className="muted mono small"> {t ? `${t.kind}: ${t.value}` : "no target"}</span>
              </button>
              {routerType === "Splitter" && <span className="mono small">{typeof s.fields.weight === "number" ? `${s.fields.weight}%` : "—"}</span>}
            </li>
          );
        })}
      </ol>
      {!readOnly && (
        <div className="button-row">
          {TARGET_KINDS.map((k) => (
            <button
              key={k}
              type="button"
              className="btn btn-small"
              onClick={() => {
                const existing = new Set(node.steps.map((s) => s.fields.name));
                let n = node.steps.length + 1;
                while (existing.has(`step-${n}`)) n++;
                const step: JsonObject = { name: `step-${n}`, [k]: k === "serviceUrl" ? "http://" : "" };
                if (routerType === "Splitter") step.weight = Math.max(0, 100 - sum);
                onEdit({ type: "addStep", node: node.name, step }, { select: { kind: "step", node: node.name, index: node.steps.length } });
              }}
            >
              + {TARGET_LABEL[k]}
            </button>
          ))}
        </div>
      )}
      <OtherFields obj={node.raw} known={NODE_KNOWN} title="Other node fields" />
      {!readOnly && (
        <div className="danger-zone">
          <button type="button" className="btn btn-danger-ghost" onClick={() => onEdit({ type: "removeNodes", names: [node.name] }, { select: { kind: "none" } })}>
            Delete node
          </button>
        </div>
      )}
    </div>
  );
}

const ROUTER_HELP: Record<string, string> = {
  Sequence: "Steps run in order. A condition is checked against the previous step's response; no match stops the sequence.",
  Switch: "Conditions are checked in order against the node input; the first match runs. No match: 404.",
  Ensemble: "All steps run in parallel; their JSON objects are merged under each step's name (or index).",
  Splitter: "One step is drawn by weight for each request. Weights must sum to 100.",
};

const TARGET_LABEL: Record<TargetKind, string> = { serviceName: "Service", serviceUrl: "URL", nodeName: "Node" };

function StepProperties({ state, node, index, readOnly, onEdit, onSelect, issues, api }: Props & { node: NodeState; index: number }) {
  const step = node.steps[index];
  const f = step.fields;
  const routerType = routerTypeOf(node);
  const key = (field: string) => `step:${node.name}:${step.id}:${field}`;
  const set = (field: string) => (value: Json | undefined) => onEdit({ type: "setStepField", node: node.name, index, field, value }, { key: key(field) });
  const targets = stepTargets(f);
  const target = stepTarget(f);
  const kind: TargetKind | null = target?.kind ?? null;
  const name = typeof f.name === "string" ? f.name : "";
  const dupName = name && node.steps.some((s, j) => j !== index && s.fields.name === name) ? `Another step of "${node.name}" is named "${name}".` : null;
  const otherNodes = state.nodes.map((n) => n.name);
  const sum = splitterWeightSum(node);
  const targetError =
    targets.length > 1
      ? `More than one target (${targets.join(", ")}); keep exactly one.`
      : !target || target.value === ""
        ? "The step needs a target."
        : kind === "nodeName" && !otherNodes.includes(target.value)
          ? `No node is named "${target.value}".`
          : kind === "serviceUrl" && !/^https?:\/\/[^/\s]+/.test(target.value)
            ? "Expected an http:// or https:// URL."
            : null;
  const condIgnored = routerType === "Ensemble" || routerType === "Splitter";
  return (
    <div className="props">
      <h3 className="props-title">
        Step <span className="mono">{index}</span>
        {name && <span className="mono"> · {name}</span>}
        <span className="muted small">
          {" "}
          in{" "}
          <button type="button" className="link-button mono" onClick={() => onSelect({ kind: "nodes", names: [node.name] })}>
            {node.name}
          </button>{" "}
          ({routerType || "?"})
        </span>
      </h3>
      <IssueList issues={issues.byStep.get(issueKey(node.name, index))} />
      <TextField label="name" value={f.name} onChange={set("name")} readOnly={readOnly} mono error={dupName} help={routerType === "Ensemble" ? "The key of this step's output in the merged response (else its index)." : "Optional; unique within the node."} />
      <div className="field">
        <span className="label">Target</span>
        <div className="segmented" role="radiogroup" aria-label="Target kind">
          {TARGET_KINDS.map((k) => (
            <button
              key={k}
              type="button"
              role="radio"
              aria-checked={kind === k}
              className={kind === k ? "active" : ""}
              disabled={readOnly}
              onClick={() => kind !== k && onEdit({ type: "setStepTarget", node: node.name, index, kind: k, value: k === "serviceUrl" ? "http://" : k === "nodeName" ? "" : (target?.value ?? "") })}
            >
              {TARGET_LABEL[k]}
            </button>
          ))}
        </div>
      </div>
      {kind === "nodeName" ? (
        <SelectField
          label="nodeName"
          value={f.nodeName}
          disabled={readOnly}
          unsetLabel="(choose a node)"
          options={otherNodes.map((n) => ({ value: n, label: n === node.name ? `${n} (this node: a cycle)` : n }))}
          onChange={(v) => onEdit({ type: "setStepTarget", node: node.name, index, kind: "nodeName", value: v ?? "" })}
          error={targetError}
          help="Or draw from the step's handle to a card."
        />
      ) : kind ? (
        <TextField
          label={kind}
          value={f[kind]}
          emptyIsUnset={false}
          onChange={(v) => onEdit({ type: "setStepTarget", node: node.name, index, kind, value: v ?? "" }, { key: key(kind) })}
          readOnly={readOnly}
          mono
          error={targetError}
          placeholder={kind === "serviceName" ? "my-model" : "http://host/v1/models/m:predict"}
          help={kind === "serviceName" ? "An InferenceService in the same namespace." : "Called with POST exactly as written."}
        />
      ) : (
        <div className="field-error">{targetError}</div>
      )}
      <div className="field condition-field">
        <TextField
          label="condition"
          value={f.condition}
          onChange={set("condition")}
          readOnly={readOnly}
          mono
          placeholder={routerType === "Switch" ? 'instances.#(intent=="buy")' : ""}
          warning={
            condIgnored && f.condition
              ? `${routerType} ignores conditions.`
              : routerType === "Switch" && !f.condition
                ? "A Switch step without a condition never matches."
                : typeof f.condition === "string" && f.condition.includes("&&")
                  ? "GJSON has no &&: this does not mean what it looks like."
                  : null
          }
          help={routerType === "Switch" ? "GJSON path checked against the node input." : routerType === "Sequence" ? "GJSON path checked against the previous step's response; no match stops the sequence." : "GJSON path."}
        />
        <ConditionTry api={api} condition={typeof f.condition === "string" ? f.condition : ""} />
      </div>
      <TextField
        label="data"
        value={f.data}
        onChange={set("data")}
        readOnly={readOnly}
        mono
        list={["$response", "$request"]}
        warning={f.data !== undefined && f.data !== "$response" && f.data !== "$request" ? "Only $response has an effect; anything else means the node input." : routerType !== "Sequence" && f.data === "$response" ? "$response only has an effect in a Sequence." : null}
        help={routerType === "Sequence" ? "$response: send the previous step's response instead of the node input." : "Only used by Sequence nodes."}
      />
      {(routerType === "Splitter" || f.weight !== undefined) && (
        <IntField
          label="weight"
          value={f.weight}
          onChange={set("weight")}
          readOnly={readOnly}
          error={routerType === "Splitter" ? (f.weight === undefined ? "Every Splitter step needs a weight." : sum !== 100 ? `The node's weights sum to ${sum}, not 100.` : null) : null}
          help={routerType === "Splitter" ? `Percent of requests. Node total: ${sum}/100.` : "Only used by Splitter nodes."}
        />
      )}
      <SelectField label="dependency" value={f.dependency} onChange={set("dependency")} disabled={readOnly} unsetLabel="(default: Soft)" options={[{ value: "Soft" }, { value: "Hard" }]} help="Hard: a failing step stops a Sequence / fails an Ensemble." />
      <CheckField label="mapPredictionsToInstances" value={f.mapPredictionsToInstances} onChange={set("mapPredictionsToInstances")} disabled={readOnly} help={'Sequence only: rewrite {"predictions": [...]} to {"instances": [...]} before calling.'} />
      <OtherFields obj={f} known={STEP_KNOWN} title="Other step fields" />
      {!readOnly && (
        <div className="button-row">
          <button type="button" className="btn btn-small" disabled={index === 0} onClick={() => onEdit({ type: "moveStep", node: node.name, from: index, to: index - 1 }, { select: { kind: "step", node: node.name, index: index - 1 } })}>
            Move up
          </button>
          <button
            type="button"
            className="btn btn-small"
            disabled={index >= node.steps.length - 1}
            onClick={() => onEdit({ type: "moveStep", node: node.name, from: index, to: index + 1 }, { select: { kind: "step", node: node.name, index: index + 1 } })}
          >
            Move down
          </button>
          <div className="spacer" />
          <button type="button" className="btn btn-small btn-danger-ghost" onClick={() => onEdit({ type: "removeStep", node: node.name, index }, { select: { kind: "nodes", names: [node.name] } })}>
            Delete step
          </button>
        </div>
      )}
    </div>
  );
}

/** "Try it": evaluates the condition on a sample JSON document with the server's GJSON. */
function ConditionTry({ api, condition }: { api: Api; condition: string }) {
  const [open, setOpen] = useState(false);
  const [doc, setDoc] = useState('{\n  "instances": [1, 2, 3]\n}');
  const [result, setResult] = useState<ConditionResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setResult(null), [condition]);
  const run = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    // Text that is not JSON is sent as a string: the server then treats it as the raw request
    // body, as KServe's router would see it.
    let parsed: unknown;
    try {
      parsed = JSON.parse(doc);
    } catch {
      parsed = doc;
    }
    try {
      setResult(await api.evaluateCondition(parsed, condition));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  if (!open) {
    return (
      <button type="button" className="btn btn-tiny btn-ghost try-toggle" onClick={() => setOpen(true)}>
        ▸ Try the condition on a sample
      </button>
    );
  }
  return (
    <div className="try-box">
      <label htmlFor="try-doc" className="label">
        Sample JSON document
      </label>
      <textarea id="try-doc" className="input mono textarea" rows={4} value={doc} spellCheck={false} onChange={(e) => setDoc(e.target.value)} />
      <div className="button-row">
        <button type="button" className="btn btn-small" onClick={() => void run()} disabled={busy || !condition}>
          {busy ? "Evaluating…" : "Try it"}
        </button>
        <button type="button" className="btn btn-small btn-ghost" onClick={() => setOpen(false)}>
          Hide
        </button>
      </div>
      {!condition && <div className="field-help">Enter a condition first.</div>}
      {error && <div className="field-error">{error}</div>}
      {result && (
        <div className={`try-result ${result.matches ? "match" : "nomatch"}`} role="status">
          <strong>{result.matches ? "✓ Matches" : "✕ No match"}</strong>
          {result.value !== undefined && result.value !== null && <pre className="code-block">{JSON.stringify(result.value, null, 2)}</pre>}
          {result.reason && <div className="field-help">{result.reason}</div>}
        </div>
      )}
    </div>
  );
}
