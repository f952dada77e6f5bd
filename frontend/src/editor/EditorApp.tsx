/**
 * The editor page: toolbar, palette, canvas and the side panels (Properties | YAML | Problems |
 * History). It owns the working copy (an edit history over the pure graph model) and talks to
 * the server through `api.ts` only.
 */
import { useReactFlow } from "@xyflow/react";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from "react";
import { Api, ApiError, contentTypeFor, downloadBlob, type ConflictBody, type GraphSummary, type StudioConfig, type Version } from "../api";
import { computeAutoLayout } from "../canvas/autoLayout";
import { Canvas, paletteStep } from "../canvas/Canvas";
import { Palette } from "../canvas/Palette";
import { CloseIcon, ExportIcon, FitIcon, HistoryIcon, ImportIcon, LayoutIcon, RedoIcon, RunsIcon, UndoIcon } from "../common/icons";
import { AppHeader, ErrorBanner, Modal, Spinner, describeApiError, errorText, formatTime } from "../common/ui";
import { copyNodes, isClipboardPayload, type Edit } from "../graph/edits";
import { editForManifest } from "../graph/textEdits";
import { canRedo, canUndo, editsSince, replay } from "../graph/history";
import { emptyManifest, fromManifest, isObject, toLayout, toManifest } from "../graph/manifest";
import { cardRects, estimateSize, freeOffset, freeSpot, type Size } from "../graph/placement";
import { indexIssues, localIssues, ROOT } from "../graph/queries";
import type { ClipboardPayload, Issue, JsonObject, RouterType, TargetKind, Viewport } from "../graph/types";
import { DiffView } from "../panels/DiffView";
import { HistoryPanel } from "../panels/HistoryPanel";
import { ProblemsPanel } from "../panels/ProblemsPanel";
import { PropertiesPanel } from "../panels/PropertiesPanel";
import { YamlPanel } from "../panels/YamlPanel";
import { RunPanel } from "../panels/run/RunPanel";
import { RunsDialog } from "../panels/run/RunsDialog";
import { useRunController } from "../panels/run/useRunController";
import { graphSamples, safeStorage } from "../panels/run/samples";
import { clampWidth, KEY_STEP, loadWidth, MIN_WIDTH, saveWidth } from "./panelWidth";
import { buildCompare, type CompareView } from "./compare";
import { editorReducer, initialEditorState, snapshot, stateOfVersion, type Selection } from "./store";

const CLIPBOARD_KEY = "inference-graph-studio:clipboard";
const VALIDATE_DELAY_MS = 500;

/** The side panel tabs; each has a case in `renderPanel`. */
const PANEL_TABS = [
  { id: "properties", label: "Properties" },
  { id: "yaml", label: "YAML" },
  { id: "problems", label: "Problems" },
  { id: "history", label: "History" },
  { id: "run", label: "Run" },
] as const;
type PanelTab = (typeof PANEL_TABS)[number]["id"];

type View = null | { kind: "version"; version: Version } | { kind: "compare"; cmp: CompareView };

interface Notice {
  kind: "ok" | "info" | "error";
  text: string;
}

interface Confirm {
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
  action: () => void;
}

