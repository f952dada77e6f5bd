/**
 * The Flow view: the graph as boxes and arrows (project.ts), laid out along their series-parallel
 * shape (layout.ts, synchronous: milliseconds for a thousand steps), edited through the same edits
 * as the Nodes view (edits.ts). It takes the same props as the Nodes view's Canvas: selection, run
 * marks, comparison marks and validation issues show in both.
 */
import { Controls, MarkerType, MiniMap, ReactFlow, applyNodeChanges, useReactFlow, type Node, type NodeChange } from "@xyflow/react";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type DragEvent } from "react";
import { flowScene } from "../canvas/flowScene";
import { LodLayer } from "../canvas/LodLayer";
import { keepMeasured } from "../canvas/measured";
import type { LodBox } from "../canvas/lodScene";
import { useLowDetail } from "../canvas/useLowDetail";
import { parsePalette, type GraphViewProps } from "../canvas/Canvas";
import { PALETTE_MIME, PALETTE_ROUTER_MIME } from "../canvas/RouterNode";
import { nodeByName, routerTypeOf, stepTarget } from "../graph/queries";
import type { GraphState, Position } from "../graph/types";
import type { Selection } from "../editor/store";
import { FlowArrowEdge, type FlowArrow } from "./FlowArrowEdge";
import { FlowDots } from "./FlowDots";
import { FlowActionsContext, FlowBoxNode, FlowGroupNode, FlowJoinNode, type FlowActions, type FlowBoxFlowNode, type FlowGroupFlowNode, type FlowJoinFlowNode } from "./FlowBoxNode";
import { draggedRouter, dropHint, dropTarget, routerHint, type DropTarget } from "./drop";
import { addConditional, addParallel, addSplit, appendModel, deleteBox, dropIndex, dropOnBox, insertModel, moveAlong, type FlowEdit, type NewModel } from "./edits";
import { withBoxHandles } from "./handles";
import { autoFlowLayout, BOX_SIZES, groupFrames, placeBoxes } from "./layout";
import { boxIssues, boxMark, boxRun } from "./marks";
import { project, readFlowLayout, type FlowBox, type FlowModel } from "./project";
import { nearestBox, type Direction } from "./navigate";
import { boundsOf, firstViewport, type Viewport } from "./viewport";
import "./flow.css";

const nodeTypes = { flowBox: FlowBoxNode, flowGroup: FlowGroupNode, flowJoin: FlowJoinNode };
const edgeTypes = { flowArrow: FlowArrowEdge };

type FlowNode = FlowBoxFlowNode | FlowGroupFlowNode | FlowJoinFlowNode;

/** What decides a new layout: the boxes, groups and arrows (not their labels or marks). */
function structureOf(model: FlowModel): string {
  return JSON.stringify([model.boxes.map((b) => [b.id, b.kind, b.group]), model.groups.map((g) => [g.id, g.parent, g.collapsed]), model.arrows.map((a) => [a.id, a.label, a.insert !== null])]);
}

/** Whether the box's step calls nothing yet (a blank box the "+" added). */
function isBlank(state: GraphState, box: FlowBox): boolean {
  const step = box.step ? nodeByName(state, box.step.node)?.steps[box.step.index] : undefined;
  return step !== undefined && stepTarget(step.fields)?.value === "";
}

/** Pixels (on screen) from an arrow within which a palette drop is on that arrow. */
const ARROW_REACH = 24;

function isSelected(box: FlowBox, selection: Selection): boolean {
  if (selection.kind === "step") return box.step !== null && box.step.node === selection.node && box.step.index === selection.index;
  if (selection.kind === "nodes") return box.step === null && box.node !== null && box.kind !== "exit" && selection.names.includes(box.node);
  return false;
}

/** A box's body, which takes the focus when a key opens the box from the overview. */
const boxFocus = (id: string) => `.flow-box[data-box="${CSS.escape(id)}"] .flow-box-body`;

