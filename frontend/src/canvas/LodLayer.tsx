/**
 * The overview layer of both canvases (the Nodes view's Canvas and the Flow view's FlowCanvas):
 * below the low-detail threshold (lod.ts) the views mount none of React Flow's cards and edges and
 * draw this instead, one <canvas> inside React Flow's viewport. A pan moves it with the viewport's
 * CSS transform (no redraw); it is redrawn when the picture or the selection changes, or when the
 * zoom changes enough to need a sharper or lighter bitmap. It answers the pointer (hover names a
 * box, a click selects it, a double-click zooms to it) and the keyboard (Tab or an arrow key
 * selects a box and zooms to it: the view then mounts its cards again, and the card gets the focus).
 */
import { useReactFlow, useStore, ViewportPortal, type ReactFlowState } from "@xyflow/react";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { LodMinimap } from "./LodMinimap";
import { backingScale, drawScene, hitTest, nextBox, OPEN_ZOOM, PAD, sceneBounds, type LodBox, type LodKey, type LodScene } from "./lodScene";

export interface LodLayerProps {
  scene: LodScene;
  /** A click on a box (or a key that reached it). */
  onSelect: (box: LodBox) => void;
  /** The element to focus once a box opened from the keyboard is drawn as a card again. */
  focusSelector: (id: string) => string;
  /** What the boxes are, for the keyboard hint ("nodes", "boxes"). */
  noun: string;
  /** The minimap's size, when the view has one (React Flow's is left out while this layer draws). */
  minimap?: { width: number; height: number } | null;
}

const selectZoom = (s: ReactFlowState) => s.transform[2];
const selectDom = (s: ReactFlowState) => s.domNode;
/** Pointer travel (px) past which a press is a pan, not a click. */
const CLICK_SLOP = 4;
const OPEN_MS = 300;

/** Bitmap scale steps of 1/8 octave: a wheel zoom redraws every ninth of a doubling, not every tick. */
function quantize(scale: number): number {
  return 2 ** (Math.round(Math.log2(scale) * 8) / 8);
}

