/**
 * The Flow view's picture of a graph: one box per model, arrows for the data. A pure projection of
 * the same `GraphState` the Nodes view draws (no React, no DOM); docs/router-semantics.md is the
 * reading of each router it follows:
 *
 * - Sequence: a step gets the node's input, or the previous step's answer when `data: $response`
 *   (ignored on the first step). A later step that does not take the previous answer still runs
 *   after it (and its condition reads that answer): a dashed "then" arrow shows the order.
 * - Ensemble: every step gets the node's input (fan-out); a merge box joins their answers under
 *   their keys (the step's name, else its index) (fan-in).
 * - Switch: a decision box; each branch is labelled with its condition; "nothing matched" exits
 *   with a 404 at the root (a 500 when nested).
 * - Splitter: a decision box; branches are labelled with their weights; weights under 100 leave
 *   draws without a branch (a 500).
 * - `nodeName`: the called node's boxes are drawn inline in a group (collapsible). A node called
 *   from a second place, a cycle and a `nodeName` naming no node are reference boxes with a warning.
 *
 * - Where several ends (a Switch's, Splitter's branches; a fan-out's steps) meet a next stage that
 *   itself has several starts (an Ensemble's steps…), their arrows meet in one small join point and
 *   one arrow leaves it for each start: k+m arrows, not k×m. A join has no step, node or outcome.
 *
 * Box ids are paths (`root/2>match/1`: step 1 of `match` called by step 2 of root), unique in the
 * drawing. A run's marks find their box by node and step (marks.ts), not by the run's call ids,
 * which are short per-run numbers (`match#1/1`) whatever the depth.
 */
import { isObject } from "../graph/manifest";
import { incoming, reachable, ROOT, routerTypeOf, stepTarget } from "../graph/queries";
import type { GraphState, JsonObject, NodeState, TargetKind } from "../graph/types";

export type BoxKind =
  | "request"
  | "response"
  | "step"
  | "switch"
  | "splitter"
  | "merge"
  | "exit"
  | "ref"
  | "empty"
  | "call"
  | "unknown"
  | "join";

/** A step of the document: the node it belongs to and its index there. */
export interface StepRef {
  node: string;
  index: number;
}

export interface FlowBox {
  id: string;
  kind: BoxKind;
  title: string;
  /** The service name, URL or called node. */
  subtitle: string | null;
  targetKind: TargetKind | null;
  /** "v1", "v2", "HTTP" for URLs (by their path), "service" for a serviceName. */
  protocol: string | null;
  /** The document step this box stands for (step, call and reference boxes). */
  step: StepRef | null;
  /** The router node this box belongs to (its decision, merge, empty or exit box, or its step). */
  node: string | null;
  /** The group the box is drawn in (null: the top level). */
  group: string | null;
  dependency: "Hard" | "Soft" | null;
  condition: string | null;
  mapPredictions: boolean;
  weight: number | null;
  /** Why the box is drawn as it is (reference boxes, unknown router types, unreachable nodes). */
  warning: string | null;
  /** The key this box's position is stored under (names, not indexes: survives inserts). */
  layoutKey: string;
}

export type ArrowKind = "data" | "order" | "branch" | "exit" | "merge";

/**
 * Where the "+" on an arrow inserts a model: at `index` of Sequence `node`; or, with `wrap`,
 * before or after branch `index` of a Switch, Splitter or Ensemble `node` (the branch then calls a
 * new Sequence of the two).
 */
export interface InsertPoint {
  node: string;
  index: number;
  wrap?: "before" | "after";
}

export interface FlowArrow {
  id: string;
  from: string;
  to: string;
  kind: ArrowKind;
  label: string | null;
  insert: InsertPoint | null;
}

export interface FlowGroup {
  id: string;
  /** The called node. */
  node: string;
  routerType: string;
  /** The calling step (null for a node no step reaches, drawn on its own). */
  call: StepRef | null;
  parent: string | null;
  collapsed: boolean;
  warning: string | null;
  title: string;
}

