/**
 * The Flow view: the graph as boxes and arrows (project.ts), laid out along their series-parallel
 * shape (layout.ts, synchronous: milliseconds for a thousand steps), edited through the same edits
 * as the Nodes view (edits.ts). It takes the same props as the Nodes view's Canvas: selection, run
 * marks, comparison marks and validation issues show in both.
 */
import { ControlButton, Controls, MarkerType, MiniMap, ReactFlow, applyNodeChanges, useReactFlow, type Node, type NodeChange } from "@xyflow/react";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type DragEvent } from "react";
import { flowScene } from "./flowScene";
import { LodLayer } from "../canvas/LodLayer";
import { keepMeasured } from "../canvas/measured";
import type { LodBox } from "../canvas/lodScene";
import { useLowDetail } from "../canvas/useLowDetail";
import { parsePalette, type GraphViewProps } from "../canvas/Canvas";
import { PALETTE_MIME, PALETTE_ROUTER_MIME } from "../canvas/RouterNode";
import { nodeByName, routerTypeOf, stepTarget } from "../graph/queries";
import type { GraphState, Position } from "../graph/types";
import type { Selection } from "../graph/selection";
import { FlowArrowEdge, type FlowArrow } from "./FlowArrowEdge";
import { FlowDots } from "./FlowDots";
import { FlowActionsContext, FlowDirectionContext, FlowBoxNode, FlowGroupNode, FlowJoinNode, type FlowActions, type FlowBoxFlowNode, type FlowGroupFlowNode, type FlowJoinFlowNode } from "./FlowBoxNode";
import { draggedRouter, dropHint, dropTarget, routerHint, type DropTarget } from "./drop";
import { addConditional, addParallel, addSplit, appendModel, deleteBox, dropIndex, dropOnBox, insertModel, moveAlong, type FlowEdit, type NewModel } from "./edits";
import { withBoxHandles } from "./handles";
import { autoFlowLayout, BOX_SIZES, groupFrames, placeBoxes, type FlowDirection, type FlowLayout } from "./layout";
import { boxIssues, boxMark, boxRun } from "./marks";
import { project, readFlowLayout, type FlowBox, type FlowModel } from "./project";
import { nearestBox, type Direction } from "./navigate";
import { bestFit, boundsOf, commonShift, firstViewport, type Viewport } from "./viewport";
import { loadDirection, saveDirection, type DirectionPref } from "./viewPref";
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

/** The rectangle around every box and frame drawn (flow coordinates). */
function pictureBounds(model: FlowModel, placed: FlowLayout) {
  const rects = model.boxes.flatMap((b) => (placed.boxes[b.id] ? [{ ...placed.boxes[b.id], ...BOX_SIZES[b.kind] }] : []));
  return boundsOf([...rects, ...groupFrames(model, placed.boxes).values()]);
}

function browserStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** Room kept between a box brought into view and the canvas's edge, in screen pixels: enough
 * for the arrow out of it and its "+" (where the next model goes). */
const REVEAL_MARGIN = 96;

/** A box's body, which takes the focus when a key opens the box from the overview. */
const boxFocus = (id: string) => `.flow-box[data-box="${CSS.escape(id)}"] .flow-box-body`;

/** The saved viewport is the Nodes view's: the Flow view fits its picture into view instead. */
const NO_SERVICES: readonly string[] = [];

