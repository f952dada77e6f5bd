/**
 * The run console's two views of its steps, under their tabs: the step lines (a click expands a
 * line and selects its step on the canvas; a step selected on the canvas is revealed) and the
 * waterfall (a click on a bar picks the step, whose details show below it). What is expanded or
 * picked belongs to one run and is forgotten when the console shows another.
 */
import { useEffect, useMemo, useState } from "react";
import type { Selection } from "../../graph/selection";
import type { ConsoleState, StepLine } from "./console";
import { ConsoleLines } from "./ConsoleLines";
import { lazyComponent } from "../../common/lazyChunk";
import { LineView } from "./StepViews";
import { ConsoleViewTabs, PickedStep, type ConsoleView } from "./RunConsoleParts";

// The waterfall loads when its tab is first shown.
const Waterfall = lazyComponent(() => import("./Waterfall").then((m) => m.Waterfall), "waterfall");

export function ConsoleViewPanel({
  c,
  now,
  view,
  onView,
  selection,
  soft,
  onSelectStep,
}: {
  c: ConsoleState;
  now: number;
  view: ConsoleView;
  onView: (view: ConsoleView) => void;
  selection: Selection;
  soft: StepLine[];
  onSelectStep: (node: string, index: number) => void;
}) {
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [picked, setPicked] = useState<string | null>(null);

  useEffect(() => {
    setExpanded(new Set());
    setPicked(null);
  }, [c.runId]);

  const reveal = useMemo(() => (selection.kind === "step" ? { node: selection.node, index: selection.index } : null), [selection]);

  const toggle = (line: StepLine) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(line.key)) next.delete(line.key);
      else next.add(line.key);
      return next;
    });
    if (line.stepIndex !== null) onSelectStep(line.node, line.stepIndex);
  };

  const pick = (line: StepLine) => {
    setPicked(line.key);
    if (line.stepIndex !== null) onSelectStep(line.node, line.stepIndex);
  };
  const pickedIndex = picked !== null ? c.index[picked] : undefined;
  const pickedLine = pickedIndex !== undefined ? c.lines[pickedIndex] : undefined;

  return (
    <>
      <ConsoleViewTabs view={view} onView={onView} />
      <div id="console-view" role="tabpanel" aria-labelledby={view === "lines" ? "console-tab-lines" : "console-tab-waterfall"}>
        {view === "waterfall" && (
          <>
            <Waterfall state={c} now={now} picked={picked} onPick={pick} />
            {pickedLine && pickedLine.kind === "step" && <PickedStep line={pickedLine} />}
          </>
        )}
        {view === "lines" && (
          <ConsoleLines
            lines={c.lines}
            attempt={c.attempt}
            reveal={reveal}
            renderLine={(line) => (
              <LineView
                key={line.key}
                line={line}
                current={line.kind === "note" || line.attempt === c.attempt}
                selected={line.kind === "step" && selection.kind === "step" && selection.node === line.node && selection.index === line.stepIndex && line.attempt === c.attempt}
                expanded={expanded.has(line.key)}
                soft={line.kind === "step" && soft.includes(line)}
                onToggle={() => line.kind === "step" && toggle(line)}
              />
            )}
          />
        )}
      </div>
    </>
  );
}