/**
 * How the picture nests, for its layout (layout.ts): boxes one after the other (a Sequence, a
 * decision and its branches, branches and their merge), branches stacked (`parallel`), a called
 * node in its group's frame. Every arrow runs from a box to a box later in a `series` (or from a
 * Sequence's input to a later step that does not take the previous answer); a `box` whose id is
 * not among the model's boxes (a join point that was not needed) takes no room.
 */
export type Shape = { kind: "box"; id: string } | { kind: "series"; items: Shape[] } | { kind: "parallel"; items: Shape[] } | { kind: "group"; id: string; body: Shape };

export interface FlowModel {
  boxes: FlowBox[];
  arrows: FlowArrow[];
  groups: FlowGroup[];
  /** The nesting of the boxes: the top level's flow, then each node no step reaches, stacked. */
  shape: Shape;
}

export interface ProjectOptions {
  /** Ids of groups drawn collapsed (one "call" box instead of their content). */
  collapsed?: ReadonlySet<string>;
}

export const REQUEST_ID = "request";
export const RESPONSE_ID = "response";

const leaf = (id: string): Shape => ({ kind: "box", id });

/** Where a node's or step's answer comes from, and its boxes' nesting. */
interface Drawn {
  outs: Src[];
  shape: Shape;
}

/** A source of data flowing into the next box, with what its arrow says. */
interface Src {
  box: string;
  kind: ArrowKind;
  label: string | null;
  insert: InsertPoint | null;
  /** Several ends standing as one source (`box` is then the id of their join point, if drawn). */
  bundle?: Bundle;
}

/**
 * Several ends feeding the next stage. Connected to one box, each end gets its own arrow; from
 * the second box on, the ends' arrows go into one join point instead, and one arrow leaves it
 * for each box.
 */
interface Bundle {
  ends: Src[];
  group: string | null;
  /** The arrows drawn straight from the ends to the first box (removed when the join appears). */
  direct: string[];
  first: { to: string; kind: ArrowKind; label: string | null; insert: InsertPoint | null } | null;
  joined: boolean;
}

