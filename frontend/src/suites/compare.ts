/**
 * Two versions' suite runs compared (`GET /api/suite-runs/compare/`): the shapes, and which
 * nodes and steps of version B a case's comparison marks on the canvas. Steps are named by label
 * paths (`root/pick>pets/cat`: node/step per call level, a step by its name or index); the last
 * level is the step itself.
 */
import type { Diff } from "../api";
import type { CompareMarks } from "../canvas/Canvas";
import { issueKey } from "../graph/queries";
import type { DiffEntry, SuiteRun } from "./suite";

export interface StepSide {
  status: number | null;
  outcome: string | null;
  duration_ms: number | null;
}

export interface StepComparison {
  label: string;
  node: string | null;
  a: StepSide | null;
  b: StepSide | null;
  /** What differs (latency aside): presence, status, outcome, request, response. */
  changed: string[];
  request_diff: DiffEntry[];
  response_diff: DiffEntry[];
}

export interface RunComparison {
  same: boolean;
  status: [number | null, number | null];
  duration_ms: [number | null, number | null];
  body_diff: DiffEntry[];
  routes: { node: string; a: (string | null)[]; b: (string | null)[] }[];
  steps: StepComparison[];
}

export interface CaseComparison {
  case: number;
  name: string;
  a: { outcome: string; run: string | null } | null;
  b: { outcome: string; run: string | null } | null;
  changed: boolean;
  comparison: RunComparison | null;
}

export interface CompareResult {
  a: SuiteRun;
  b: SuiteRun;
  manifest_diff: Diff & { from?: number; to?: number };
  cases: CaseComparison[];
}

/** The node and step a label names: its last level (`pets/cat` of `root/pick>pets/cat`). */
export function stepOfLabel(label: string): { node: string; step: string } | null {
  const last = label.split(">").at(-1) ?? "";
  const at = last.lastIndexOf("/");
  if (at <= 0 || at === last.length - 1) return null;
  return { node: last.slice(0, at), step: last.slice(at + 1) };
}

/** A node of the version the marks are for: its name and its steps' names (null when unnamed). */
export interface NodeSteps {
  name: string;
  steps: (string | null)[];
}

/**
 * Canvas marks for one case: every step whose status, outcome, request, response or presence
 * changed, and every node holding one or routing differently, marked "changed".
 */
export function caseMarks(cmp: RunComparison | null, nodes: readonly NodeSteps[]): CompareMarks {
  const marks: CompareMarks = { nodes: new Map(), steps: new Map(), removedSteps: new Map() };
  if (!cmp) return marks;
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const s of cmp.steps) {
    if (!s.changed.length) continue;
    const ref = stepOfLabel(s.label);
    const node = ref ? byName.get(ref.node) : undefined;
    if (!ref || !node) continue;
    const index = /^\d+$/.test(ref.step) ? Number(ref.step) : node.steps.indexOf(ref.step);
    marks.nodes.set(node.name, "changed");
    if (index >= 0 && index < node.steps.length) marks.steps.set(issueKey(node.name, index), "changed");
  }
  for (const r of cmp.routes) {
    const name = stepOfLabel(`${r.node}/x`)?.node ?? r.node;
    if (byName.has(name)) marks.nodes.set(name, "changed");
    else if (byName.has(r.node)) marks.nodes.set(r.node, "changed");
  }
  return marks;
}

/** The cases that changed first, then the rest, each group in its order. */
export function casesToShow(cases: readonly CaseComparison[]): CaseComparison[] {
  return [...cases.filter((c) => c.changed), ...cases.filter((c) => !c.changed)];
}
