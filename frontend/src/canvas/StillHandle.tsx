/**
 * A connection handle that only marks where an edge ends: the same element React Flow's `Handle`
 * draws (its classes and `data-*` attributes, from which React Flow measures where each handle
 * sits on its node), without the store subscription every `Handle` holds. React Flow runs every
 * subscription on every frame of a pan; zoomed far out (canvas/lod.ts), where nothing connects,
 * a graph of hundreds of cards then pays for hundreds of handles per frame for nothing.
 */
import { Position } from "@xyflow/react";
import type { CSSProperties } from "react";

export function StillHandle({ type, position, id, nodeId, className, style }: { type: "source" | "target"; position: Position; id?: string; nodeId: string; className?: string; style?: CSSProperties }) {
  return (
    <div
      className={["react-flow__handle", `react-flow__handle-${position}`, "nodrag", "nopan", type, className].filter(Boolean).join(" ")}
      data-handleid={id ?? null}
      data-nodeid={nodeId}
      data-handlepos={position}
      style={style}
    />
  );
}
