/** Shapes the editor page's pieces share. */
import type { Version } from "../api";
import type { CompareView } from "./compare";

/** What the canvas shows instead of the working copy: a saved version or a comparison. */
export type View = null | { kind: "version"; version: Version } | { kind: "compare"; cmp: CompareView };

/** The toast under the canvas. */
export interface Notice {
  kind: "ok" | "info" | "error";
  text: string;
}

/** A question the editor asks before doing something that cannot be taken back lightly. */
export interface Confirm {
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
  action: () => void;
}

/** The slow action in progress (one at a time); buttons show a spinner for theirs. */
export type Busy = null | "layout" | "view" | "compare" | "rollback" | "rebase" | "export" | "import";
