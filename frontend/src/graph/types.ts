/**
 * Types of the pure graph model. A `GraphState` is the canvas-side view of one KServe
 * InferenceGraph manifest plus its layout. It keeps every part of the original document
 * (unknown keys, key order) so that `toManifest(fromManifest(m))` gives `m` back.
 */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export const ROUTER_TYPES = ["Sequence", "Switch", "Ensemble", "Splitter"] as const;
export type RouterType = (typeof ROUTER_TYPES)[number];

/** The three mutually exclusive step targets (docs/router-semantics.md, "A request's way through the graph"). */
export const TARGET_KINDS = ["serviceName", "serviceUrl", "nodeName"] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export interface Position {
  x: number;
  y: number;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

/**
 * What the editor stores in a version's `layout`:
 * `{"nodes": {"<node name>": {"x": .., "y": ..}}, "viewport": {"x", "y", "zoom"}}`.
 * Unknown top-level keys are kept as they were.
 */
export interface Layout {
  nodes: Record<string, Position>;
  viewport?: Viewport;
  [key: string]: unknown;
}

/** One step: its raw object (key order as written) plus an editor-only stable id. */
export interface StepState {
  id: string;
  fields: JsonObject;
}

/**
 * One router node. `raw` is the node object exactly as written, except that the value of
 * `steps` (when the key exists) is a placeholder: the real steps live in `steps`.
 */
export interface NodeState {
  name: string;
  raw: JsonObject;
  steps: StepState[];
  position: Position;
}

export interface GraphState {
  /** The whole manifest; `spec.nodes` (when present) is a placeholder replaced on output. */
  doc: JsonObject;
  /** Whether `spec.nodes` exists in `doc` (it is emitted when it did or when nodes exist). */
  hasNodesKey: boolean;
  /** Nodes in manifest order. */
  nodes: NodeState[];
  viewport: Viewport | null;
  /** Unknown layout keys, kept for the round trip. */
  layoutExtra: Record<string, unknown>;
  /** Counter for editor-only step ids; part of the state so that edits stay deterministic. */
  nextId: number;
}

/** A server (or local) validation issue: code, severity, message and where (node, step, line, column). */
export interface Issue {
  code: string;
  severity: "error" | "warning";
  message: string;
  node?: string | null;
  step?: number | null;
  step_name?: string | null;
  path?: string | null;
  line?: number | null;
  column?: number | null;
}

/** What copy puts on the clipboard (also in localStorage so it works between graphs). */
export interface ClipboardPayload {
  kind: "inference-graph-studio/nodes";
  version: 1;
  nodes: { name: string; node: JsonObject; position: Position }[];
}