export function FlowCanvas({ state, selection, issues, readOnly, compare, run, contracts, services = NO_SERVICES, onEdit, onSelect }: GraphViewProps) {
  const live = useRef(state);
  live.current = state;
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  // Keyed on `state.nodes`: a pan changes only the viewport and must not rebuild the picture.
  // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only state.nodes
  const model = useMemo(() => project(state, { collapsed }), [state.nodes, collapsed]);
  const structure = useMemo(() => structureOf(model), [model]);
  const modelRef = useRef(model);
  modelRef.current = model;

  // The canvas's size, measured before the first paint: the first picture is chosen and fitted for it.
  const canvasRef = useRef<HTMLDivElement>(null);
  const [canvasSize, setCanvasSize] = useState<{ width: number; height: number } | null>(null);
  useLayoutEffect(() => {
    const el = canvasRef.current;
    if (el) setCanvasSize({ width: el.clientWidth, height: el.clientHeight });
  }, []);

  // Left to right or top to bottom: the user's choice (the button in the canvas's controls,
  // remembered), else the one whose fit shows the graph larger in this canvas, chosen once on
  // opening (an edit or a resize does not turn the picture round).
  const [directionPref, setDirectionPref] = useState<DirectionPref>(() => loadDirection(browserStorage()));
  const autoDirection = useMemo<FlowDirection>(() => {
    if (!canvasSize) return "LR";
    const m = modelRef.current;
    const pictures = (["LR", "TB"] as const).map((key) => ({ key, bounds: pictureBounds(m, autoFlowLayout(m, key)) }));
    return bestFit(pictures, canvasSize.width, canvasSize.height) ?? "LR";
  }, [canvasSize]);
  const direction: FlowDirection = directionPref === "auto" ? autoDirection : directionPref;

  // Laid out anew only when the structure or the direction changes (a label, a mark or a pan does
  // not); the layout takes milliseconds (layout.ts), so the first picture needs no waiting.
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the structure decides the layout
  const auto = useMemo(() => autoFlowLayout(modelRef.current, direction), [structure, direction]);
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
        // A selected box's actions lie over its neighbours.
        zIndex: isSelected(box, selection) ? 3 : 1,
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
          contract: box.targetKind === "serviceName" && box.subtitle ? (contracts?.[box.subtitle] ?? null) : null,
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
  const rfNodes = useMemo(() => (low ? nodes.map((n) => ({ ...n, hidden: true })) : withBoxHandles(nodes, direction)), [nodes, low, direction]);
  const scene = useMemo(
    () =>
      low
        ? flowScene(shown, placed, (b) => isSelected(b, selection), (g) => (selection.kind === "nodes" && selection.names.includes(g.node)) || (selection.kind === "step" && g.call?.node === selection.node && g.call.index === selection.index))
        : null,
    [low, shown, placed, selection],
  );

  // A box out of view that is selected (one just added beside the picture, or selected in a
  // panel) or reached with Tab is brought into view, at the same zoom, by the least pan that
  // shows it: the boxes around it stay where they were on screen.
  const flow = useReactFlow();
  const placedRef = useRef(placed);
  placedRef.current = placed;
  const revealFrom = useCallback(
    (box: FlowBox, from: Viewport): Viewport | null => {
      const p = placedRef.current?.boxes[box.id];
      const el = canvasRef.current;
      if (!p || !el) return null;
      const { x, y, zoom } = from;
      const size = BOX_SIZES[box.kind];
      const left = p.x * zoom + x;
      const top = p.y * zoom + y;
      const right = left + size.width * zoom;
      const bottom = top + size.height * zoom;
      const shift = (lo: number, hi: number, room: number) => {
        const margin = Math.min(REVEAL_MARGIN, Math.max(0, (room - (hi - lo)) / 2));
        if (lo < 0) return margin - lo;
        if (hi > room) return Math.max(room - margin - hi, margin - lo);
        return 0;
      };
      const dx = shift(left, right, el.clientWidth);
      const dy = shift(top, bottom, el.clientHeight);
      return dx || dy ? { x: x + dx, y: y + dy, zoom } : null;
    },
    [],
  );
  const reveal = useCallback(
    (box: FlowBox) => {
      const to = revealFrom(box, flow.getViewport());
      if (to) void flow.setViewport(to, { duration: 250 });
    },
    [flow, revealFrom],
  );
  // A new layout (a drop, an insert, a deletion) keeps the user's place: when the boxes that
  // were in view all moved the same way (a branch added above them), the view follows them, so
  // that they stay where they were on screen; then the selected box is brought into view if it
  // is not.
  const previousPlaced = useRef(placed);
  useEffect(() => {
    const before = previousPlaced.current;
    previousPlaced.current = placed;
    const el = canvasRef.current;
    let view = flow.getViewport();
    let changed = false;
    if (before !== placed && el) {
      const shift = commonShift(before, placed, { x: -view.x / view.zoom, y: -view.y / view.zoom, width: el.clientWidth / view.zoom, height: el.clientHeight / view.zoom });
      if (shift) {
        view = { x: view.x - shift.x * view.zoom, y: view.y - shift.y * view.zoom, zoom: view.zoom };
        changed = true;
      }
    }
    const box = shown.boxes.find((b) => isSelected(b, selection));
    const revealed = box ? revealFrom(box, view) : null;
    if (revealed) void flow.setViewport(revealed, { duration: changed ? 0 : 250 });
    else if (changed) void flow.setViewport(view);
  }, [selection, placed, shown, revealFrom, flow]);

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
  // first paint) and React Flow mounts; again when the user turns the picture round.
  const opening = useRef<Viewport | null>(null);
  if (!opening.current && canvasSize?.width) {
    const bounds = pictureBounds(shown, placed);
    if (bounds) opening.current = firstViewport(bounds, canvasSize.width, canvasSize.height);
  }
  const turnedTo = useRef(direction);
  useEffect(() => {
    const el = canvasRef.current;
    if (turnedTo.current === direction || !el) return;
    turnedTo.current = direction;
    const bounds = pictureBounds(shown, placed);
    if (bounds) void flow.setViewport(firstViewport(bounds, el.clientWidth, el.clientHeight), { duration: 200 });
  }, [direction, shown, placed, flow]);
  const turn = () => {
    const next: FlowDirection = direction === "LR" ? "TB" : "LR";
    setDirectionPref(next);
    saveDirection(browserStorage(), next);
  };

  // Comparing versions: the changed steps are brought into view (fitted, never below readable)
  // when they are not all in view already.
  useEffect(() => {
    const el = canvasRef.current;
    if (!compare || !el) return;
    const at = placedRef.current;
    const rects = shownRef.current.boxes.flatMap((b) => (boxMark(b, compare) && at.boxes[b.id] ? [{ ...at.boxes[b.id], ...BOX_SIZES[b.kind] }] : []));
    const bounds = boundsOf(rects);
    if (!bounds) return;
    const { x, y, zoom } = flow.getViewport();
    const inView = bounds.x * zoom + x >= 0 && bounds.y * zoom + y >= 0 && (bounds.x + bounds.width) * zoom + x <= el.clientWidth && (bounds.y + bounds.height) * zoom + y <= el.clientHeight;
    if (!inView) void flow.setViewport(firstViewport(bounds, el.clientWidth, el.clientHeight), { duration: 300 });
  }, [compare, flow]);

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
      insert: (at, service) => apply(insertModel(live.current, at, service ? { name: service, target: "serviceName", value: service } : undefined)),
      services,
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
    [apply, onSelect, reveal, focusNear, services],
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
      const to = node ? dropIndex(routerTypeOf(node), box.step.index, { x: p.x + size.width / 2, y: p.y + size.height / 2 }, centers, direction === "TB") : null;
      if (to !== null) {
        apply(moveAlong(live.current, box.step, to - box.step.index));
        setNodes((prev) => keepMeasured(derived, prev));
        return;
      }
      onEdit({ type: "moveFlowBoxes", positions: { [box.layoutKey]: p } });
    },
    [shown, placed, apply, onEdit, derived, direction],
  );

  // A step or service dragged from the palette: on a box, on an arrow or on the canvas (drop.ts);
  // while it is dragged, a line at the top of the canvas says what the drop would do.
  const [dropNote, setDropNote] = useState<string | null>(null);
  const targetAt = (e: DragEvent): DropTarget => {
    const point = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    return dropTarget(shown, placed, point, ARROW_REACH / flow.getViewport().zoom, direction);
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
     <FlowDirectionContext.Provider value={direction}>
      <div ref={canvasRef} className="canvas flow-canvas" data-direction={direction} onDragOver={onDragOver} onDragLeave={onDragLeave} onDrop={onDrop} data-readonly={readOnly ? "true" : undefined} data-laid-out={canvasSize ? "true" : undefined} data-detail={low ? "low" : "full"}>
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
            <Controls showInteractive={false} position="bottom-left" fitViewOptions={{ includeHiddenNodes: true }}>
              <ControlButton onClick={turn} className="flow-turn" aria-label={direction === "LR" ? "Lay out top to bottom" : "Lay out left to right"} title={`${direction === "LR" ? "Lay out top to bottom" : "Lay out left to right"}${directionPref === "auto" ? " (the view chose this way for this window)" : ""}`}>
                <span aria-hidden="true">{direction === "LR" ? "↓" : "→"}</span>
              </ControlButton>
            </Controls>
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
     </FlowDirectionContext.Provider>
    </FlowActionsContext.Provider>
  );
}