/** The protocol badge of a step target. */
export function protocolOf(kind: TargetKind | null, value: string): string | null {
  if (kind === "serviceName") return "service";
  if (kind !== "serviceUrl") return null;
  let path = value;
  try {
    path = new URL(value).pathname;
  } catch {
    /* not absolute: read the text as it is */
  }
  if (/\/v2\/models\//.test(path)) return "v2";
  if (/\/v1\/models\//.test(path)) return "v1";
  return "HTTP";
}

/** An Ensemble step's key in the merged answer: its name, else its index. */
export function mergeKey(fields: JsonObject, index: number): string {
  return typeof fields.name === "string" && fields.name !== "" ? fields.name : String(index);
}

function stepTitle(fields: JsonObject, index: number): string {
  return typeof fields.name === "string" && fields.name !== "" ? fields.name : `step ${index}`;
}

function joinLabels(...labels: (string | null)[]): string | null {
  const parts = labels.filter((l): l is string => !!l);
  return parts.length ? parts.join(" · ") : null;
}

class Projector {
  readonly boxes: FlowBox[] = [];
  readonly arrows: FlowArrow[] = [];
  readonly groups: FlowGroup[] = [];
  private readonly arrowIds = new Set<string>();
  private readonly byName: Map<string, NodeState>;
  /** Node name → where it is drawn (the group id and how its caller is named). */
  private readonly drawn = new Map<string, string>();
  private readonly collapsed: ReadonlySet<string>;

  constructor(
    private readonly state: GraphState,
    options: ProjectOptions,
  ) {
    this.byName = new Map(state.nodes.map((n) => [n.name, n]));
    this.collapsed = options.collapsed ?? new Set();
  }

  run(): FlowModel {
    const root = this.byName.get(ROOT);
    this.box({ id: REQUEST_ID, kind: "request", title: "Request", layoutKey: REQUEST_ID, warning: root ? null : "There is no node named root: nothing receives the request." });
    const inputs: Src[] = [{ box: REQUEST_ID, kind: "data", label: null, insert: null }];
    let outputs: Src[] = [];
    const main: Shape[] = [leaf(REQUEST_ID)];
    if (root) {
      this.drawn.set(ROOT, "");
      const d = this.expandNode(root, inputs, "", "", null, [ROOT], true);
      outputs = d.outs;
      main.push(d.shape);
    }
    main.push(leaf(RESPONSE_ID));
    const components: Shape[] = [{ kind: "series", items: main }];
    this.box({ id: RESPONSE_ID, kind: "response", title: "Response", layoutKey: RESPONSE_ID });
    const end = root && routerTypeOf(root) === "Sequence" ? { node: ROOT, index: root.steps.length } : null;
    this.connect(outputs, RESPONSE_ID, { insert: end });
    // Nodes no step reaches are drawn too (on their own), so nothing in the document is hidden.
    for (const node of this.state.nodes) {
      if (this.drawn.has(node.name)) continue;
      const group = `${node.name}>`;
      this.groups.push({ id: group, node: node.name, routerType: routerTypeOf(node), call: null, parent: null, collapsed: false, warning: "No step reaches this node from root: it never runs.", title: node.name });
      this.drawn.set(node.name, group);
      const d = this.expandNode(node, [], `${node.name}>`, `${node.name}>`, group, [node.name], false);
      components.push({ kind: "group", id: group, body: d.shape });
    }
    return { boxes: this.boxes, arrows: this.arrows, groups: this.groups, shape: { kind: "parallel", items: components } };
  }

  private box(partial: Partial<FlowBox> & Pick<FlowBox, "id" | "kind" | "title" | "layoutKey">): FlowBox {
    const box: FlowBox = {
      subtitle: null,
      targetKind: null,
      protocol: null,
      step: null,
      node: null,
      group: null,
      dependency: null,
      condition: null,
      mapPredictions: false,
      weight: null,
      warning: null,
      ...partial,
    };
    this.boxes.push(box);
    return box;
  }

  private arrow(from: string, to: string, kind: ArrowKind, label: string | null, insert: InsertPoint | null): string | null {
    const id = `${from}->${to}${kind === "order" ? ":order" : ""}`;
    if (this.arrowIds.has(id)) return null;
    this.arrowIds.add(id);
    this.arrows.push({ id, from, to, kind, label, insert });
    return id;
  }

  private connect(srcs: Src[], to: string, extra: { label?: string | null; kind?: ArrowKind; insert?: InsertPoint | null } = {}): void {
    for (const s of srcs) {
      const kind = s.kind === "data" && extra.kind ? extra.kind : s.kind;
      const label = joinLabels(s.label, extra.label ?? null);
      const insert = s.insert ?? extra.insert ?? null;
      if (s.bundle) this.connectBundle(s.bundle, s.box, { to, kind, label, insert });
      else this.arrow(s.box, to, kind, label, insert);
    }
  }

  /** Several ends as one source of `to` (see Bundle). */
  private connectBundle(b: Bundle, joinId: string, a: NonNullable<Bundle["first"]>): void {
    if (!b.first) {
      b.first = a;
      for (const e of b.ends) {
        const id = this.arrow(e.box, a.to, e.kind === "data" ? a.kind : e.kind, joinLabels(e.label, a.label), e.insert ?? a.insert);
        if (id) b.direct.push(id);
      }
      return;
    }
    if (!b.joined) {
      if (b.first.to === a.to) return;
      b.joined = true;
      const gone = new Set(b.direct);
      for (const id of gone) this.arrowIds.delete(id);
      const kept = this.arrows.filter((x) => !gone.has(x.id));
      this.arrows.length = 0;
      this.arrows.push(...kept);
      this.box({ id: joinId, kind: "join", title: "join", group: b.group, layoutKey: joinId });
      for (const e of b.ends) this.arrow(e.box, joinId, e.kind, e.label, e.insert);
      this.arrow(joinId, b.first.to, b.first.kind, b.first.label, b.first.insert);
    }
    this.arrow(joinId, a.to, a.kind, a.label, a.insert);
  }

  /** `ends` as one source when there are several of them (the join point, if needed, is `id`). */
  private bundle(ends: Src[], id: string, group: string | null, kind: ArrowKind = "data", label: string | null = null): Src[] {
    if (ends.length < 2) return ends;
    return [{ box: id, kind, label, insert: null, bundle: { ends, group, direct: [], first: null, joined: false } }];
  }

  /**
   * Draws `node` fed by `inputs`; returns where its answer comes from. `prefix` is the call-id
   * prefix of its steps (`root/2>`), `keyPrefix` the same by names (`root/match>`).
   */
  private expandNode(node: NodeState, inputs: Src[], prefix: string, keyPrefix: string, group: string | null, stack: string[], atRoot: boolean): Drawn {
    const type = routerTypeOf(node);
    const base = { node: node.name, group };
    const nodeId = `${prefix}${node.name}`;
    const nodeKey = `${keyPrefix}${node.name}`;
    if (node.steps.length === 0 && (type === "Sequence" || type === "Ensemble" || type === "Switch" || type === "Splitter")) {
      const empty = this.box({ ...base, id: `${nodeId}:empty`, kind: "empty", title: `empty ${type}`, subtitle: node.name, layoutKey: `${nodeKey}:empty` });
      this.connect(inputs, empty.id, { insert: type === "Sequence" ? { node: node.name, index: 0 } : null });
      return { outs: [{ box: empty.id, kind: "data", label: null, insert: null }], shape: leaf(empty.id) };
    }
    switch (type) {
      case "Sequence": {
        let prev: Src[] = [];
        const items: Shape[] = [];
        const dataInputs = inputs.filter((s) => s.kind !== "order");
        node.steps.forEach((step, i) => {
          const fromPrev = i > 0 && step.fields.data === "$response";
          const insert = { node: node.name, index: i };
          const joinId = `${nodeId}/${i}:join`;
          const feed: Src[] = fromPrev ? this.bundle(prev, joinId, group).map((s) => ({ ...s, insert: s.insert ?? insert })) : (i === 0 ? inputs : dataInputs).map((s) => ({ ...s, insert: s.insert ?? insert }));
          if (!fromPrev && i > 0) {
            const order = prev.map((s) => ({ box: s.box, kind: "order" as const, label: null, insert: null }));
            feed.push(...this.bundle(order, `${joinId}:then`, group, "order").map((s) => ({ ...s, label: "then", insert })));
          }
          // The join point, when the bundle needs one, stands between the two steps.
          if (i > 0) items.push(leaf(fromPrev ? joinId : `${joinId}:then`));
          const d = this.expandStep(node, i, feed, prefix, keyPrefix, group, stack);
          items.push(d.shape);
          prev = d.outs;
        });
        return { outs: prev, shape: { kind: "series", items } };
      }
      case "Ensemble": {
        const merge = this.box({
          ...base,
          id: `${nodeId}:merge`,
          kind: "merge",
          title: "merge",
          subtitle: `{${node.steps.map((s, i) => mergeKey(s.fields, i)).join(", ")}}`,
          layoutKey: `${nodeKey}:merge`,
        });
        const branches = node.steps.map((step, i) => {
          const d = this.expandStep(node, i, inputs.map((s) => ({ ...s })), prefix, keyPrefix, group, stack);
          this.connect(d.outs, merge.id, { label: mergeKey(step.fields, i), kind: "merge", insert: { node: node.name, index: i, wrap: "after" } });
          return d.shape;
        });
        return { outs: [{ box: merge.id, kind: "data", label: null, insert: null }], shape: { kind: "series", items: [{ kind: "parallel", items: branches }, leaf(merge.id)] } };
      }
      case "Switch":
      case "Splitter": {
        const isSwitch = type === "Switch";
        const decision = this.box({ ...base, id: `${nodeId}:${isSwitch ? "switch" : "split"}`, kind: isSwitch ? "switch" : "splitter", title: node.name, subtitle: type, layoutKey: `${nodeKey}:decision` });
        this.connect(inputs, decision.id);
        const outs: Src[] = [];
        const branches: Shape[] = [];
        let sum = 0;
        node.steps.forEach((step, i) => {
          const f = step.fields;
          let label: string;
          if (isSwitch) label = typeof f.condition === "string" && f.condition !== "" ? `if ${f.condition}` : "if (no condition)";
          else {
            const w = typeof f.weight === "number" ? f.weight : null;
            sum += w ?? 0;
            label = w === null ? "no weight" : `${w}%`;
          }
          const d = this.expandStep(node, i, [{ box: decision.id, kind: "branch", label, insert: { node: node.name, index: i, wrap: "before" } }], prefix, keyPrefix, group, stack);
          outs.push(...d.outs);
          branches.push(d.shape);
        });
        if (isSwitch) {
          const exit = this.box({ ...base, id: `${nodeId}:nomatch`, kind: "exit", title: atRoot ? "nothing matched → 404" : "nothing matched → 500", subtitle: atRoot ? "the graph answers 404" : "a nested Switch without a match fails its caller", layoutKey: `${nodeKey}:nomatch` });
          this.connect([{ box: decision.id, kind: "exit", label: "no match", insert: null }], exit.id);
          branches.push(leaf(exit.id));
        } else if (sum < 100) {
          const exit = this.box({ ...base, id: `${nodeId}:noroute`, kind: "exit", title: "no route → 500", subtitle: `draws ${sum}–99 pick no branch`, layoutKey: `${nodeKey}:noroute` });
          this.connect([{ box: decision.id, kind: "exit", label: `${100 - sum}%`, insert: null }], exit.id);
          branches.push(leaf(exit.id));
        }
        return { outs, shape: { kind: "series", items: [leaf(decision.id), { kind: "parallel", items: branches }] } };
      }
      default: {
        const unknown = this.box({ ...base, id: `${nodeId}:unknown`, kind: "unknown", title: node.name, subtitle: type || "no routerType", warning: type ? `Unknown routerType "${type}": KServe answers 500.` : "routerType is missing: KServe answers 500.", layoutKey: `${nodeKey}:unknown` });
        this.connect(inputs, unknown.id);
        return { outs: [{ box: unknown.id, kind: "data", label: null, insert: null }], shape: leaf(unknown.id) };
      }
    }
  }

  /** Draws step `index` of `node` fed by `feed`; returns where its answer comes from. */
  private expandStep(node: NodeState, index: number, feed: Src[], prefix: string, keyPrefix: string, group: string | null, stack: string[]): Drawn {
    const f = node.steps[index].fields;
    const id = `${prefix}${node.name}/${index}`;
    const title = stepTitle(f, index);
    const layoutKey = `${keyPrefix}${node.name}/${typeof f.name === "string" && f.name ? f.name : `#${index}`}`;
    const type = routerTypeOf(node);
    const common: Partial<FlowBox> = {
      step: { node: node.name, index },
      node: node.name,
      group,
      dependency: f.dependency === "Hard" || f.dependency === "Soft" ? f.dependency : null,
      // A Switch step's condition labels its branch; elsewhere it is on the box (and, in a
      // Sequence, on the arrow into it).
      condition: type !== "Switch" && typeof f.condition === "string" && f.condition !== "" ? f.condition : null,
      mapPredictions: f.mapPredictionsToInstances === true,
      weight: typeof f.weight === "number" ? f.weight : null,
    };
    const condLabel = type === "Sequence" && typeof common.condition === "string" ? `if ${common.condition}` : null;
    const target = stepTarget(f);
    const out = (box: string): Drawn => ({ outs: [{ box, kind: "data", label: null, insert: null }], shape: leaf(box) });
    if (target?.kind === "nodeName") {
      const called = this.byName.get(target.value);
      const ref = (warning: string) => {
        this.box({ ...common, id, kind: "ref", title, subtitle: target.value, targetKind: "nodeName", warning, layoutKey });
        this.connect(feed, id, { label: condLabel });
        return out(id);
      };
      if (!called) return ref(`nodeName "${target.value}" names no node: KServe answers 500 here.`);
      if (stack.includes(called.name)) return ref(`Cycle: ${[...stack, called.name].join(" → ")}. KServe calls it until the request fails.`);
      const where = this.drawn.get(called.name);
      if (where !== undefined) {
        const callers = incoming(this.state, called.name).length;
        return ref(`"${called.name}" is called from ${callers} places; its steps are drawn ${where === "" ? "at the top level" : "at its first call"}.`);
      }
      const groupId = `${id}>${called.name}`;
      const callers = incoming(this.state, called.name).length;
      const collapsed = this.collapsed.has(groupId);
      this.groups.push({
        id: groupId,
        node: called.name,
        routerType: routerTypeOf(called),
        call: { node: node.name, index },
        parent: group,
        collapsed,
        warning: callers > 1 ? `"${called.name}" is called from ${callers} places; the other calls are reference boxes.` : null,
        title: title === called.name ? called.name : `${title} → ${called.name}`,
      });
      this.drawn.set(called.name, groupId);
      if (collapsed) {
        // What the called node calls in turn is inside the collapsed group too.
        for (const name of reachable(this.state, called.name)) if (!this.drawn.has(name)) this.drawn.set(name, groupId);
        this.box({ ...common, id, kind: "call", title, subtitle: `${called.name} (${routerTypeOf(called) || "?"}, ${called.steps.length} step${called.steps.length === 1 ? "" : "s"})`, targetKind: "nodeName", layoutKey, group });
        this.connect(feed, id, { label: condLabel });
        return out(id);
      }
      // The step's own condition labels the arrows into the group.
      const inner = feed.map((s) => ({ ...s, label: joinLabels(s.label, condLabel) }));
      const d = this.expandNode(called, inner, `${id}>`, `${layoutKey}>`, groupId, [...stack, called.name], false);
      return { outs: d.outs, shape: { kind: "group", id: groupId, body: d.shape } };
    }
    const value = target?.value ?? "";
    this.box({
      ...common,
      id,
      kind: "step",
      title,
      subtitle: target ? value || "(empty)" : "no target",
      targetKind: target?.kind ?? null,
      protocol: protocolOf(target?.kind ?? null, value),
      warning: target ? null : "The step has no serviceName, serviceUrl or nodeName.",
      layoutKey,
    });
    this.connect(feed, id, { label: condLabel });
    return out(id);
  }
}

/** The Flow view's boxes, arrows and groups for `state`. Deterministic: same state, same model. */
export function project(state: GraphState, options: ProjectOptions = {}): FlowModel {
  return new Projector(state, options).run();
}

/** The boxes standing for step `index` of `node` (one, unless the node is drawn nowhere). */
export function boxesOfStep(model: FlowModel, node: string, index: number): FlowBox[] {
  return model.boxes.filter((b) => b.step?.node === node && b.step.index === index);
}

/** A box's one-line description for screen readers and tooltips. */
export function describeBox(box: FlowBox): string {
  const parts = [box.title];
  if (box.kind === "step" && box.subtitle) parts.push(`${box.targetKind === "serviceUrl" ? "URL" : "service"} ${box.subtitle}`);
  else if (box.subtitle) parts.push(box.subtitle);
  if (box.protocol) parts.push(`protocol ${box.protocol}`);
  if (box.dependency) parts.push(`${box.dependency} dependency`);
  if (box.condition && box.kind !== "switch") parts.push(`condition ${box.condition}`);
  if (box.weight !== null) parts.push(`weight ${box.weight}%`);
  if (box.mapPredictions) parts.push("maps predictions to instances");
  if (box.warning) parts.push(`warning: ${box.warning}`);
  return parts.join(", ");
}

/** Whether `value` is a stored Flow layout (`{"boxes": {key: {x, y}}}`). */
export function readFlowLayout(value: unknown): Record<string, { x: number; y: number }> {
  const out: Record<string, { x: number; y: number }> = {};
  if (!isObject(value) || !isObject(value.boxes)) return out;
  for (const [k, p] of Object.entries(value.boxes)) {
    if (isObject(p) && typeof p.x === "number" && typeof p.y === "number") out[k] = { x: p.x, y: p.y };
  }
  return out;
}
