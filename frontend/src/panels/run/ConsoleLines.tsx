/**
 * The console's list of lines. A long run's list (WINDOW_FROM lines or more) renders only the
 * lines in view and a few either side (windowing.ts), with two spacers holding the height of the
 * others, so a 10,000-step run keeps a few dozen rows in the DOM and scrolls as one list. Lines
 * are measured once rendered (an expanded one is taller) and placed by their measured heights.
 */
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { ConsoleLine } from "./console";
import { ROW_HEIGHT, WINDOW_FROM, rowOffsets, visibleWindow } from "./windowing";

/** A step on the canvas whose console line should be shown: node and step index. */
export interface Reveal {
  node: string;
  index: number;
}

export function ConsoleLines({
  lines,
  attempt,
  reveal,
  renderLine,
}: {
  lines: ConsoleLine[];
  attempt: number;
  reveal: Reveal | null;
  renderLine: (line: ConsoleLine) => ReactNode;
}) {
  const listRef = useRef<HTMLOListElement>(null);
  const windowed = lines.length >= WINDOW_FROM;
  const heights = useRef(new Map<string, number>());
  const [measured, setMeasured] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const frame = useRef<number | null>(null);

  const offsets = useMemo(
    () => (windowed ? rowOffsets(lines.length, (i) => heights.current.get(lines[i].key) ?? ROW_HEIGHT) : new Float64Array(1)),
    // `measured` changes when a rendered line's height does
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [lines, windowed, measured],
  );
  const win = windowed ? visibleWindow(offsets, view.top, view.height) : { start: 0, end: lines.length, before: 0, after: 0 };

  const onScroll = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      const el = listRef.current;
      if (el) setView({ top: el.scrollTop, height: el.clientHeight });
    });
  }, []);
  useEffect(() => () => {
    if (frame.current !== null) cancelAnimationFrame(frame.current);
  }, []);

  // Measure the lines rendered; a height that changed moves the lines below it.
  useLayoutEffect(() => {
    const el = listRef.current;
    if (!windowed || !el) return;
    let changed = false;
    for (const li of el.querySelectorAll<HTMLElement>(":scope > li[data-line-key]")) {
      const key = li.dataset.lineKey!;
      const h = li.offsetHeight;
      if (h > 0 && Math.abs((heights.current.get(key) ?? ROW_HEIGHT) - h) > 0.5) {
        heights.current.set(key, h);
        changed = true;
      }
    }
    if (el.clientHeight && el.clientHeight !== view.height) setView((v) => ({ ...v, height: el.clientHeight }));
    if (changed) setMeasured((m) => m + 1);
    // after every render of the lines (an expanded line's new height comes with a new renderLine)
  }, [windowed, view.height, lines, win.start, win.end, renderLine]);

  // A step selected on the canvas reveals its console line (of the current attempt).
  const revealKey = reveal ? `${reveal.node}#${reveal.index}` : null;
  useEffect(() => {
    const el = listRef.current;
    if (!reveal || !el) return;
    if (!windowed) {
      const li = [...el.querySelectorAll<HTMLElement>(".console-step:not(.stale)")].find((l) => l.dataset.node === reveal.node && l.dataset.step === String(reveal.index));
      li?.scrollIntoView({ block: "nearest" });
      return;
    }
    const matches = (l: ConsoleLine) => l.kind === "step" && l.attempt === attempt && l.node === reveal.node && l.stepIndex === reveal.index;
    // A step called many times (a loop) has many lines: one in view (the one clicked) will do.
    const shown = visibleWindow(offsets, el.scrollTop, el.clientHeight, 0);
    if (lines.slice(shown.start, shown.end).some(matches)) return;
    const at = lines.findIndex(matches);
    if (at < 0) return;
    const top = offsets[at];
    const bottom = offsets[at + 1];
    if (top < el.scrollTop) el.scrollTop = top;
    else if (bottom > el.scrollTop + el.clientHeight) el.scrollTop = bottom - el.clientHeight;
    setView({ top: el.scrollTop, height: el.clientHeight });
    // only when the selection changes, not on every new line
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [revealKey]);

  return (
    <ol className={`console-lines${windowed ? " windowed" : ""}`} ref={listRef} aria-label="Steps" onScroll={windowed ? onScroll : undefined} data-lines={lines.length}>
      {win.before > 0 && <li className="console-spacer" aria-hidden="true" style={{ height: win.before }} />}
      {lines.slice(win.start, win.end).map(renderLine)}
      {win.after > 0 && <li className="console-spacer" aria-hidden="true" style={{ height: win.after }} />}
    </ol>
  );
}