export function LodLayer({ scene, onSelect, focusSelector, noun, minimap }: LodLayerProps) {
  const zoom = useStore(selectZoom);
  const dom = useStore(selectDom);
  const flow = useReactFlow();
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const bounds = useMemo(() => sceneBounds(scene), [scene]);
  const dpr = typeof window !== "undefined" ? window.devicePixelRatio || 1 : 1;
  const scale = bounds ? quantize(backingScale({ ...bounds, width: bounds.width + 2 * PAD, height: bounds.height + 2 * PAD }, zoom, dpr)) : 1;
  // The zoom the labels were sized for: it follows the bitmap's steps, not every wheel tick.
  const drawZoom = scale / dpr;

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !bounds) return;
    const width = Math.max(1, Math.ceil((bounds.width + 2 * PAD) * scale));
    const height = Math.max(1, Math.ceil((bounds.height + 2 * PAD) * scale));
    if (canvas.width !== width) canvas.width = width;
    if (canvas.height !== height) canvas.height = height;
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    const started = performance.now();
    const stats = drawScene(ctx, scene, { x: bounds.x - PAD, y: bounds.y - PAD }, scale, drawZoom, { width, height });
    // For tests and the benchmark: drawn, with how many boxes, in how long (a React state would
    // re-render).
    canvas.dataset.drawn = "true";
    canvas.dataset.boxes = String(stats.boxes);
    canvas.dataset.drawMs = (performance.now() - started).toFixed(1);
  }, [scene, bounds, scale, drawZoom]);

  // The pointer: React Flow's pane gets every event (the canvas lets them through), so a drag
  // anywhere pans as before; a click or double-click on a box is answered here and goes no further.
  const [hover, setHover] = useState<LodBox | null>(null);
  const live = useRef({ scene, onSelect, flow });
  live.current = { scene, onSelect, flow };
  const open = useCallback(
    (box: LodBox, focus: boolean) => {
      live.current.onSelect(box);
      // Two frames later: after what the selection sets off in the view (the Flow view brings a
      // selected box into view at the current zoom), which would otherwise cut this zoom short.
      const { flow } = live.current;
      requestAnimationFrame(() => requestAnimationFrame(() => void flow.setCenter(box.x + box.width / 2, box.y + box.height / 2, { zoom: OPEN_ZOOM, duration: OPEN_MS })));
      if (!focus) return;
      // The view mounts its cards once the zoom passes the threshold; then the card takes the focus.
      let tries = 0;
      const focusCard = () => {
        const el = dom?.querySelector<HTMLElement>(focusSelector(box.id));
        if (el) el.focus();
        else if (tries++ < 10) window.setTimeout(focusCard, 100);
      };
      window.setTimeout(focusCard, OPEN_MS + 100);
    },
    [dom, focusSelector],
  );
  useEffect(() => {
    const pane = dom?.querySelector<HTMLElement>(".react-flow__pane");
    if (!pane) return;
    let down: { x: number; y: number } | null = null;
    const at = (e: MouseEvent) => hitTest(live.current.scene, live.current.flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    const onDown = (e: MouseEvent) => {
      down = { x: e.clientX, y: e.clientY };
    };
    const onClick = (e: MouseEvent) => {
      const moved = down !== null && Math.hypot(e.clientX - down.x, e.clientY - down.y) > CLICK_SLOP;
      const box = moved ? null : at(e);
      if (!box) return;
      e.stopPropagation();
      live.current.onSelect(box);
    };
    const onDouble = (e: MouseEvent) => {
      const box = at(e);
      if (!box) return;
      // Not React Flow's double-click zoom around the pointer: the box comes to the centre.
      e.stopPropagation();
      e.preventDefault();
      open(box, false);
    };
    const onMove = (e: MouseEvent) => {
      if (e.buttons) return;
      const box = at(e);
      setHover((prev) => (prev?.id === box?.id ? prev : box));
    };
    const onLeave = () => setHover(null);
    pane.addEventListener("mousedown", onDown);
    pane.addEventListener("click", onClick);
    pane.addEventListener("dblclick", onDouble);
    pane.addEventListener("mousemove", onMove);
    pane.addEventListener("mouseleave", onLeave);
    pane.dataset.lod = "true";
    return () => {
      pane.removeEventListener("mousedown", onDown);
      pane.removeEventListener("click", onClick);
      pane.removeEventListener("dblclick", onDouble);
      pane.removeEventListener("mousemove", onMove);
      pane.removeEventListener("mouseleave", onLeave);
      delete pane.dataset.lod;
    };
  }, [dom, open]);
  useEffect(() => {
    const pane = dom?.querySelector<HTMLElement>(".react-flow__pane");
    if (pane) pane.style.cursor = hover ? "pointer" : "";
  }, [dom, hover]);

  const onKeyDown = (e: KeyboardEvent) => {
    const key = e.key as LodKey;
    if (e.key === "Enter") {
      const box = scene.boxes.find((b) => b.selected && !b.frame);
      if (box) {
        e.preventDefault();
        open(box, true);
      }
      return;
    }
    if (!(key === "Tab" ? !e.shiftKey : key.startsWith("Arrow"))) return;
    const from = scene.boxes.find((b) => b.selected && !b.frame)?.id ?? null;
    const box = nextBox(scene, key === "Tab" ? null : from, key);
    if (!box) return;
    e.preventDefault();
    open(box, true);
  };

  const mapBoxes = useMemo(() => scene.boxes.filter((b) => !b.frame && !b.inert), [scene]);

  if (!bounds) return null;
  return (
    <>
      <ViewportPortal>
        <canvas
          ref={canvasRef}
          className="lod-layer"
          aria-hidden="true"
          style={{ position: "absolute", left: bounds.x - PAD, top: bounds.y - PAD, width: bounds.width + 2 * PAD, height: bounds.height + 2 * PAD, pointerEvents: "none" }}
        />
        {hover && (
          <div className="lod-hover" style={{ left: hover.x, top: hover.y, width: hover.width, height: hover.height, borderWidth: 2 / zoom }}>
            <span className="lod-hover-name" role="tooltip" style={{ fontSize: 12 / zoom, transform: `translateY(-100%)` }}>
              {hover.label}
            </span>
          </div>
        )}
      </ViewportPortal>
      <div
        className="lod-keys"
        tabIndex={0}
        role="group"
        aria-label={`Overview of ${mapBoxes.length} ${noun}. Tab or an arrow key selects one and zooms to it; Enter zooms to the selected one.`}
        onKeyDown={onKeyDown}
      />
      {minimap && <LodMinimap boxes={mapBoxes} bounds={bounds} width={minimap.width} height={minimap.height} />}
    </>
  );
}
