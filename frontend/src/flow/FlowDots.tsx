/**
 * The Flow view's dotted background, drawn so that a pan repaints nothing: React Flow's
 * <Background> is an SVG pattern whose offset changes on every frame of a pan, which repaints the
 * whole canvas each frame (in software rendering, most of a frame's time). Here the dots are the
 * tiled background image of a layer a little larger than the canvas, moved by a CSS transform
 * (the pan modulo one tile: a compositor move) and redrawn only when the zoom changes the tile.
 * Same look: dots of `size` every `gap` flow pixels, scaled with the zoom.
 */
import { useStoreApi } from "@xyflow/react";
import { useEffect, useRef } from "react";

/** The dots' colour: React Flow's default for its dotted background. */
const DOT_COLOUR = "#91919a";

function tile(gap: number, radius: number): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${gap}" height="${gap}"><circle cx="${radius}" cy="${radius}" r="${radius}" fill="${DOT_COLOUR}"/></svg>`;
  return `url("data:image/svg+xml,${encodeURIComponent(svg)}")`;
}

export function FlowDots({ gap, size }: { gap: number; size: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const store = useStoreApi();
  useEffect(() => {
    let zoom = 0;
    const apply = (transform: readonly [number, number, number]) => {
      const el = ref.current;
      if (!el) return;
      const [x, y, z] = transform;
      const step = gap * z;
      if (z !== zoom) {
        zoom = z;
        el.style.backgroundImage = tile(step, (size * z) / 2);
        el.style.backgroundSize = `${step}px ${step}px`;
      }
      // One tile's worth of offset (the layer reaches a tile past each edge of the canvas).
      const mod = (v: number) => (((v - step / 2) % step) + step) % step;
      el.style.transform = `translate(${mod(x) - step}px, ${mod(y) - step}px)`;
    };
    apply(store.getState().transform);
    return store.subscribe((s) => apply(s.transform));
  }, [store, gap, size]);
  return <div ref={ref} className="flow-dots" aria-hidden="true" />;
}
