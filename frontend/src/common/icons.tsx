/**
 * The icons the studio draws: one small set (Lucide), imported by name so that the bundle holds
 * only these. Every icon is decorative (`aria-hidden`): the button or badge beside it carries the
 * words, so screen readers and tests read names, not pictures.
 */
import { Ban, Check, Clock, Dot, Download, LayoutGrid, List, LoaderCircle, Maximize2, Minus, PanelRightClose, PanelRightOpen, Play, Redo2, SkipForward, Undo2, Upload, X, type LucideIcon } from "lucide-react";

/** The size of an icon next to 12-13 px button text. */
const SIZE = 14;

function icon(Component: LucideIcon) {
  return function StudioIcon({ size = SIZE, className }: { size?: number; className?: string }) {
    return <Component size={size} strokeWidth={2} aria-hidden="true" focusable="false" className={`icon${className ? ` ${className}` : ""}`} />;
  };
}

export const UndoIcon = icon(Undo2);
export const RedoIcon = icon(Redo2);
export const LayoutIcon = icon(LayoutGrid);
export const FitIcon = icon(Maximize2);
export const ExportIcon = icon(Download);
export const ImportIcon = icon(Upload);
export const HistoryIcon = icon(Clock);
export const RunsIcon = icon(List);
export const RunIcon = icon(Play);
export const CloseIcon = icon(X);
export const PanelHideIcon = icon(PanelRightClose);
export const PanelShowIcon = icon(PanelRightOpen);

/** A run status as an icon (cards and console lines). */
const STATUS: Record<string, LucideIcon> = {
  running: LoaderCircle,
  ok: Check,
  failed: X,
  "soft-failed": X,
  skipped: SkipForward,
  cancelled: Ban,
  "not-taken": Minus,
  "not-reached": Dot,
};

export function StatusIcon({ status, size = 11 }: { status: string; size?: number }) {
  const Component = STATUS[status] ?? Dot;
  return <Component size={size} strokeWidth={2.5} aria-hidden="true" focusable="false" className={`icon status-icon${status === "running" ? " spin" : ""}`} />;
}
