import type { ServiceContracts } from "../api";
/**
 * The React Flow canvas. It draws a GraphState and turns pointer events into edits
 * (docs/architecture.md, "The frontend"); it holds no graph data of its own beyond in-flight
 * drag positions and the sizes React Flow measured.
 */
import {
  Background,
  BackgroundVariant,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  applyNodeChanges,
  useReactFlow,
  type Connection,
  type Edge,
  type FinalConnectionState,
  type NodeChange,
  type Viewport as RFViewport,
} from "@xyflow/react";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type DragEvent } from "react";
import { uniqueName, type Edit } from "../graph/edits";
import { isObject } from "../graph/manifest";
import { freeSpot } from "../graph/placement";
import { edges as graphEdges, graphOrder, issueKey, reachable, splitterWeightSum, type IssueIndex } from "../graph/queries";
import type { GraphState, JsonObject, RouterType, TargetKind, Viewport } from "../graph/types";
import type { Selection } from "../graph/selection";
import { nodeMarkOf, stepMarkOf, type RunMarks } from "../graph/runMarks";
import { LodLayer } from "./LodLayer";
import { LOW_DETAIL_BELOW } from "./lod";
import { measuredSizes, withCardHandles } from "./measured";
import { cardEstimate, FIT, fittedViewport, nodesScene } from "./nodesScene";
import { useLowDetail } from "./useLowDetail";
import { CanvasActionsContext, PALETTE_MIME, RouterNode, STEP_MIME, type CanvasActions, type Mark, type RouterFlowNode } from "./RouterNode";

/**
 * The minimap helps to find one's way once a graph outgrows the view; for a graph of one to three
 * cards, which fits on any screen, it only hides part of the canvas, so it is left out.
 */
export const MINIMAP_FROM = 4;

/**
 * The minimap's size grows with the graph: 120 x 80 px for a few cards up to React Flow's default
 * 200 x 150 px (the size every graph had before) from 40 cards on.
 */
export function minimapSize(cards: number): { width: number; height: number } {
  const t = Math.min(1, Math.max(0, (cards - MINIMAP_FROM) / (40 - MINIMAP_FROM)));
  return { width: Math.round(120 + 80 * t), height: Math.round(80 + 70 * t) };
}

export interface CompareMarks {
  nodes: Map<string, Mark>;
  steps: Map<string, Mark>;
  removedSteps: Map<string, { index: number; name: string }[]>;
}

export interface PaletteItem {
  kind: "node" | "step";
  routerType?: RouterType;
  target?: TargetKind;
  /** A service picked by name (a serviceName step that calls it, named after it). */
  service?: string;
}

const nodeTypes = { router: RouterNode };

/**
 * From this many nodes on, only the cards in view are rendered (React Flow's
 * `onlyRenderVisibleElements`): in bench/bench_editor.py a 500-node graph at 100 % then pans with
 * 2 long tasks instead of 84. Smaller graphs keep every card in the DOM, so every edge is drawn
 * (an edge to a card that was never rendered waits until that card scrolls into view).
 */
const VISIBLE_ONLY_FROM = 200;
/** Size estimate of a card React Flow has not measured yet (the CSS width; head + rows + foot). */
const initialSize = (steps: number) => {
  const { width, height } = cardEstimate(steps);
  return { initialWidth: width, initialHeight: height };
};

/**
 * A new step for a palette item dropped on a node (Splitter steps get the missing weight); a
 * service picked by name is called by a step named after it.
 */
export function paletteStep(state: GraphState, nodeName: string, target: TargetKind, service?: string): JsonObject {
  const node = state.nodes.find((n) => n.name === nodeName);
  const taken = new Set(node?.steps.map((s) => s.fields.name).filter((x): x is string => typeof x === "string"));
  let i = (node?.steps.length ?? 0) + 1;
  while (taken.has(`step-${i}`)) i++;
  const name = service ? uniqueName(service, taken) : `step-${i}`;
  const step: JsonObject = service ? { name, serviceName: service } : { name, [target]: target === "serviceUrl" ? "http://" : "" };
  if (node && node.raw.routerType === "Splitter") step.weight = Math.max(0, 100 - splitterWeightSum(node));
  return step;
}