/** The saved viewport is the Nodes view's: the Flow view fits its picture into view instead. */
export function FlowCanvas({ state, selection, issues, readOnly, compare, run, onEdit, onSelect }: GraphViewProps) {
  const live = useRef(state);
  live.current = state;
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  // Keyed on `state.nodes`: a pan changes only the viewport and must not rebuild the picture.
  // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes
  const model = useMemo(() => project(state, { collapsed }), [state.nodes, collapsed]);
  const structure = useMemo(() => structureOf(model), [model]);

  // Laid out anew only when the structure changes (a label, a mark or a pan does not); the
  // layout takes milliseconds (layout.ts), so the first picture needs no waiting.
  const modelRef = useRef(model);
  modelRef.current = model;
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the structure decides the layout
  const auto = useMemo(() => autoFlowLayout(modelRef.current), [structure]);
  const shown = model;

  const stored = useMemo(() => readFlowLayout(state.layoutExtra.flow), [state.layoutExtra]);
  const placed = useMemo(() => placeBoxes(shown, auto, stored), [shown, auto, stored]);

  const derived = useMemo<FlowNode[]>(() => {
    const out: FlowNode[] = [];
    const frames = groupFrames(shown, placed.boxes);
    const collapsedByCall = new Map(shown.groups.filter((g) => g.collapsed && g.call).map((g) => [`${g.call?.node}#${g.call?.index}`, g.id]));
    for (const g of shown.groups) {
      const f = frames.get(g.id);
      if (!f || g.collapsed) continue;
      out.push({
        id: `group:${g.id}`,
        type: "flowGroup",
        position: { x: f.x, y: f.y },
        width: f.width,
        height: f.height,
        style: { width: f.width, height: f.height },
        draggable: false,
        selectable: false,
        focusable: false,
        zIndex: 0,
        data: {
          group: g,
          selected: (selection.kind === "nodes" && selection.names.includes(g.node)) || (selection.kind === "step" && g.call?.node === selection.node && g.call.index === selection.index),
          mark: compare?.nodes.get(g.node),
          issues: issues.byNode.get(g.node) ?? [],
        },
      });
    }
    for (const box of shown.boxes) {
      const p = placed.boxes[box.id];
      if (!p) continue;
      if (box.kind === "join") {
        out.push({ id: box.id, type: "flowJoin", position: p, ...BOX_SIZES.join, style: BOX_SIZES.join, draggable: false, selectable: false, focusable: false, zIndex: 1, data: { box } });
        continue;
      }
      const node = box.step ? nodeByName(state, box.step.node) : undefined;
      const type = node ? routerTypeOf(node) : "";
      out.push({
        id: box.id,
        type: "flowBox",
        position: p,
        ...BOX_SIZES[box.kind],
        style: BOX_SIZES[box.kind],
        draggable: !readOnly && box.step !== null,
        selectable: false,
        focusable: false,
        zIndex: 1,
        data: {
          box,
          selected: isSelected(box, selection),
          readOnly,
          run: boxRun(box, run),
          mark: boxMark(box, compare),
          issues: boxIssues(box, issues),
          after: box.step && type === "Sequence" ? { node: box.step.node, index: box.step.index + 1 } : null,
          canMove: box.step && node ? [box.step.index > 0, box.step.index < node.steps.length - 1] : [false, false],
          collapsedGroup: box.kind === "call" && box.step ? (collapsedByCall.get(`${box.step.node}#${box.step.index}`) ?? null) : null,
        },
      });
    }
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes
  }, [placed, shown, state.nodes, selection, issues, readOnly, compare, run]);

  const [nodes, setNodes] = useState<FlowNode[]>(derived);
  // With the sizes React Flow measured: else each new copy (a selection, new issues) would have
  // every box mounted again to be measured, in view or not (canvas/measured.ts).
  useEffect(() => setNodes((prev) => keepMeasured(derived, prev)), [derived]);
  // Zoomed far out: React Flow keeps the boxes (the fit, the minimap's frame) but mounts none; the
  // overview layer draws them (canvas/lod.ts, canvas/LodLayer.tsx).
  const low = useLowDetail();
  // The boxes not measured yet come with their handles, so that only those in view are mounted
  // (handles.ts).
  const rfNodes = useMemo(() => (low ? nodes.map((n) => ({ ...n, hidden: true })) : withBoxHandles(nodes)), [nodes, low]);
  const scene = useMemo(
    () =>
      low
        ? flowScene(shown, placed, (b) => isSelected(b, selection), (g) => (selection.kind === "nodes" && selection.names.includes(g.node)) || (selection.kind === "step" && g.call?.node === selection.node && g.call.index === selection.index))
        : null,
    [low, shown, placed, selection],
  );

  // A box out of view that is selected (one just added beside the picture, or selected in a
  // panel) or reached with Tab is brought into view, at the same zoom.
  const flow = useReactFlow();
  const canvasRef = useRef<HTMLDivElement>(null);
  const placedRef = useRef(placed);
  placedRef.current = placed;
  const reveal = useCallback(
    (box: FlowBox) => {
      const p = placedRef.current?.boxes[box.id];
      const el = canvasRef.current;
      if (!p || !el) return;
      const { x, y, zoom } = flow.getViewport();
      const size = BOX_SIZES[box.kind];
      const left = p.x * zoom + x;
      const top = p.y * zoom + y;
      if (left >= 0 && top >= 0 && left + size.width * zoom <= el.clientWidth && top + size.height * zoom <= el.clientHeight) return;
      void flow.setCenter(p.x + size.width / 2, p.y + size.height / 2, { zoom, duration: 250 });
    },
    [flow],
  );
  useEffect(() => {
    const box = shown.boxes.find((b) => isSelected(b, selection));
    if (box) reveal(box);
  }, [selection, placed, shown, reveal]);

  // Arrow keys on a box: the focus goes to the nearest box that way (navigate.ts), brought into
  // view first (with many boxes only those in view are rendered).
  const shownRef = useRef(shown);
  shownRef.current = shown;
  const focusNear = useCallback(
    (from: FlowBox, direction: Direction) => {
      const at = placedRef.current;
      if (!at) return;
      const centres = new Map<string, Position>();
      for (const b of shownRef.current.boxes) {
        const p = at.boxes[b.id];
        if (p && b.kind !== "join") centres.set(b.id, { x: p.x + BOX_SIZES[b.kind].width / 2, y: p.y + BOX_SIZES[b.kind].height / 2 });
      }
      const id = nearestBox(from.id, direction, centres);
      const to = shownRef.current.boxes.find((b) => b.id === id);
      if (!to) return;
      reveal(to);
      const body = () => canvasRef.current?.querySelector<HTMLElement>(`.flow-box[data-box="${CSS.escape(to.id)}"] .flow-box-body`);
      const now = body();
      if (now) now.focus();
      else window.setTimeout(() => body()?.focus(), 300);
    },
    [reveal],
  );

  // The first picture opens readable (viewport.ts): fitted, but never smaller than readable, at
  // the start of the flow. Worked out once, when the canvas has its size (measured before the
  // first paint) and React Flow mounts.
  const [canvasSize, setCanvasSize] = useState<{ width: number; height: number } | null>(null);
  useLayoutEffect(() => {
    const el = canvasRef.current;
    if (el) setCanvasSize({ width: el.clientWidth, height: el.clientHeight });
  }, []);
  const opening = useRef<Viewport | null>(null);
  if (!opening.current && canvasSize?.width) {
    const rects = shown.boxes.flatMap((b) => (placed.boxes[b.id] ? [{ ...placed.boxes[b.id], ...BOX_SIZES[b.kind] }] : []));
    const bounds = boundsOf([...rects, ...groupFrames(shown, placed.boxes).values()]);
    if (bounds) opening.current = firstViewport(bounds, canvasSize.width, canvasSize.height);
  }

  const edges = useMemo<FlowArrow[]>(() => {
    if (low) return [];
    const byId = new Map(shown.boxes.map((b) => [b.id, b]));
    const seenInsert = new Set<string>();
    return shown.arrows.map((a) => {
      // One "+" per place in the document, on the first arrow that leads there.
      const key = a.insert ? `${a.insert.node}#${a.insert.index}#${a.insert.wrap ?? ""}` : "";
      const plus = !readOnly && a.insert !== null && a.kind !== "order" && !seenInsert.has(key);
      if (plus) seenInsert.add(key);
      const to = byId.get(a.to);
      const toRun = to ? boxRun(to, run) : null;
      return {
        id: a.id,
        source: a.from,
        target: a.to,
        type: "flowArrow",
        selectable: false,
        deletable: false,
        markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14 },
        data: {
          kind: a.kind,
          label: a.label,
          points: placed.routes[a.id] ?? null,
          labelAt: placed.labels[a.id] ?? null,
          insert: plus ? a.insert : null,
          between: `between ${byId.get(a.from)?.kind === "join" ? "the join" : (byId.get(a.from)?.title ?? a.from)} and ${to?.title ?? a.to}`,
          run: toRun && toRun.status !== "not-reached" && toRun.status !== "not-taken" ? toRun.status : null,
        },
      };
    });
  }, [placed, shown, readOnly, run, low]);

  const apply = useCallback(
    (fe: FlowEdit | null) => {
      if (!fe || readOnly) return;
      onEdit(fe.edit, fe.select ? { kind: "step", node: fe.select.node, index: fe.select.index } : { kind: "none" });
    },
    [onEdit, readOnly],
  );

  const actions = useMemo<FlowActions>(
    () => ({
      select: (box) => {
        if (box.step) onSelect({ kind: "step", node: box.step.node, index: box.step.index });
        else if (box.node && box.kind !== "exit") onSelect({ kind: "nodes", names: [box.node] });
        else onSelect({ kind: "none" });
      },
      reveal,
      focusNear,
      selectGroup: (group) => onSelect(group.call ? { kind: "step", node: group.call.node, index: group.call.index } : { kind: "nodes", names: [group.node] }),
      insert: (at) => apply(insertModel(live.current, at)),
      parallel: (ref) => apply(addParallel(live.current, ref)),
      conditional: (ref) => apply(addConditional(live.current, ref)),
      split: (ref) => apply(addSplit(live.current, ref)),
      remove: (ref) => apply(deleteBox(live.current, ref)),
      move: (ref, delta) => apply(moveAlong(live.current, ref, delta)),
      toggleGroup: (id) =>
        setCollapsed((prev) => {
          const next = new Set(prev);
          if (next.has(id)) next.delete(id);
          else next.add(id);
          return next;
        }),
    }),
    [apply, onSelect, reveal, focusNear],
  );

  const onNodesChange = useCallback((changes: NodeChange<FlowNode>[]) => {
    // Only drags move boxes here; selection is the editor's (see `actions.select`).
    const moves = changes.filter((c) => c.type === "position" || c.type === "dimensions");
    if (moves.length) setNodes((prev) => applyNodeChanges(moves, prev));
  }, []);

  const onNodeDragStop = useCallback(
    (_: unknown, dragged: Node) => {
      const box = shown.boxes.find((b) => b.id === dragged.id);
      if (!box?.step) return;
      const p: Position = { x: Math.round(dragged.position.x), y: Math.round(dragged.position.y) };
      const node = nodeByName(live.current, box.step.node);
      // Dropped past a sibling along its chain: the step moves there in the document.
      const centers = new Map<number, Position>();
      for (const b of shown.boxes) {
        const at = placed.boxes[b.id];
        if (!b.step || b.step.node !== box.step.node || b.group !== box.group || !at) continue;
        centers.set(b.step.index, { x: at.x + BOX_SIZES[b.kind].width / 2, y: at.y + BOX_SIZES[b.kind].height / 2 });
      }
      // A step that calls a node drawn inline is its group's frame.
      const frames = groupFrames(shown, placed.boxes);
      for (const g of shown.groups) {
        const f = frames.get(g.id);
        if (f && g.call?.node === box.step.node && g.parent === box.group) centers.set(g.call.index, { x: f.x + f.width / 2, y: f.y + f.height / 2 });
      }
      const size = BOX_SIZES[box.kind];
      const to = node ? dropIndex(routerTypeOf(node), box.step.index, { x: p.x + size.width / 2, y: p.y + size.height / 2 }, centers) : null;
      if (to !== null) {
        apply(moveAlong(live.current, box.step, to - box.step.index));
        setNodes((prev) => keepMeasured(derived, prev));
        return;
      }
      onEdit({ type: "moveFlowBoxes", positions: { [box.layoutKey]: p } });
    },
    [shown, placed, apply, onEdit, derived],
  );

  // A step or service dragged from the palette: on a box, on an arrow or on the canvas (drop.ts);
  // while it is dragged, a line at the top of the canvas says what the drop would do.
  const [dropNote, setDropNote] = useState<string | null>(null);
  const targetAt = (e: DragEvent): DropTarget => {
    const point = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    return dropTarget(shown, placed, point, ARROW_REACH / flow.getViewport().zoom);
  };
  const onDragOver = (e: DragEvent) => {
    if (readOnly || !e.dataTransfer.types.includes(PALETTE_MIME)) return;
    const target = targetAt(e);
    if (!target) return;
    const router = draggedRouter(e.dataTransfer.types, PALETTE_ROUTER_MIME);
    if (router) {
      // A router type applies to a box only; elsewhere the drop is refused, and the note says why.
      const hint = routerHint(router, target);
      setDropNote(hint ?? "Drop an Ensemble, Switch or Splitter on a box");
      if (!hint) return;
    } else {
      const titles = new Map(shown.boxes.map((b) => [b.id, b.title]));
      setDropNote(dropHint(target, titles, (b) => isBlank(live.current, b)));
    }
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
  };
  // Leaving one element inside the canvas for another also fires dragleave (after the next
  // element's dragenter): only a pointer outside the canvas ends the note.
  const onDragLeave = (e: DragEvent) => {
    const r = canvasRef.current?.getBoundingClientRect();
    if (!r || e.clientX <= r.left || e.clientX >= r.right || e.clientY <= r.top || e.clientY >= r.bottom) setDropNote(null);
  };
  const onDrop = (e: DragEvent) => {
    setDropNote(null);
    const item = readOnly ? null : parsePalette(e.dataTransfer.getData(PALETTE_MIME));
    const target = targetAt(e);
    if (!item || !target) return;
    e.preventDefault();
    if (item.kind === "node") {
      const ref = target.kind === "box" ? target.box.step : null;
      if (!ref) return;
      if (item.routerType === "Ensemble") apply(addParallel(live.current, ref));
      else if (item.routerType === "Switch") apply(addConditional(live.current, ref));
      else if (item.routerType === "Splitter") apply(addSplit(live.current, ref));
      return;
    }
    if (!item.target) return;
    const model: NewModel = item.service ? { name: item.service, target: "serviceName", value: item.service } : { name: "model", target: item.target, value: item.target === "serviceUrl" ? "http://" : "" };
    const state = live.current;
    if (target.kind === "box" && target.box.step) apply(dropOnBox(state, target.box.step, model));
    else if (target.kind === "arrow") apply(insertModel(state, target.at, model));
    else apply(appendModel(state, model));
  };

  // The boxes are one composited layer (flow.css): a pan repaints nothing. After a zoom the layer
  // is drawn again at the new zoom (else it would be the old drawing, scaled and blurred).
  const drawnZoom = useRef<number | null>(null);
  const onMoveEnd = useCallback((_: unknown, viewport: Viewport) => {
    const el = canvasRef.current;
    if (!el || drawnZoom.current === viewport.zoom) return;
    drawnZoom.current = viewport.zoom;
    el.classList.add("flow-rescale");
    requestAnimationFrame(() => requestAnimationFrame(() => el.classList.remove("flow-rescale")));
  }, []);

  const boxCount = shown.boxes.length;
  const selectBox = useCallback(
    (box: LodBox) => {
      const group = shown.groups.find((g) => `group:${g.id}` === box.id);
      const flowBox = group ? undefined : shown.boxes.find((b) => b.id === box.id);
      if (group) actions.selectGroup(group);
      else if (flowBox) actions.select(flowBox);
    },
    [shown, actions],
  );

  return (
    <FlowActionsContext.Provider value={actions}>
      <div ref={canvasRef} className="canvas flow-canvas" onDragOver={onDragOver} onDragLeave={onDragLeave} onDrop={onDrop} data-readonly={readOnly ? "true" : undefined} data-laid-out={canvasSize ? "true" : undefined} data-detail={low ? "low" : "full"}>
        {canvasSize && (
          <ReactFlow<FlowNode, FlowArrow>
            nodes={rfNodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            onNodesChange={onNodesChange}
            onNodeDragStop={onNodeDragStop}
            onPaneClick={() => onSelect({ kind: "none" })}
            onMoveEnd={onMoveEnd}
            defaultViewport={opening.current ?? undefined}
            fitView={opening.current === null}
            fitViewOptions={{ padding: 0.15, maxZoom: 1.2, includeHiddenNodes: true }}
            minZoom={0.1}
            maxZoom={2.5}
            nodesDraggable={!readOnly}
            nodesConnectable={false}
            elementsSelectable={false}
            nodesFocusable={false}
            edgesFocusable={false}
            deleteKeyCode={null}
            onlyRenderVisibleElements={boxCount >= 200 && !low}
            proOptions={{ hideAttribution: true }}
          >
            <FlowDots gap={18} size={1} />
            <Controls showInteractive={false} position="bottom-left" fitViewOptions={{ includeHiddenNodes: true }} />
            {boxCount >= 12 && !low && <MiniMap pannable zoomable position="bottom-right" ariaLabel="Minimap" />}
            {scene && <LodLayer scene={scene} onSelect={selectBox} focusSelector={boxFocus} noun="boxes" minimap={boxCount >= 12 ? { width: 200, height: 150 } : null} />}
          </ReactFlow>
        )}
        {dropNote && (
          <div className="flow-drop-note" role="status">
            {dropNote}
          </div>
        )}
      </div>
    </FlowActionsContext.Provider>
  );
}
