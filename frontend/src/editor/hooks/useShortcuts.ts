import { useEffect } from "react";
import { useLatest } from "../../common/useLatest";

/** What the editor's keyboard shortcuts do; the help dialog lists them. */
export interface ShortcutActions {
  save: () => void;
  run: () => void;
  undo: () => void;
  redo: () => void;
  copy: () => void;
  cut: () => void;
  paste: () => void;
  selectAll: () => void;
  deleteSelection: () => void;
  escape: () => void;
  help: () => void;
  fitView: () => void;
  autoLayout: () => void;
  /** Switch between the Flow and the Nodes view. */
  toggleView: () => void;
  /** Fold the side panel away, or show it. */
  togglePanel: () => void;
  readOnly: boolean;
  /** A dialog is open: only Ctrl+S still works (and Ctrl+Enter when `runBlocked` is false). */
  dialogOpen: boolean;
  /** Ctrl+Enter does not start a run (a dialog that is not about running is open). */
  runBlocked: boolean;
}

/** True for elements where keys type text (so Delete or Ctrl+Z there are not canvas shortcuts). */
export function isEditable(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  if (el.isContentEditable || el.closest?.(".cm-editor")) return true;
  const tag = el.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (el as HTMLInputElement).type;
    return !["checkbox", "radio", "button", "submit", "file"].includes(type);
  }
  return false;
}

function handleKey(e: KeyboardEvent, a: ShortcutActions) {
  const mod = e.ctrlKey || e.metaKey;
  const key = e.key.toLowerCase();
  if (mod && key === "s") {
    e.preventDefault();
    a.save();
    return;
  }
  if (mod && e.key === "Enter" && !e.defaultPrevented && !a.runBlocked) {
    e.preventDefault();
    a.run();
    return;
  }
  if (a.dialogOpen) return;
  if (isEditable(e.target)) return;
  if (mod && key === "z") {
    e.preventDefault();
    if (!a.readOnly) (e.shiftKey ? a.redo : a.undo)();
  } else if (mod && key === "y") {
    e.preventDefault();
    if (!a.readOnly) a.redo();
  } else if (mod && key === "c") {
    e.preventDefault();
    a.copy();
  } else if (mod && key === "x") {
    e.preventDefault();
    a.cut();
  } else if (mod && key === "v") {
    e.preventDefault();
    a.paste();
  } else if (mod && key === "a") {
    e.preventDefault();
    a.selectAll();
  } else if (!mod && (e.key === "Delete" || e.key === "Backspace")) {
    if (!a.readOnly) {
      e.preventDefault();
      a.deleteSelection();
    }
  } else if (e.key === "Escape") {
    a.escape();
  } else if (e.key === "?") {
    e.preventDefault();
    a.help();
  } else if (!mod && !e.altKey && key === "f") {
    a.fitView();
  } else if (!mod && !e.altKey && key === "l") {
    a.autoLayout();
  } else if (!mod && !e.altKey && key === "v") {
    a.toggleView();
  } else if (!mod && !e.altKey && key === "p") {
    a.togglePanel();
  }
}

/**
 * The editor's window-wide keyboard shortcuts. One listener for the page's lifetime; it reads the
 * latest actions from a ref, so it never acts on a stale render.
 */
export function useShortcuts(actions: ShortcutActions) {
  const latest = useLatest(actions);
  useEffect(() => {
    const listener = (e: KeyboardEvent) => handleKey(e, latest.current);
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, [latest]);
}
