/** Read-only questions about a graph state: root, edges, reachability, issues by element. */
import { isObject } from "./manifest";
import type { GraphState, Issue, JsonObject, NodeState, StepState, TargetKind } from "./types";
import { TARGET_KINDS } from "./types";

export const ROOT = "root";

/** KServe's name rule for the graph (metadata.name); the server checks the same (`NAME_REGEX` in graphs/language/validate.py). */
export const GRAPH_NAME_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function nodeByName(state: GraphState, name: string): NodeState | undefined {
  return state.nodes.find((n) => n.name === name);
}

export function rootNode(state: GraphState): NodeState | undefined {
  return nodeByName(state, ROOT);
}

export function routerTypeOf(node: NodeState): string {
  const t = node.raw.routerType;
  return typeof t === "string" ? t : "";
}

/** The target keys a step has (normally exactly one). */
export function stepTargets(fields: JsonObject): TargetKind[] {
  return TARGET_KINDS.filter((k) => fields[k] !== undefined && fields[k] !== null);
}

export function stepTarget(fields: JsonObject): { kind: TargetKind; value: string } | null {
  const kinds = stepTargets(fields);
  if (kinds.length === 0) return null;
  const value = fields[kinds[0]];
  return { kind: kinds[0], value: typeof value === "string" ? value : String(value) };
}

export interface GraphEdge {
  id: string;
  source: string;
  sourceStep: StepState;
  stepIndex: number;
  target: string;
}

/** One edge per `nodeName` step whose target exists. */
export function edges(state: GraphState): GraphEdge[] {
  const names = new Set(state.nodes.map((n) => n.name));
  const out: GraphEdge[] = [];
  for (const node of state.nodes) {
    node.steps.forEach((step, i) => {
      const t = step.fields.nodeName;
      if (typeof t === "string" && names.has(t)) out.push({ id: `${node.name}:${step.id}`, source: node.name, sourceStep: step, stepIndex: i, target: t });
    });
  }
  return out;
}

/** Names reachable from root through nodeName steps (root included when it exists). */
export function reachable(state: GraphState, from = ROOT): Set<string> {
  const byName = new Map(state.nodes.map((n) => [n.name, n]));
  const seen = new Set<string>();
  const stack = byName.has(from) ? [from] : [];
  while (stack.length) {
    const name = stack.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const s of byName.get(name)?.steps ?? []) {
      const t = s.fields.nodeName;
      if (typeof t === "string" && byName.has(t) && !seen.has(t)) stack.push(t);
    }
  }
  return seen;
}

/**
 * Node names in the order a reader follows the graph: root first, then breadth-first through
 * `nodeName` steps in step order, then the nodes no step reaches, in manifest order. The canvas
 * lays out its cards' DOM (and so the Tab order) in this order.
 */
export function graphOrder(state: GraphState): string[] {
  const byName = new Map(state.nodes.map((n) => [n.name, n]));
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = byName.has(ROOT) ? [ROOT] : [];
  seen.add(ROOT);
  while (queue.length) {
    const name = queue.shift() as string;
    out.push(name);
    for (const s of byName.get(name)?.steps ?? []) {
      const t = s.fields.nodeName;
      if (typeof t === "string" && byName.has(t) && !seen.has(t)) {
        seen.add(t);
        queue.push(t);
      }
    }
  }
  const placed = new Set(out);
  for (const n of state.nodes) if (!placed.has(n.name)) out.push(n.name);
  return out;
}

/** Steps (node, index) whose nodeName points at `name`. */
export function incoming(state: GraphState, name: string): { node: string; index: number }[] {
  const out: { node: string; index: number }[] = [];
  for (const n of state.nodes) n.steps.forEach((s, i) => s.fields.nodeName === name && out.push({ node: n.name, index: i }));
  return out;
}

export function splitterWeightSum(node: NodeState): number {
  return node.steps.reduce((sum, s) => sum + (typeof s.fields.weight === "number" ? s.fields.weight : 0), 0);
}

export function issueKey(node: string, step?: number | null): string {
  return step === undefined || step === null ? node : `${node}#${step}`;
}