/** What both views of the graph (this Nodes view and the Flow view, src/flow/) are given. */
export interface GraphViewProps {
  state: GraphState;
  /** The services the palette offers (the Flow view's "+" on an arrow offers them too). */
  services?: readonly string[];
  selection: Selection;
  issues: IssueIndex;
  readOnly: boolean;
  compare?: CompareMarks | null;
  /** Marks of the run shown in the console, drawn over the cards or boxes. */
  run?: RunMarks | null;
  /** What Test connection learned of each service (v2 inputs and outputs), shown on Flow boxes. */
  contracts?: ServiceContracts | null;
  /** `key`: edits with the same key in one burst merge into one undo step (graph/history.ts). */
  onEdit: (edit: Edit, select?: Selection, key?: string) => void;
  onSelect: (selection: Selection) => void;
}

export function Canvas({ state, selection, issues, readOnly, compare, run, onEdit, onSelect, onViewport }: GraphViewProps & { onViewport: (viewport: Viewport) => void }) {
  const flow = useReactFlow<RouterFlowNode, Edge>();
  const live = useRef(state);
  live.current = state;
  // Where the canvas opens: the saved viewport, else React Flow's fit. A fit below the low-detail
  // threshold is worked out here, before React Flow mounts (it needs the canvas's size), so that
  // a large graph opens as the overview (LodLayer) without mounting a card first.
  const wrapRef = useRef<HTMLDivElement>(null);
  const opening = useRef<{ viewport: Viewport | null } | null>(null);
  const [room, setRoom] = useState<{ width: number; height: number } | null>(null);
  useLayoutEffect(() => {
    // Only without a saved viewport: measuring then re-renders the canvas before its first paint.
    if (!opening.current && wrapRef.current) setRoom({ width: wrapRef.current.clientWidth, height: wrapRef.current.clientHeight });
  }, []);
  if (!opening.current && (state.viewport || room)) {
    const fit = state.viewport || !room ? null : fittedViewport(state, room.width, room.height);
    opening.current = { viewport: state.viewport ?? (fit && fit.zoom < LOW_DETAIL_BELOW ? fit : null) };
  }
  // Zoomed far out: no card or edge is mounted, the overview layer draws them (lod.ts, LodLayer).
  const low = useLowDetail(opening.current?.viewport?.zoom);

  const selectedNames = useMemo(() => new Set(selection.kind === "nodes" ? selection.names : []), [selection]);
  const visibleOnly = state.nodes.length >= VISIBLE_ONLY_FROM;
  // Keyed on `state.nodes`, not `state`: a pan or zoom changes only `state.viewport`, and must not
  // hand React Flow a fresh copy of every card (a full re-render of a 500-node graph).
  const derived = useMemo<RouterFlowNode[]>(() => {
    const existing = new Set(state.nodes.map((n) => n.name));
    const reach = reachable(state);
    // Cards in the DOM (and so in Tab order) as a reader follows the graph, root first.
    const rank = new Map(graphOrder(state).map((name, i) => [name, i]));
    const ordered = state.nodes.slice().sort((a, b) => (rank.get(a.name) ?? 0) - (rank.get(b.name) ?? 0));
    return ordered.map((node) => ({
      id: node.name,
      type: "router",
      position: node.position,
      ...(visibleOnly ? initialSize(node.steps.length) : {}),
      selected: selectedNames.has(node.name),
      draggable: !readOnly,
      connectable: !readOnly,
      deletable: false,
      data: {
        node,
        isRoot: node.name === "root",
        reachable: reach.has(node.name),
        nodeIssues: issues.byNode.get(node.name) ?? [],
        allIssues: issues.byNodeAll.get(node.name) ?? [],
        stepIssues: node.steps.map((_, i) => issues.byStep.get(issueKey(node.name, i))),
        selectedStep: selection.kind === "step" && selection.node === node.name ? selection.index : null,
        existing,
        readOnly,
        mark: compare?.nodes.get(node.name),
        stepMarks: compare ? node.steps.map((_, i) => compare.steps.get(issueKey(node.name, i))) : undefined,
        removedSteps: compare?.removedSteps.get(node.name),
        run: run ? nodeMarkOf(run, node.name) : undefined,
        stepRuns: run ? node.steps.map((_, i) => stepMarkOf(run, node.name, i)) : undefined,
      },
    }));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes (see above)
  }, [state.nodes, visibleOnly, selectedNames, selection, issues, readOnly, compare, run]);

  // React Flow's copy of the nodes: derived nodes plus measured sizes and in-flight drags.
  const [nodes, setNodes] = useState<RouterFlowNode[]>(derived);
  useEffect(() => {
    setNodes((prev) => {
      const byId = new Map(prev.map((n) => [n.id, n]));
      return derived.map((n) => {
        const old = byId.get(n.id);
        return old ? { ...n, measured: old.measured, width: old.width, height: old.height } : n;
      });
    });
  }, [derived]);

  // Comparing versions: the cards that changed are brought into view when they are not all in
  // view already (once React Flow has the new cards' sizes).
  useEffect(() => {
    if (!compare || compare.nodes.size === 0) return;
    const ids = [...compare.nodes.keys()];
    const timer = window.setTimeout(() => {
      const el = wrapRef.current;
      if (!el) return;
      const { x, y, zoom } = flow.getViewport();
      const inView = ids.every((id) => {
        const n = flow.getInternalNode(id);
        if (!n) return true;
        const p = n.internals.positionAbsolute;
        const left = p.x * zoom + x;
        const top = p.y * zoom + y;
        return left >= 0 && top >= 0 && left + (n.measured.width ?? 0) * zoom <= el.clientWidth && top + (n.measured.height ?? 0) * zoom <= el.clientHeight;
      });
      if (!inView) void flow.fitView({ nodes: ids.map((id) => ({ id })), padding: 0.2, maxZoom: 1, duration: 300, includeHiddenNodes: true });
    }, 60);
    return () => window.clearTimeout(timer);
  }, [compare, flow]);

  // At low detail React Flow keeps the nodes (the fit, the minimap's frame) but mounts none.
  // (A card never measured gets the estimate, so that a fit of the hidden cards has their size.)
  // With only the cards in view rendered, those not measured yet come with estimated handles, so
  // that React Flow does not mount every card to measure it (measured.ts).
  const rfNodes = useMemo(
    () => (low ? nodes.map((n) => ({ ...initialSize(n.data.node.steps.length), ...n, hidden: true })) : visibleOnly ? withCardHandles(nodes) : nodes),
    [nodes, low, visibleOnly],
  );
  // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes
  const scene = useMemo(() => (low ? nodesScene(state, selection, measuredSizes(nodes)) : null), [low, state.nodes, selection, nodes]);
  const selectBox = useCallback((box: { id: string }) => onSelect({ kind: "nodes", names: [box.id] }), [onSelect]);

  const rfEdges = useMemo<Edge[]>(() => {
    if (low) return [];
    return graphEdges(state).map((e) => {
      const isSelected = selection.kind === "step" && selection.node === e.source && selection.index === e.stepIndex;
      const mark = compare?.steps.get(issueKey(e.source, e.stepIndex));
      const ran = run?.steps.get(issueKey(e.source, e.stepIndex));
      return {
        id: e.id,
        source: e.source,
        sourceHandle: e.sourceStep.id,
        target: e.target,
        targetHandle: "in",
        type: "smoothstep",
        selected: isSelected,
        deletable: false,
        className: [mark ? `edge-${mark}` : "", ran && ran.status !== "not-taken" ? `edge-run edge-run-${ran.status}` : ""].filter(Boolean).join(" ") || undefined,
        animated: ran?.status === "running",
        markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
        data: { node: e.source, index: e.stepIndex },
      };
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes
  }, [state.nodes, selection, compare, run, low]);

  // Set between a pointer drag's start and stop: its moves are recorded once, at the stop.
  const pointerDrag = useRef(false);

  const onNodesChange = useCallback(
    (changes: NodeChange<RouterFlowNode>[]) => {
      // A move that is no pointer drag is React Flow's arrow-key move of the selected cards: an
      // edit like any other (undo, unsaved changes).
      if (!pointerDrag.current && !readOnly) {
        const positions: Record<string, { x: number; y: number }> = {};
        for (const c of changes) {
          if (c.type !== "position" || c.dragging || !c.position) continue;
          const p = { x: Math.round(c.position.x), y: Math.round(c.position.y) };
          const now = live.current.nodes.find((n) => n.name === c.id)?.position;
          if (now && (now.x !== p.x || now.y !== p.y)) positions[c.id] = p;
        }
        // A burst of presses on the same cards is one undo step.
        const names = Object.keys(positions);
        if (names.length) queueMicrotask(() => onEdit({ type: "moveNodes", positions }, undefined, `arrow-move:${names.sort().join(",")}`));
      }
      setNodes((prev) => {
        const next = applyNodeChanges(changes, prev);
        if (changes.some((c) => c.type === "select")) {
          const names = next.filter((n) => n.selected).map((n) => n.id);
          queueMicrotask(() => {
            if (names.length) onSelect({ kind: "nodes", names });
            else if (selection.kind === "nodes") onSelect({ kind: "none" });
          });
        }
        return next;
      });
    },
    [onSelect, selection, onEdit, readOnly],
  );

  const onNodeDragStop = useCallback(
    (_: unknown, __: unknown, dragged: RouterFlowNode[]) => {
      pointerDrag.current = false;
      const positions: Record<string, { x: number; y: number }> = {};
      for (const n of dragged) positions[n.id] = { x: Math.round(n.position.x), y: Math.round(n.position.y) };
      onEdit({ type: "moveNodes", positions });
    },
    [onEdit],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      if (readOnly || !c.source || !c.target) return;
      if (c.sourceHandle === "__new") {
        const node = live.current.nodes.find((n) => n.name === c.source);
        onEdit({ type: "connectNew", node: c.source, target: c.target }, { kind: "step", node: c.source, index: node?.steps.length ?? 0 });
        return;
      }
      const node = live.current.nodes.find((n) => n.name === c.source);
      const index = node?.steps.findIndex((s) => s.id === c.sourceHandle) ?? -1;
      if (index >= 0) onEdit({ type: "connect", node: c.source, index, target: c.target }, { kind: "step", node: c.source, index });
    },
    [onEdit, readOnly],
  );

  // A connection dropped anywhere on a card (not only on its input handle) connects to it.
  const onConnectEnd = useCallback(
    (event: MouseEvent | TouchEvent, connection: FinalConnectionState) => {
      if (connection.isValid || !connection.fromNode || connection.fromHandle?.type !== "source") return;
      const point = "changedTouches" in event ? event.changedTouches[0] : event;
      if (!point) return;
      const card = document.elementFromPoint(point.clientX, point.clientY)?.closest<HTMLElement>(".router-card[data-node]");
      const target = card?.dataset.node;
      if (!target) return;
      onConnect({ source: connection.fromNode.id, sourceHandle: connection.fromHandle.id ?? null, target, targetHandle: "in" });
    },
    [onConnect],
  );

  // The reducer selects nodes an edit adds. The card goes to the nearest free spot.
  const addNodeAt = useCallback(
    (routerType: RouterType, position: { x: number; y: number }) => onEdit({ type: "addNode", routerType, position: freeSpot(live.current, position, [], measuredSizes(flow.getNodes())) }),
    [flow, onEdit],
  );

  const actions = useMemo<CanvasActions>(
    () => ({
      selectStep: (node, index) => onSelect({ kind: "step", node, index }),
      dropOnNode: (nodeName, index, dt) => {
        const moving = dt.getData(STEP_MIME);
        if (moving) {
          const from = JSON.parse(moving) as { node: string; index: number };
          if (from.node === nodeName) {
            const to = index === undefined ? Number.MAX_SAFE_INTEGER : index > from.index ? index - 1 : index;
            const target = Math.min(to, (live.current.nodes.find((n) => n.name === nodeName)?.steps.length ?? 1) - 1);
            onEdit({ type: "transferStep", from, to: { node: nodeName, index: target } }, { kind: "step", node: nodeName, index: target });
          } else {
            const len = live.current.nodes.find((n) => n.name === nodeName)?.steps.length ?? 0;
            const at = index ?? len;
            onEdit({ type: "transferStep", from, to: { node: nodeName, index: at } }, { kind: "step", node: nodeName, index: at });
          }
          return;
        }
        const item = parsePalette(dt.getData(PALETTE_MIME));
        if (item?.kind === "step" && item.target) {
          const len = live.current.nodes.find((n) => n.name === nodeName)?.steps.length ?? 0;
          const at = index ?? len;
          onEdit(
            { type: "addStep", node: nodeName, index: at, step: paletteStep(live.current, nodeName, item.target, item.service) },
            { kind: "step", node: nodeName, index: at },
          );
        } else if (item?.kind === "node" && item.routerType) {
          // A node dropped on a card lands next to it.
          const host = live.current.nodes.find((n) => n.name === nodeName);
          addNodeAt(item.routerType, host ? { x: host.position.x + 40, y: host.position.y + 40 } : { x: 0, y: 0 });
        }
      },
    }),
    [onEdit, onSelect, addNodeAt],
  );

  const onDragOver = (e: DragEvent) => {
    if (readOnly || !e.dataTransfer.types.includes(PALETTE_MIME)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
  };

  const onDrop = (e: DragEvent) => {
    if (readOnly) return;
    const item = parsePalette(e.dataTransfer.getData(PALETTE_MIME));
    if (!item) return;
    e.preventDefault();
    if (item.kind === "node" && item.routerType) {
      const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      addNodeAt(item.routerType, { x: Math.round(p.x - 20), y: Math.round(p.y - 16) });
    }
  };

  return (
    <CanvasActionsContext.Provider value={actions}>
      <div ref={wrapRef} className="canvas" onDragOver={onDragOver} onDrop={onDrop} data-readonly={readOnly ? "true" : undefined} data-detail={low ? "low" : "full"}>
        {opening.current && (
          <ReactFlow<RouterFlowNode, Edge>
            nodes={rfNodes}
            edges={rfEdges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onNodeDragStart={() => {
              pointerDrag.current = true;
            }}
            onNodeDragStop={onNodeDragStop}
            onConnect={onConnect}
            onConnectEnd={onConnectEnd}
            onEdgeClick={(_, edge) => {
              const d = edge.data as { node: string; index: number } | undefined;
              if (d) onSelect({ kind: "step", node: d.node, index: d.index });
            }}
            onPaneClick={() => onSelect({ kind: "none" })}
            onMoveEnd={(_, vp: RFViewport) => onViewport({ x: Math.round(vp.x), y: Math.round(vp.y), zoom: Math.round(vp.zoom * 1000) / 1000 })}
            defaultViewport={opening.current.viewport ?? undefined}
            fitView={!opening.current.viewport}
            fitViewOptions={{ padding: FIT.padding, maxZoom: FIT.maxZoom, includeHiddenNodes: true }}
            minZoom={0.1}
            maxZoom={2.5}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            elementsSelectable
            deleteKeyCode={null}
            selectionKeyCode="Shift"
            multiSelectionKeyCode={["Meta", "Control", "Shift"]}
            connectionRadius={28}
            onlyRenderVisibleElements={visibleOnly && !low}
            proOptions={{ hideAttribution: true }}
            defaultEdgeOptions={{ type: "smoothstep" }}
          >
            <Background variant={BackgroundVariant.Dots} gap={18} size={1} />
            <Controls showInteractive={false} position="bottom-left" fitViewOptions={{ includeHiddenNodes: true }} />
            {state.nodes.length >= MINIMAP_FROM && !low && (
              <MiniMap pannable zoomable position="bottom-right" nodeStrokeWidth={2} nodeColor={minimapColor} ariaLabel="Minimap" style={minimapSize(state.nodes.length)} />
            )}
            {scene && <LodLayer scene={scene} onSelect={selectBox} focusSelector={cardFocus} noun="nodes" minimap={state.nodes.length >= MINIMAP_FROM ? minimapSize(state.nodes.length) : null} />}
          </ReactFlow>
        )}
      </div>
    </CanvasActionsContext.Provider>
  );
}

/** A node's card, which takes the focus when a key opens it from the overview. */
const cardFocus = (name: string) => `.react-flow__node[data-id="${CSS.escape(name)}"]`;

function minimapColor(n: RouterFlowNode): string {
  const t = n.data?.node?.raw?.routerType;
  return t === "Sequence" ? "#5b7cfa" : t === "Switch" ? "#e8a33d" : t === "Ensemble" ? "#38a169" : t === "Splitter" ? "#b45cd6" : "#999";
}

export function parsePalette(text: string): PaletteItem | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return isObject(v) && (v.kind === "node" || v.kind === "step") ? (v as unknown as PaletteItem) : null;
  } catch {
    return null;
  }
}