function isEditable(target: EventTarget | null): boolean {
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

export function EditorApp({ config }: { config: StudioConfig }) {
  const api = useMemo(() => new Api(config), [config]);
  const graphName = config.graph ?? "";
  const lockedVersion = typeof config.version === "number" ? config.version : null;
  const flow = useReactFlow();

  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [graphInfo, setGraphInfo] = useState<GraphSummary | null>(null);
  const [s, dispatch] = useReducer(editorReducer, null, () => initialEditorState(null));
  const [canvasKey, setCanvasKey] = useState(0);
  const [view, setView] = useState<View>(null);
  const [tab, setTab] = useState<PanelTab>("properties");
  const [serverIssues, setServerIssues] = useState<Issue[] | null>(null);
  const [validationFailed, setValidationFailed] = useState(false);
  const [checking, setChecking] = useState(false);
  const [saving, setSaving] = useState(false);
  const [message, setMessage] = useState("");
  const [notice, setNotice] = useState<Notice | null>(null);
  const [conflict, setConflict] = useState<ConflictBody | null>(null);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [helpOpen, setHelpOpen] = useState(false);
  const [exportOpen, setExportOpen] = useState(false);
  const [historyKey, setHistoryKey] = useState(0);
  const [busy, setBusy] = useState<string | null>(null);
  const [runsOpen, setRunsOpen] = useState(false);
  const [runConfirm, setRunConfirm] = useState<{ resolve: (version: number | null) => void } | null>(null);
  const importRef = useRef<HTMLInputElement>(null);

  const working = s.history.state;
  const readOnly = lockedVersion !== null || view !== null;

  // ---- loading -------------------------------------------------------------------------
  const loadVersion = useCallback((version: Version | null) => {
    if (version) dispatch({ type: "load", version });
    setCanvasKey((k) => k + 1);
    setServerIssues(version?.issues ?? null);
  }, []);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      try {
        const info = await api.getGraph(graphName);
        if (cancelled) return;
        setGraphInfo(info);
        if (lockedVersion !== null) {
          const v = await api.getVersion(graphName, lockedVersion);
          if (!cancelled) loadVersion(v);
        } else if (info.latest_version) {
          loadVersion(info.latest_version);
        } else {
          const manifest = emptyManifest(graphName, info.namespace);
          dispatch({
            type: "load",
            version: { number: 0, manifest, layout: toLayout(fromManifest(manifest, null)), spec_hash: "", message: "", author: null, created_at: "", parent: null, valid: false, issues: [] },
          });
          setCanvasKey((k) => k + 1);
        }
      } catch (err) {
        if (!cancelled) setLoadError(err instanceof ApiError && err.status === 404 ? `There is no graph named "${graphName}".` : `Could not load the graph: ${errorText(err)}`);
      } finally {
        if (!cancelled) setLoading(false);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [api, graphName, lockedVersion, loadVersion]);

  // ---- derived -------------------------------------------------------------------------
  const manifest = useMemo(() => toManifest(working), [working]);
  const manifestJson = useMemo(() => JSON.stringify(manifest), [manifest]);
  const dirty = useMemo(() => lockedVersion === null && !loading && snapshot(working) !== s.savedSnapshot, [working, s.savedSnapshot, lockedVersion, loading]);
  const base = s.base && s.base > 0 ? s.base : null;

  const viewState = useMemo(() => (view?.kind === "version" ? stateOfVersion(view.version) : view?.kind === "compare" ? view.cmp.state : null), [view]);
  const displayState = viewState ?? working;

  const workingIssues = useMemo(() => serverIssues ?? localIssues(working), [serverIssues, working]);
  const displayIssues = view?.kind === "version" ? (view.version.issues ?? []) : view?.kind === "compare" ? (view.cmp.to.issues ?? []) : workingIssues;
  // indexIssues reads only the nodes: a viewport change (every pan) keeps the index, so the canvas
  // does not rebuild every card.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const issueIndex = useMemo(() => indexIssues(displayState, displayIssues), [displayState.nodes, displayIssues]);
  const errorCount = displayIssues.filter((i) => i.severity === "error").length;
  const warningCount = displayIssues.length - errorCount;

  // ---- live validation (debounced; the server decides) ------------------------------------
  const validateSeq = useRef(0);
  useEffect(() => {
    if (loading || loadError || lockedVersion !== null) return;
    const seq = ++validateSeq.current;
    setChecking(true);
    const t = setTimeout(async () => {
      try {
        const result = await api.validate(JSON.parse(manifestJson) as JsonObject);
        if (seq !== validateSeq.current) return;
        setServerIssues(Array.isArray(result.issues) ? result.issues : []);
        setValidationFailed(false);
      } catch {
        if (seq !== validateSeq.current) return;
        setServerIssues(null);
        setValidationFailed(true);
      } finally {
        if (seq === validateSeq.current) setChecking(false);
      }
    }, VALIDATE_DELAY_MS);
    return () => clearTimeout(t);
  }, [api, manifestJson, loading, loadError, lockedVersion]);

  // ---- unsaved-changes guard -----------------------------------------------------------------
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);

  useEffect(() => {
    document.title = `${dirty ? "● " : ""}${graphName} · Inference Graph Studio`;
  }, [dirty, graphName]);

  useEffect(() => {
    if (!notice || notice.kind === "error") return;
    const t = setTimeout(() => setNotice(null), 6000);
    return () => clearTimeout(t);
  }, [notice]);

  // ---- editing ---------------------------------------------------------------------------
  const onEdit = useCallback(
    (edit: Edit, options?: { key?: string; select?: Selection } | Selection) => {
      if (readOnly) return;
      const opts = options && "kind" in options ? { select: options } : (options ?? {});
      dispatch({ type: "edit", edit, key: opts.key, select: opts.select });
    },
    [readOnly],
  );
  const onCanvasEdit = useCallback((edit: Edit, select?: Selection, key?: string) => onEdit(edit, { select, key }), [onEdit]);
  const onSelect = useCallback((selection: Selection) => dispatch({ type: "select", selection }), []);
  const onViewport = useCallback(
    (viewport: Viewport) => {
      if (!viewState) dispatch({ type: "viewport", viewport });
    },
    [viewState],
  );

  const viewCenter = useCallback(() => {
    const el = document.querySelector(".canvas");
    const rect = el?.getBoundingClientRect();
    if (!rect) return { x: 0, y: 0 };
    const p = flow.screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 3 });
    return { x: Math.round(p.x - 130), y: Math.round(p.y - 40) };
  }, [flow]);

  /** The cards' sizes as React Flow measured them (placement estimates the others). */
  const measuredSizes = useCallback((): Map<string, Size> => {
    const out = new Map<string, Size>();
    for (const n of flow.getNodes()) if (n.measured?.width && n.measured.height) out.set(n.id, { width: n.measured.width, height: n.measured.height });
    return out;
  }, [flow]);

  const addNode = (routerType: RouterType) => {
    onEdit({ type: "addNode", routerType, position: freeSpot(working, viewCenter(), [], measuredSizes()) });
  };

  const selectedNodeName = s.selection.kind === "step" ? s.selection.node : s.selection.kind === "nodes" && s.selection.names.length === 1 ? s.selection.names[0] : null;
  const addStep = (target: TargetKind) => {
    if (!selectedNodeName) return;
    const node = working.nodes.find((n) => n.name === selectedNodeName);
    if (!node) return;
    const index = s.selection.kind === "step" ? s.selection.index + 1 : node.steps.length;
    onEdit({ type: "addStep", node: node.name, index, step: paletteStep(working, node.name, target) }, { select: { kind: "step", node: node.name, index } });
  };

  /**
   * Removes nodes; removing the root (the graph's entry point) asks first, since the graph
   * cannot run without it.
   */
  const removeNodes = (names: string[]) => {
    const remove = () => onEdit({ type: "removeNodes", names }, { select: { kind: "none" } });
    if (!names.includes(ROOT)) {
      remove();
      return;
    }
    setConfirm({
      title: "Delete the root node?",
      body: `"root" is where every request enters the graph; without it the graph cannot run until another node is named root.${names.length > 1 ? ` ${names.length - 1} other selected node${names.length > 2 ? "s" : ""} will be deleted too.` : ""} Undo (Ctrl+Z) brings it back.`,
      confirmLabel: "Delete root",
      danger: true,
      action: remove,
    });
  };

  // The Properties panel's "Delete node" goes through the same question as the Delete key.
  const onPanelEdit = useCallback(
    (edit: Edit, options?: { key?: string; select?: Selection } | Selection) => {
      if (edit.type === "removeNodes" && edit.names.includes(ROOT)) removeNodesRef.current(edit.names);
      else onEdit(edit, options);
    },
    [onEdit],
  );
  const removeNodesRef = useRef(removeNodes);
  removeNodesRef.current = removeNodes;

  const deleteSelection = () => {
    const sel = s.selection;
    if (sel.kind === "nodes") removeNodes(sel.names);
    if (sel.kind === "step") onEdit({ type: "removeStep", node: sel.node, index: sel.index }, { select: { kind: "nodes", names: [sel.node] } });
  };

  const selectedNames = (): string[] => (s.selection.kind === "nodes" ? s.selection.names : s.selection.kind === "step" ? [s.selection.node] : []);

  const copySelection = (cut: boolean) => {
    const names = selectedNames();
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

  const pasteFromStorage = async () => {
    let text: string | null = null;
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

  // ---- auto layout / view ---------------------------------------------------------------------
  const autoLayout = async () => {
    if (readOnly) return;
    setBusy("layout");
    try {
      const sizes = new Map<string, { width: number; height: number }>();
      for (const n of flow.getNodes()) {
        if (n.measured?.width && n.measured?.height) sizes.set(n.id, { width: n.measured.width, height: n.measured.height });
      }
      const positions = await computeAutoLayout(working, sizes);
      onEdit({ type: "moveNodes", positions });
      setTimeout(() => void flow.fitView({ padding: 0.2, duration: 300, maxZoom: 1.2 }), 50);
    } catch (err) {
      setNotice({ kind: "error", text: `Auto layout failed: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const fitView = () => void flow.fitView({ padding: 0.2, duration: 250, maxZoom: 1.2 });

  const focusNode = (name: string) => {
    void flow.fitView({ nodes: [{ id: name }], padding: 0.6, duration: 300, maxZoom: 1.2 });
  };

  // ---- save / conflicts ---------------------------------------------------------------------
  /** Saves the working copy; resolves to the saved version, or null when nothing was saved. */
  const save = async (baseOverride?: number): Promise<Version | null> => {
    if (readOnly || saving || loading || loadError) return null;
    setSaving(true);
    setNotice(null);
    const state = working;
    const layout = toLayout(state);
    try {
      const result = await api.saveVersion(graphName, { manifest: toManifest(state), layout, message: message.trim() }, baseOverride ?? base);
      dispatch({ type: "saved", version: result.version, snapshot: snapshot(state) });
      if (Array.isArray(result.version.issues)) setServerIssues(result.version.issues);
      setMessage("");
      setConflict(null);
      setHistoryKey((k) => k + 1);
      const invalid = result.version.valid === false ? " It has errors: export and runs stay blocked until they are fixed." : "";
      setNotice(
        result.status === 201
          ? { kind: result.version.valid === false ? "info" : "ok", text: `Saved version ${result.version.number}.${invalid}` }
          : { kind: "info", text: `Nothing new to save: version ${result.version.number} is identical.` },
      );
      return result.version;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body) {
        setConflict(err.body as unknown as ConflictBody);
      } else {
        setNotice({ kind: "error", text: `Save failed: ${describeApiError(err)}` });
      }
      return null;
    } finally {
      setSaving(false);
    }
  };

  /** Rebase: the latest version becomes the base and the local edits are replayed on it. */
  const rebase = async () => {
    if (!conflict) return;
    setBusy("rebase");
    try {
      const latest = conflict.latest && typeof conflict.latest.number === "number" ? conflict.latest : await api.getVersion(graphName, conflict.latest_version);
      const baseState = stateOfVersion(latest);
      let edits = editsSince(s.history, s.saveMark);
      if (!edits || edits.length === 0) edits = [{ type: "replaceManifest", manifest: toManifest(working) }];
      const { skipped } = replay(baseState, edits);
      dispatch({ type: "rebased", base: latest.number, baseState, edits });
      setConflict(null);
      setHistoryKey((k) => k + 1);
      setNotice({
        kind: "info",
        text: `Your ${edits.length === 1 ? "edit now sits" : `${edits.length} edits now sit`} on top of version ${latest.number}${skipped ? ` (${skipped} no longer applied)` : ""}. Review, then Save.`,
      });
    } catch (err) {
      setNotice({ kind: "error", text: `Could not load the latest version: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  // ---- test runs ---------------------------------------------------------------------------
  /** The version the Run button runs: the one being viewed; unsaved edits are saved first or not. */
  const runVersion = (): Promise<number | null> => {
    if (view?.kind === "version") return Promise.resolve(view.version.number);
    if (view?.kind === "compare") return Promise.resolve(view.cmp.to.number);
    if (lockedVersion !== null) return Promise.resolve(lockedVersion);
    if (!dirty) {
      if (base === null) setNotice({ kind: "error", text: "Save the graph first: runs use saved versions." });
      return Promise.resolve(base);
    }
    return new Promise((resolve) => setRunConfirm({ resolve }));
  };
  const runVersionLabel = view?.kind === "version" ? `version ${view.version.number}` : view?.kind === "compare" ? `version ${view.cmp.to.number}` : lockedVersion !== null ? `version ${lockedVersion}` : dirty ? `unsaved edits on v${base ?? "?"}` : base !== null ? `version ${base}` : "no saved version";
  const [panelWidth, setPanelWidth] = useState(() => clampWidth(loadWidth(safeStorage("local"), config.user), window.innerWidth));
  const resizeFrom = useRef<{ x: number; width: number } | null>(null);
  // A narrower window keeps the canvas its minimum (the remembered width comes back when it widens).
  useEffect(() => {
    const onResize = () => setPanelWidth(clampWidth(loadWidth(safeStorage("local"), config.user), window.innerWidth));
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, [config.user]);
  const samplesOfGraph = useMemo(() => graphSamples(working.layoutExtra), [working.layoutExtra]);
  const runs = useRunController({ api, graph: graphName, resolveVersion: runVersion, graphSamples: samplesOfGraph });

  const selectRunStep = (node: string, index: number) => {
    if (!displayState.nodes.some((n) => n.name === node)) return;
    onSelect({ kind: "step", node, index });
    focusNode(node);
  };

  // ---- history actions ----------------------------------------------------------------------
  const viewVersion = async (n: number) => {
    setBusy("view");
    try {
      const version = await api.getVersion(graphName, n);
      setView({ kind: "version", version });
      setCanvasKey((k) => k + 1);
    } catch (err) {
      setNotice({ kind: "error", text: `Could not open version ${n}: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const compareVersions = async (from: number, to: number) => {
    setBusy("compare");
    try {
      const [a, b, diff] = await Promise.all([api.getVersion(graphName, from), api.getVersion(graphName, to), api.diff(graphName, from, to).catch(() => null)]);
      setView({ kind: "compare", cmp: buildCompare(a, b, diff) });
      setCanvasKey((k) => k + 1);
      setTab("history");
    } catch (err) {
      setNotice({ kind: "error", text: `Could not compare: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const backToEditing = () => {
    setView(null);
    setCanvasKey((k) => k + 1);
  };

  const rollback = (n: number) => {
    setConfirm({
      title: `Roll back to version ${n}`,
      body: `This saves a new version with the content of version ${n}.${dirty ? " Your unsaved changes on the canvas will be replaced." : ""}`,
      confirmLabel: `Create version from v${n}`,
      danger: dirty,
      action: async () => {
        setBusy("rollback");
        try {
          const version = await api.rollback(graphName, n, base);
          setView(null);
          loadVersion(version);
          setHistoryKey((k) => k + 1);
          setNotice({ kind: "ok", text: `Rolled back: version ${version.number} has the content of version ${n}.` });
        } catch (err) {
          setNotice({ kind: "error", text: `Roll back failed: ${describeApiError(err)}` });
          if (err instanceof ApiError && err.status === 409) setHistoryKey((k) => k + 1); // show what was saved since
        } finally {
          setBusy(null);
        }
      },
    });
  };

  // ---- export / import ------------------------------------------------------------------
  const exportAs = async (format: "yaml" | "json") => {
    setExportOpen(false);
    const n = view?.kind === "version" ? view.version.number : view?.kind === "compare" ? view.cmp.to.number : base;
    if (!n) {
      setNotice({ kind: "error", text: "Save the graph first: export works on saved versions." });
      return;
    }
    setBusy("export");
    try {
      const blob = await api.exportVersion(graphName, n, format);
      downloadBlob(blob, `${graphName}-v${n}.${format}`);
      setNotice({ kind: "ok", text: `Exported version ${n} as ${format.toUpperCase()}.${dirty && !view ? " Unsaved changes are not included." : ""}` });
    } catch (err) {
      setNotice({ kind: "error", text: `Export failed: ${describeApiError(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const importFile = async (file: File) => {
    setBusy("import");
    try {
      const text = await file.text();
      const result = await api.importText(text, contentTypeFor(file.name, text), { graph: graphName, base });
      // The import answers {"graphs": [{"graph", "version", "created"}], "issues"}; read it defensively.
      const r = result as Partial<Version> & { latest_version?: Version; graphs?: { version?: Version }[] };
      let version: Version | null = null;
      const imported = Array.isArray(r?.graphs) ? r.graphs[0]?.version : undefined;
      if (imported && typeof imported.number === "number" && imported.manifest) version = imported;
      else if (r && typeof r.number === "number" && r.manifest) version = r as Version;
      else if (r?.latest_version?.manifest) version = r.latest_version;
      else version = (await api.getGraph(graphName)).latest_version;
      setView(null);
      loadVersion(version);
      setHistoryKey((k) => k + 1);
      setNotice({ kind: version?.valid === false ? "info" : "ok", text: `Imported ${file.name} as version ${version?.number ?? "?"}.${version?.valid === false ? " It has errors; see Problems." : ""}` });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setNotice({ kind: "error", text: "The graph changed on the server since you opened it. Save or reload first, then import again." });
      } else {
        setNotice({ kind: "error", text: `Import failed: ${describeApiError(err)}` });
      }
    } finally {
      setBusy(null);
      if (importRef.current) importRef.current.value = "";
    }
  };

  const startImport = () => {
    if (dirty) {
      setConfirm({
        title: "Import a file as a new version",
        body: "The file becomes a new version and replaces what is on the canvas. Your unsaved changes will be lost.",
        confirmLabel: "Choose file",
        danger: true,
        action: () => importRef.current?.click(),
      });
    } else {
      importRef.current?.click();
    }
  };

  // ---- problems ----------------------------------------------------------------------------
  const activateIssue = (issue: Issue) => {
    if (!issue.node || !displayState.nodes.some((n) => n.name === issue.node)) {
      onSelect({ kind: "none" });
      return;
    }
    if (typeof issue.step === "number") onSelect({ kind: "step", node: issue.node, index: issue.step });
    else onSelect({ kind: "nodes", names: [issue.node] });
    focusNode(issue.node);
  };

  // ---- keyboard ---------------------------------------------------------------------------
  const keyHandler = useRef<(e: KeyboardEvent) => void>(() => undefined);
  keyHandler.current = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    if (mod && key === "s") {
      e.preventDefault();
      void save();
      return;
    }
    if (mod && e.key === "Enter" && !e.defaultPrevented && !helpOpen && !confirm && !conflict && !runConfirm && !runsOpen) {
      e.preventDefault();
      setTab("run");
      void runs.start();
      return;
    }
    if (helpOpen || confirm || conflict) return;
    if (isEditable(e.target)) return;
    if (mod && key === "z") {
      e.preventDefault();
      if (!readOnly) dispatch({ type: e.shiftKey ? "redo" : "undo" });
    } else if (mod && key === "y") {
      e.preventDefault();
      if (!readOnly) dispatch({ type: "redo" });
    } else if (mod && key === "c") {
      e.preventDefault();
      copySelection(false);
    } else if (mod && key === "x") {
      e.preventDefault();
      copySelection(true);
    } else if (mod && key === "v") {
      e.preventDefault();
      void pasteFromStorage();
    } else if (mod && key === "a") {
      e.preventDefault();
      onSelect({ kind: "nodes", names: displayState.nodes.map((n) => n.name) });
    } else if (!mod && (e.key === "Delete" || e.key === "Backspace")) {
      if (!readOnly) {
        e.preventDefault();
        deleteSelection();
      }
    } else if (e.key === "Escape") {
      onSelect({ kind: "none" });
      setExportOpen(false);
    } else if (e.key === "?") {
      e.preventDefault();
      setHelpOpen(true);
    } else if (!mod && !e.altKey && key === "f") {
      fitView();
    } else if (!mod && !e.altKey && key === "l") {
      void autoLayout();
    }
  };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => keyHandler.current(e);
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, []);

  /**
   * The WAI-ARIA tabs pattern: the tab list is one Tab stop; Left/Right (wrapping), Home and End
   * move to another tab and show its panel.
   */
  const onTabKey = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    const at = PANEL_TABS.findIndex((t) => t.id === tab);
    const n = PANEL_TABS.length;
    const to = e.key === "ArrowRight" ? (at + 1) % n : e.key === "ArrowLeft" ? (at - 1 + n) % n : e.key === "Home" ? 0 : e.key === "End" ? n - 1 : null;
    if (to === null) return;
    e.preventDefault();
    const id = PANEL_TABS[to].id;
    setTab(id);
    document.getElementById(`tab-${id}`)?.focus();
  };

  // ---- render -----------------------------------------------------------------------------
  const headerStatus = (
    <>
      <a href="/" className="crumb-link">
        Graphs
      </a>
      <span className="crumb-sep">/</span>
      <span className="crumb mono" title={graphInfo?.description || undefined}>
        {graphName}
      </span>
      {lockedVersion !== null ? (
        <span className="badge badge-readonly">v{lockedVersion} · read-only</span>
      ) : view?.kind === "version" ? (
        // The header names what the canvas shows: the viewed version, not the working copy's base.
        <span className="badge badge-readonly" title={base !== null ? `Your working copy is based on v${base}; close the view to return to it` : undefined}>
          v{view.version.number} · read-only
        </span>
      ) : view?.kind === "compare" ? (
        <span className="badge badge-readonly">
          v{view.cmp.from.number} → v{view.cmp.to.number} · read-only
        </span>
      ) : (
        base !== null && (
          <span className="badge badge-base" title="The version your working copy is based on">
            v{base}
          </span>
        )
      )}
      {dirty && (
        <span className="unsaved" role="status" title="You have unsaved changes">
          ● Unsaved changes
        </span>
      )}
      {!loading && !loadError && (
        <span className={`valid-chip ${checking ? "checking" : errorCount ? "bad" : warningCount ? "warn" : "ok"}`} role="status" aria-live="polite">
          {checking && !view ? "Checking…" : errorCount ? `${errorCount} error${errorCount > 1 ? "s" : ""}` : warningCount ? `${warningCount} warning${warningCount > 1 ? "s" : ""}` : "Valid"}
          {!checking && errorCount > 0 && warningCount > 0 && ` · ${warningCount} warning${warningCount > 1 ? "s" : ""}`}
        </span>
      )}
    </>
  );

  if (loading || loadError) {
    return (
      <div className="page editor-page">
        <AppHeader config={config}>{headerStatus}</AppHeader>
        <div className="center-message">
          {loading ? (
            <>
              <Spinner /> Loading {graphName}…
            </>
          ) : (
            <div>
              <ErrorBanner error={loadError} />
              <a className="btn" href="/">
                Back to graphs
              </a>
            </div>
          )}
        </div>
      </div>
    );
  }

  const renderPanel = (id: PanelTab) => {
    switch (id) {
      case "properties":
        return <PropertiesPanel state={displayState} selection={s.selection} issues={issueIndex} readOnly={readOnly} api={api} onEdit={onPanelEdit} onSelect={onSelect} />;
      case "yaml":
        return null; // kept mounted below, so that its text undo history survives tab switches
      case "problems":
        return <ProblemsPanel issues={displayIssues} checking={checking && !view} source={view ? "server" : validationFailed ? "local" : serverIssues ? "server" : "none"} onActivate={activateIssue} />;
      case "history":
        return (
          <>
            {view?.kind === "compare" && (
              <div className="compare-summary">
                <h4>
                  v{view.cmp.from.number} → v{view.cmp.to.number}
                </h4>
                <DiffView diff={view.cmp.diff} />
              </div>
            )}
            <HistoryPanel
              api={api}
              graph={graphName}
              base={lockedVersion ?? base}
              viewing={view?.kind === "version" ? view.version.number : null}
              refreshKey={historyKey}
              readOnly={lockedVersion !== null}
              onView={(n) => void viewVersion(n)}
              onCompare={(a, b) => void compareVersions(a, b)}
              onRollback={rollback}
            />
          </>
        );
      case "run":
        return <RunPanel ctl={runs} versionLabel={runVersionLabel} selection={s.selection} onSelectStep={selectRunStep} />;
    }
  };

  const cmpCounts = view?.kind === "compare" ? { added: [...view.cmp.marks.nodes.values()].filter((m) => m === "added").length, removed: [...view.cmp.marks.nodes.values()].filter((m) => m === "removed").length, changed: [...view.cmp.marks.nodes.values()].filter((m) => m === "changed").length } : null;

  return (
    <div className="page editor-page">
      <AppHeader config={config}>{headerStatus}</AppHeader>
      <div className="toolbar" role="toolbar" aria-label="Editor">
        <div className="tool-group">
          <button type="button" className="btn btn-tool" onClick={() => dispatch({ type: "undo" })} disabled={readOnly || !canUndo(s.history)} title="Undo (Ctrl+Z)">
            <UndoIcon />
            <span>Undo</span>
          </button>
          <button type="button" className="btn btn-tool" onClick={() => dispatch({ type: "redo" })} disabled={readOnly || !canRedo(s.history)} title="Redo (Ctrl+Shift+Z)">
            <RedoIcon />
            <span>Redo</span>
          </button>
        </div>
        <div className="tool-group">
          <button type="button" className="btn btn-tool" onClick={() => void autoLayout()} disabled={readOnly || busy === "layout"} title="Arrange the cards automatically (L)">
            <LayoutIcon />
            <span>Auto layout</span>
          </button>
          <button type="button" className="btn btn-tool" onClick={fitView} title="Fit the graph in view (F)">
            <FitIcon />
            <span>Fit view</span>
          </button>
          <button type="button" className="btn btn-tool" onClick={() => setHelpOpen(true)} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">
            ?
          </button>
        </div>
        <div className="spacer" />
        <div className="tool-group save-group">
          <input
            className="input message-input"
            placeholder={dirty ? "Describe your change…" : "Version message"}
            aria-label="Version message"
            value={message}
            disabled={readOnly}
            onChange={(e) => setMessage(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") void save();
            }}
          />
          <button type="button" className={`btn btn-primary${dirty ? " pulse" : ""}`} onClick={() => void save()} disabled={readOnly || saving} title="Save a new version (Ctrl+S)" aria-busy={saving || undefined}>
            {saving && <Spinner decorative />}
            <span>Save</span>
          </button>
        </div>
        <div className="tool-group">
          <div className="menu-wrap">
            <button type="button" className="btn btn-tool" aria-haspopup="menu" aria-expanded={exportOpen} onClick={() => setExportOpen((o) => !o)} disabled={busy === "export"} title="Download the saved version as YAML or JSON">
              {busy === "export" ? <Spinner decorative /> : <ExportIcon />}
              <span>Export</span>
            </button>
            {exportOpen && (
              <div className="menu" role="menu" aria-label="Export format">
                <button type="button" role="menuitem" onClick={() => void exportAs("yaml")}>
                  YAML
                </button>
                <button type="button" role="menuitem" onClick={() => void exportAs("json")}>
                  JSON
                </button>
              </div>
            )}
          </div>
          <button type="button" className="btn btn-tool" onClick={startImport} disabled={readOnly || busy === "import"} title="Import a YAML or JSON file as a new version">
            {busy === "import" ? <Spinner decorative /> : <ImportIcon />}
            <span>Import</span>
          </button>
          <input
            ref={importRef}
            type="file"
            hidden
            accept=".yaml,.yml,.json,application/yaml,application/json,text/yaml"
            aria-label="Import file"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void importFile(f);
            }}
          />
          <button type="button" className={`btn btn-tool${tab === "history" ? " active" : ""}`} onClick={() => setTab("history")} title="Versions of this graph">
            <HistoryIcon />
            <span>History</span>
          </button>
          <button type="button" className="btn btn-tool" onClick={() => setRunsOpen(true)} title="Past test runs of this graph: replay, run again, compare">
            <RunsIcon />
            <span>Runs</span>
          </button>
        </div>
      </div>
      <div className="editor-body">
        <Palette disabled={readOnly} canAddStep={!readOnly && selectedNodeName !== null} onAddNode={addNode} onAddStep={addStep} />
        <div className="canvas-wrap">
          {lockedVersion !== null && (
            <div className="view-banner">
              Version {lockedVersion} is shown read-only.
              <a className="btn btn-small" href={`/graphs/${encodeURIComponent(graphName)}/`}>
                Open the latest version for editing
              </a>
            </div>
          )}
          {view?.kind === "version" && (
            <div className="view-banner">
              <span>
                Viewing <strong>version {view.version.number}</strong> (read-only) · {view.version.author ?? "unknown"} · {formatTime(view.version.created_at)}
                {view.version.message && <> · “{view.version.message}”</>}
              </span>
              <button type="button" className="btn btn-small" onClick={backToEditing}>
                Back to editing
              </button>
              {lockedVersion === null && (
                <button type="button" className="btn btn-small" onClick={() => rollback(view.version.number)}>
                  Roll back to v{view.version.number}
                </button>
              )}
            </div>
          )}
          {view?.kind === "compare" && cmpCounts && (
            <div className="view-banner compare-banner">
              <span>
                Comparing <strong>v{view.cmp.from.number}</strong> → <strong>v{view.cmp.to.number}</strong>:
              </span>
              <span className="legend legend-added">{cmpCounts.added} added</span>
              <span className="legend legend-removed">{cmpCounts.removed} removed</span>
              <span className="legend legend-changed">{cmpCounts.changed} changed</span>
              <button type="button" className="btn btn-small" onClick={backToEditing}>
                Close comparison
              </button>
            </div>
          )}
          <Canvas
            key={canvasKey}
            state={displayState}
            selection={s.selection}
            issues={issueIndex}
            readOnly={readOnly}
            compare={view?.kind === "compare" ? view.cmp.marks : null}
            run={runs.marks}
            onEdit={onCanvasEdit}
            onSelect={onSelect}
            onViewport={onViewport}
          />
          {(busy === "view" || busy === "compare" || busy === "rollback" || busy === "rebase") && (
            <div className="canvas-busy">
              <Spinner /> Working…
            </div>
          )}
        </div>
        <div
          className="panel-resizer"
          role="separator"
          aria-orientation="vertical"
          aria-label="Resize the side panel"
          aria-valuenow={panelWidth}
          aria-valuemin={MIN_WIDTH}
          aria-valuemax={clampWidth(Number.POSITIVE_INFINITY, window.innerWidth)}
          tabIndex={0}
          title="Drag to resize the side panel (or use the arrow keys)"
          onPointerDown={(e) => {
            e.preventDefault();
            e.currentTarget.setPointerCapture(e.pointerId);
            resizeFrom.current = { x: e.clientX, width: panelWidth };
          }}
          onPointerMove={(e) => {
            const from = resizeFrom.current;
            if (from) setPanelWidth(clampWidth(from.width + from.x - e.clientX, window.innerWidth));
          }}
          onPointerUp={() => {
            resizeFrom.current = null;
            saveWidth(safeStorage("local"), config.user, panelWidth);
          }}
          onKeyDown={(e) => {
            const delta = e.key === "ArrowLeft" ? KEY_STEP : e.key === "ArrowRight" ? -KEY_STEP : 0;
            if (!delta) return;
            e.preventDefault();
            const next = clampWidth(panelWidth + delta, window.innerWidth);
            setPanelWidth(next);
            saveWidth(safeStorage("local"), config.user, next);
          }}
        />
        <section className="side-panel" aria-label="Panels" style={{ width: panelWidth }}>
          <div className="tabs" role="tablist" aria-label="Panels" onKeyDown={onTabKey}>
            {PANEL_TABS.map((t) => (
              <button
                key={t.id}
                type="button"
                role="tab"
                id={`tab-${t.id}`}
                aria-selected={tab === t.id}
                aria-controls={`panel-${t.id}`}
                tabIndex={tab === t.id ? 0 : -1}
                className={`tab${tab === t.id ? " active" : ""}`}
                onClick={() => setTab(t.id)}
              >
                {t.label}
                {t.id === "problems" && displayIssues.length > 0 && <span className={`tab-count ${errorCount ? "bad" : "warn"}`}>{displayIssues.length}</span>}
              </button>
            ))}
          </div>
          {PANEL_TABS.map((t) =>
            t.id === "yaml" ? (
              <div key={t.id} id="panel-yaml" role="tabpanel" aria-labelledby="tab-yaml" className="tab-panel tab-panel-yaml" hidden={tab !== "yaml"}>
                <YamlPanel
                  state={displayState}
                  issues={displayIssues}
                  readOnly={readOnly}
                  visible={tab === "yaml"}
                  onManifest={(m) => onEdit(editForManifest(working, m), { key: "yaml" })}
                />
              </div>
            ) : (
              tab === t.id && (
                <div key={t.id} id={`panel-${t.id}`} role="tabpanel" aria-labelledby={`tab-${t.id}`} className="tab-panel">
                  {renderPanel(t.id)}
                </div>
              )
            ),
          )}
        </section>
      </div>
      {notice && (
        <div className={`toast toast-${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
          <span>{notice.text}</span>
          <button type="button" className="btn btn-ghost btn-tiny" onClick={() => setNotice(null)} aria-label="Dismiss">
            <CloseIcon />
          </button>
        </div>
      )}
      <ConflictDialog conflict={conflict} busy={busy === "rebase" || saving} onRebase={() => void rebase()} onKeepMine={() => conflict && void save(conflict.latest_version)} onClose={() => setConflict(null)} />
      <Modal
        open={confirm !== null}
        title={confirm?.title ?? ""}
        onClose={() => setConfirm(null)}
        footer={
          <>
            <button type="button" className="btn" onClick={() => setConfirm(null)}>
              Cancel
            </button>
            <button
              type="button"
              className={`btn ${confirm?.danger ? "btn-danger" : "btn-primary"}`}
              onClick={() => {
                const action = confirm?.action;
                setConfirm(null);
                action?.();
              }}
            >
              {confirm?.confirmLabel}
            </button>
          </>
        }
      >
        <p>{confirm?.body}</p>
      </Modal>
      <HelpDialog open={helpOpen} onClose={() => setHelpOpen(false)} />
      <Modal
        open={runConfirm !== null}
        title="Run unsaved changes?"
        onClose={() => {
          runConfirm?.resolve(null);
          setRunConfirm(null);
        }}
        footer={
          <>
            <button
              type="button"
              className="btn"
              onClick={() => {
                runConfirm?.resolve(null);
                setRunConfirm(null);
              }}
            >
              Cancel
            </button>
            <button
              type="button"
              className="btn"
              disabled={base === null}
              onClick={() => {
                runConfirm?.resolve(base);
                setRunConfirm(null);
              }}
            >
              Run last saved version
            </button>
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => {
                const pending = runConfirm;
                setRunConfirm(null);
                void save().then((v) => pending?.resolve(v ? v.number : null));
              }}
            >
              Save and run
            </button>
          </>
        }
      >
        <p>
          Runs use saved versions. Save your edits as a new version and run it, or run {base !== null ? <>version {base}, the last one saved,</> : "the last saved version"} without them.
        </p>
      </Modal>
      <RunsDialog
        api={api}
        graph={graphName}
        open={runsOpen}
        currentRunId={runs.console.runId}
        onClose={() => setRunsOpen(false)}
        onOpen={(r) => {
          setRunsOpen(false);
          setTab("run");
          runs.attach(r.id, { replay: true });
        }}
        onRunAgain={(r) => {
          setRunsOpen(false);
          setTab("run");
          void runs.rerun(r.id);
        }}
      />
    </div>
  );
}

function ConflictDialog({ conflict, busy, onRebase, onKeepMine, onClose }: { conflict: ConflictBody | null; busy: boolean; onRebase: () => void; onKeepMine: () => void; onClose: () => void }) {
  const latest = conflict?.latest;
  return (
    <Modal
      open={conflict !== null}
      title="Someone saved a newer version"
      onClose={onClose}
      wide
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            Keep editing
          </button>
          <button type="button" className="btn" onClick={onKeepMine} disabled={busy} title="Save your working copy exactly as it is, on top of the latest version">
            Overwrite with mine
          </button>
          <button type="button" className="btn btn-primary" onClick={onRebase} disabled={busy}>
            {busy ? "Working…" : "Apply my edits on top"}
          </button>
        </>
      }
    >
      {conflict && (
        <>
          <p>
            {conflict.detail} The latest is <strong>version {conflict.latest_version}</strong>
            {latest && (
              <>
                {" "}
                by {latest.author ?? "unknown"}, {formatTime(latest.created_at)}
                {latest.message && <> — “{latest.message}”</>}
              </>
            )}
            . Nothing you typed is lost.
          </p>
          <h4>What changed on the server since your base</h4>
          <DiffView diff={conflict.diff} />
          <p className="field-help">
            <strong>Apply my edits on top</strong> loads version {conflict.latest_version} and replays your edits on it, so you can review before saving. <strong>Overwrite with mine</strong> saves your working copy as
            it is as the next version.
          </p>
        </>
      )}
    </Modal>
  );
}

const SHORTCUTS: [string, string][] = [
  ["Ctrl+S", "Save a new version"],
  ["Ctrl+Enter", "Run the graph (Run tab)"],
  ["Ctrl+Z", "Undo"],
  ["Ctrl+Shift+Z / Ctrl+Y", "Redo"],
  ["Ctrl+C / Ctrl+X / Ctrl+V", "Copy / cut / paste nodes (works between graphs)"],
  ["Ctrl+A", "Select all nodes"],
  ["Delete / Backspace", "Delete the selected nodes or step (the root node asks first)"],
  ["Arrow keys", "Move the selected cards (undo with Ctrl+Z)"],
  ["Tab", "Go through the cards in graph order, root first, and their step rows"],
  ["Enter / Space", "Select the focused step row; ↑ ↓ go to the row above or below"],
  ["← → Home End", "Switch the side panel's tabs (when a tab has the focus)"],
  ["Shift+drag", "Select several nodes with a box"],
  ["Ctrl/Shift+click", "Add a node to the selection"],
  ["Esc", "Clear the selection"],
  ["L", "Auto layout"],
  ["F", "Fit view"],
  ["?", "This help"],
];

function HelpDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} title="Keyboard shortcuts" onClose={onClose}>
      <table className="shortcut-table">
        <tbody>
          {SHORTCUTS.map(([k, v]) => (
            <tr key={k}>
              <td>
                <kbd>{k}</kbd>
              </td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>On the canvas</h4>
      <ul className="help-list">
        <li>Drag Sequence, Switch, Ensemble or Splitter from the palette onto the canvas.</li>
        <li>Drag Service, URL or Node steps into a card; drag steps inside a card to reorder them.</li>
        <li>Drag from a step's handle (●) to another card to make it call that node; drag from a card's bottom handle to add such a step.</li>
        <li>Click a step or an edge to edit that step; click the background for the graph's own settings.</li>
      </ul>
    </Modal>
  );
}