export interface IssueIndex {
  /** Issues of a node itself (no step). */
  byNode: Map<string, Issue[]>;
  /** Issues of one step, key `node#index`. */
  byStep: Map<string, Issue[]>;
  /** All issues of a node including its steps, for the card badge. */
  byNodeAll: Map<string, Issue[]>;
  graph: Issue[];
}

/** Maps issues onto the elements they name; an issue naming a missing node goes to `graph`. */
export function indexIssues(state: Pick<GraphState, "nodes">, issues: Issue[]): IssueIndex {
  const names = new Set(state.nodes.map((n) => n.name));
  const index: IssueIndex = { byNode: new Map(), byStep: new Map(), byNodeAll: new Map(), graph: [] };
  const add = (map: Map<string, Issue[]>, key: string, issue: Issue) => {
    const list = map.get(key);
    if (list) list.push(issue);
    else map.set(key, [issue]);
  };
  for (const issue of issues) {
    if (!issue.node || !names.has(issue.node)) {
      index.graph.push(issue);
      continue;
    }
    add(index.byNodeAll, issue.node, issue);
    if (typeof issue.step === "number") add(index.byStep, issueKey(issue.node, issue.step), issue);
    else add(index.byNode, issue.node, issue);
  }
  return index;
}

export function worstSeverity(issues: Issue[] | undefined): "error" | "warning" | null {
  if (!issues || issues.length === 0) return null;
  return issues.some((i) => i.severity === "error") ? "error" : "warning";
}

/**
 * Instant checks for comfort while typing (the server's /api/validate/ decides): the name
 * rule, a root node, exactly one target per step, unique step names, Splitter weights.
 */
export function localIssues(state: GraphState): Issue[] {
  const issues: Issue[] = [];
  const meta = isObject(state.doc.metadata) ? state.doc.metadata : {};
  const name = meta.name;
  if (typeof name !== "string" || !GRAPH_NAME_RE.test(name)) {
    issues.push({ code: "local.name", severity: "error", message: "The graph name must match ^[a-z]([-a-z0-9]*[a-z0-9])?$.", path: "metadata.name" });
  }
  if (!rootNode(state)) {
    issues.push({ code: "local.root", severity: "error", message: "There must be a node named 'root'." });
  }
  for (const node of state.nodes) {
    if (!routerTypeOf(node)) issues.push({ code: "local.router_type", severity: "error", message: "routerType is required.", node: node.name });
    const seen = new Set<string>();
    node.steps.forEach((step, i) => {
      const targets = stepTargets(step.fields);
      const stepName = typeof step.fields.name === "string" ? step.fields.name : "";
      if (targets.length === 0) issues.push({ code: "local.no_target", severity: "error", message: "The step has no target.", node: node.name, step: i });
      if (targets.length > 1) issues.push({ code: "local.many_targets", severity: "error", message: "The step has more than one target.", node: node.name, step: i });
      if (stepName) {
        if (seen.has(stepName)) issues.push({ code: "local.duplicate_step", severity: "error", message: `Another step is named "${stepName}".`, node: node.name, step: i });
        seen.add(stepName);
      }
    });
    if (routerTypeOf(node) === "Splitter") {
      const sum = splitterWeightSum(node);
      if (node.steps.some((s) => typeof s.fields.weight !== "number")) {
        issues.push({ code: "local.weight_missing", severity: "error", message: "Every Splitter step needs a weight.", node: node.name });
      } else if (sum !== 100) {
        issues.push({ code: "local.weight_sum", severity: "error", message: `Splitter weights sum to ${sum}, not 100.`, node: node.name });
      }
    }
  }
  return issues;
}

export function stepName(step: StepState, index: number): string {
  return typeof step.fields.name === "string" && step.fields.name ? step.fields.name : `#${index}`;
}

/** The serviceNames the graph's steps call, each once, sorted (for Test connection). */
export function serviceNames(state: Pick<GraphState, "nodes">): string[] {
  const names = new Set<string>();
  for (const node of state.nodes) {
    for (const step of node.steps) {
      const name = step.fields.serviceName;
      if (typeof name === "string" && name !== "") names.add(name);
    }
  }
  return [...names].sort();
}
