import { copyNodes, isClipboardPayload, type Edit } from "../../graph/edits";
import { isObject } from "../../graph/manifest";
import { cardRects, estimateSize, freeOffset, type Size } from "../../graph/placement";
import type { ClipboardPayload, GraphState } from "../../graph/types";
import type { Notice } from "../types";

/** Where copied nodes wait: local storage works between graphs and tabs; the system clipboard is a fallback. */
const CLIPBOARD_KEY = "inference-graph-studio:clipboard";

interface ClipboardOptions {
  /** What the canvas shows (copying works on a viewed version too). */
  displayState: GraphState;
  /** The working copy (pasting goes there). */
  working: GraphState;
  selectedNames: string[];
  readOnly: boolean;
  onEdit: (edit: Edit) => void;
  removeNodes: (names: string[]) => void;
  /** The flow position at the middle of the visible canvas. */
  viewCenter: () => { x: number; y: number };
  measuredSizes: () => Map<string, Size>;
  setNotice: (notice: Notice) => void;
}

/** Copy, cut and paste of nodes. A paste lands in a free spot: next to the originals, or at the view's centre. */
export function useClipboard({ displayState, working, selectedNames, readOnly, onEdit, removeNodes, viewCenter, measuredSizes, setNotice }: ClipboardOptions) {
  const copySelection = (cut: boolean) => {
    const names = selectedNames;
    if (!names.length) return;
    const payload = copyNodes(displayState, names);
    const text = JSON.stringify(payload);
    try {
      localStorage.setItem(CLIPBOARD_KEY, text);
    } catch {
      /* storage may be full or disabled; the system clipboard below may still work */
    }
    void navigator.clipboard?.writeText(text).catch(() => undefined);
    if (cut && !readOnly) removeNodes(names);
    setNotice({ kind: "info", text: `${cut ? "Cut" : "Copied"} ${names.length} node${names.length > 1 ? "s" : ""}.` });
  };

  const pastePayload = (payload: ClipboardPayload) => {
    if (readOnly || !payload.nodes.length) return;
    const minX = Math.min(...payload.nodes.map((n) => n.position.x));
    const minY = Math.min(...payload.nodes.map((n) => n.position.y));
    const sameSpot = payload.nodes.every((n) => working.nodes.some((m) => m.name === n.name));
    const c = viewCenter();
    const wanted = sameSpot ? { x: 40, y: 40 } : { x: c.x - minX, y: c.y - minY };
    const placed = payload.nodes.map((n) => ({ ...n.position, ...estimateSize(Array.isArray(n.node.steps) ? n.node.steps.filter(isObject) : []) }));
    const offset = freeOffset(cardRects(working, measuredSizes()), placed, wanted);
    onEdit({ type: "paste", payload, offset });
  };

  const paste = async () => {
    let text: string | null;
    try {
      text = localStorage.getItem(CLIPBOARD_KEY);
    } catch {
      text = null;
    }
    if (!text) text = (await navigator.clipboard?.readText().catch(() => null)) ?? null;
    if (!text) return;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (isClipboardPayload(parsed)) pastePayload(parsed);
    } catch {
      /* not ours */
    }
  };

  return { copy: () => copySelection(false), cut: () => copySelection(true), paste };
}
