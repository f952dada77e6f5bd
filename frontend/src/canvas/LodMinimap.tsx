/**
 * The minimap while the overview layer is drawn (LodLayer.tsx). React Flow's own minimap shows
 * only the nodes it mounts and frames itself on them, so with none mounted it would follow the
 * viewport around; this one draws the overview's boxes in the same look (React Flow's minimap
 * classes) and, like it, pans the canvas when dragged and zooms it with the wheel.
 */
import { Panel, useReactFlow, useStore, type ReactFlowState } from "@xyflow/react";
import { memo, useRef, type PointerEvent, type WheelEvent } from "react";
import type { Rect } from "../graph/placement";
import type { LodBox } from "./lodScene";

const selectView = (s: ReactFlowState) => `${s.transform[0]},${s.transform[1]},${s.transform[2]},${s.width},${s.height}`;
/** Room around the picture, in minimap pixels (React Flow's `offsetScale`). */
const OFFSET = 5;

const Boxes = memo(function Boxes({ boxes }: { boxes: LodBox[] }) {
  return (
    <g>
      {boxes.map((b) => (
        <rect key={b.id} className="react-flow__minimap-node lod-minimap-node" x={b.x} y={b.y} width={b.width} height={b.height} rx={5} fill={b.stroke} />
      ))}
    </g>
  );
});

export function LodMinimap({ boxes, bounds, width, height }: { boxes: LodBox[]; bounds: Rect; width: number; height: number }) {
  const [tx, ty, zoom, w, h] = useStore(selectView).split(",").map(Number);
  const flow = useReactFlow();
  const svg = useRef<SVGSVGElement>(null);
  const view = { x: -tx / zoom, y: -ty / zoom, width: w / zoom, height: h / zoom };
  const x0 = Math.min(bounds.x, view.x);
  const y0 = Math.min(bounds.y, view.y);
  const all = { x: x0, y: y0, width: Math.max(bounds.x + bounds.width, view.x + view.width) - x0, height: Math.max(bounds.y + bounds.height, view.y + view.height) - y0 };
  const scale = Math.max(all.width / width, all.height / height);
  const offset = OFFSET * scale;
  const vx = all.x - (scale * width - all.width) / 2 - offset;
  const vy = all.y - (scale * height - all.height) / 2 - offset;
  const vw = scale * width + 2 * offset;
  const vh = scale * height + 2 * offset;

  // A press or a drag centres the canvas on the point under the pointer.
  const toFlow = (e: { clientX: number; clientY: number }) => {
    const m = svg.current?.getScreenCTM();
    if (!m) return null;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
    return { x: p.x, y: p.y };
  };
  const centre = (e: PointerEvent) => {
    const p = toFlow(e);
    if (p) void flow.setCenter(p.x, p.y, { zoom });
  };
  const onWheel = (e: WheelEvent) => {
    const c = { x: view.x + view.width / 2, y: view.y + view.height / 2 };
    void flow.setCenter(c.x, c.y, { zoom: zoom * 2 ** (-e.deltaY * 0.002) });
  };
  return (
    <Panel position="bottom-right" className="react-flow__minimap lod-minimap" style={{ width, height }}>
      <svg
        ref={svg}
        width={width}
        height={height}
        viewBox={`${vx} ${vy} ${vw} ${vh}`}
        className="react-flow__minimap-svg"
        role="img"
        aria-label="Minimap"
        onPointerDown={(e) => {
          e.currentTarget.setPointerCapture(e.pointerId);
          centre(e);
        }}
        onPointerMove={(e) => {
          if (e.buttons) centre(e);
        }}
        onWheel={onWheel}
      >
        <Boxes boxes={boxes} />
        <path
          className="react-flow__minimap-mask"
          d={`M${vx - offset},${vy - offset}h${vw + offset * 2}v${vh + offset * 2}h${-vw - offset * 2}z M${view.x},${view.y}h${view.width}v${view.height}h${-view.width}z`}
          fillRule="evenodd"
          pointerEvents="none"
        />
      </svg>
    </Panel>
  );
}
