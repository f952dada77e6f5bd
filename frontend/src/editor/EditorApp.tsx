/**
 * The editor page: toolbar, palette, canvas and the side panels (Properties | YAML | Problems |
 * History | Run). It owns the working copy (an edit history over the pure graph model) and talks
 * to the server through `api.ts` only. Saving, live validation, the clipboard, the shortcuts,
 * the version actions, the export menu and deploys live in `hooks/`, the kept draft in `draft/`;
 * the toolbar, banners and dialogs (`dialogs/EditorDialogs.tsx`) in their own files.
 */
import { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import { Api, type ProbeResult, type ServiceContracts, type StudioConfig, type Version } from "../api";
import { computeAutoLayout } from "../canvas/autoLayout";
import { Canvas, type GraphViewProps } from "../canvas/Canvas";
import { Palette } from "../canvas/Palette";
import { paletteServices } from "../canvas/paletteServices";
import { lazyComponent } from "../common/lazyChunk";
import { AppHeader, ErrorBanner, Spinner, errorText } from "../common/ui";
import { canRedo, canUndo } from "../graph/history";
import { toManifest } from "../graph/manifest";
import { indexIssues, localIssues, serviceNames } from "../graph/queries";
import type { Selection } from "../graph/selection";
import type { Issue, Viewport } from "../graph/types";
import { editForManifest } from "../graph/textEdits";
import { DiffView } from "../panels/DiffView";
import { ProblemsPanel } from "../panels/ProblemsPanel";
import { fixForIssue } from "../graph/fixes";
import { contractsFromProbe } from "../environments/probe";
import { metadataSamples } from "../environments/contracts";
import { PropertiesPanel } from "../panels/PropertiesPanel";
import { useSuiteRun } from "../suites/useSuiteRun";
import { SuiteGateSetting } from "../suites/SuiteGate";
import { caseMarks as caseMarksOf } from "../suites/compare";
import type { CompareMarks } from "../canvas/Canvas";
import type { CaseResult } from "../suites/suite";
import { graphSamples } from "../panels/run/samples";
import { useRunController } from "../panels/run/useRunController";
import { DriftBanner } from "../deploys/DriftBanner";
import { HeaderStatus } from "./banners/HeaderStatus";
import { NoticeToast } from "./banners/NoticeToast";
import { ViewBanners } from "./banners/ViewBanners";
import { EditorDialogs } from "./dialogs/EditorDialogs";
import { useKeptDraft } from "./draft/useKeptDraft";
import { useCanvasMode } from "./hooks/useCanvasMode";
import { useCanvasView } from "./hooks/useCanvasView";
import { useClipboard } from "./hooks/useClipboard";
import { useEditorSave } from "./hooks/useEditorSave";
import { useExportMenu } from "./hooks/useExportMenu";
import { useGitDeploys } from "./hooks/useGitDeploys";
import { useGraphLoader } from "./hooks/useGraphLoader";
import { useLiveValidation } from "./hooks/useLiveValidation";
import { validationRelease } from "./validationRelease";
import { useNotice } from "./hooks/useNotice";
import { useOpenedRun } from "./hooks/useOpenedRun";
import { useServiceCatalog } from "./hooks/useServiceCatalog";
import { useNodeEditing } from "./hooks/useNodeEditing";
import { useRunTarget } from "./hooks/useRunTarget";
import { useShortcuts } from "./hooks/useShortcuts";
import { useUnsavedGuard } from "./hooks/useUnsavedGuard";
import { useVersionActions } from "./hooks/useVersionActions";
import { PanelResizer, usePanelOpen, usePanelWidth } from "./PanelResizer";
import { SidePanel, type PanelTab } from "./SidePanel";
import { useBudgetCheck } from "../panels/load/useBudgetCheck";
import { editorReducer, initialEditorState, snapshot, stateOfVersion } from "./store";
import { Toolbar } from "./toolbar/Toolbar";
import type { Busy, Confirm, View } from "./types";

// CodeMirror (about 350 KB minified) is loaded when the YAML tab is first shown.
const YamlPanel = lazyComponent(() => import("../panels/YamlPanel").then((m) => m.YamlPanel), "YAML editor");
// Tabs not shown when the editor opens are loaded on first use too (the bundle budget).
const HistoryPanel = lazyComponent(() => import("../panels/HistoryPanel").then((m) => m.HistoryPanel), "history");
const RunPanel = lazyComponent(() => import("../panels/run/RunPanel").then((m) => m.RunPanel), "run panel");
const SuitePanel = lazyComponent(() => import("../suites/SuitePanel").then((m) => m.SuitePanel), "tests panel");
const LoadTestsPanel = lazyComponent(() => import("../panels/load/LoadTestsPanel").then((m) => m.LoadTestsPanel), "load tests panel");
// The Flow view (its projection, join points, layout and boxes) is loaded when first shown.
const FlowCanvas = lazyComponent(() => import("../flow/FlowCanvas").then((m) => m.FlowCanvas), "Flow view");

export function EditorApp({ config }: { config: StudioConfig }) {
  const api = useMemo(() => new Api(config), [config]);
  const graphName = config.graph ?? "";
  const lockedVersion = typeof config.version === "number" ? config.version : null;
  const { viewCenter, measuredSizes, fitView, focusNode } = useCanvasView();

  const [s, dispatch] = useReducer(editorReducer, null, () => initialEditorState(null));
  const [canvasKey, setCanvasKey] = useState(0);
  const [view, setView] = useState<View>(null);
  const [tab, setTab] = useState<PanelTab>("properties");
  // The YAML panel (CodeMirror, loaded on demand) mounts when first shown, then stays mounted.
  const [yamlShown, setYamlShown] = useState(false);
  if (tab === "yaml" && !yamlShown) setYamlShown(true);
  const [notice, setNotice] = useNotice();
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [helpOpen, setHelpOpen] = useState(false);
  const [historyKey, setHistoryKey] = useState(0);
  const [busy, setBusy] = useState<Busy>(null);
  const [runsOpen, setRunsOpen] = useState(false);
  // The runs list (loaded on demand) mounts when first opened, then keeps its filters.
  const [runsShown, setRunsShown] = useState(false);
  if (runsOpen && !runsShown) setRunsShown(true);
  const [savedCase, setSavedCase] = useState<{ id: number; key: number } | null>(null);
  const [caseFailures, setCaseFailures] = useState<CaseResult | null>(null);
  const suite = useSuiteRun(api, graphName);
  const [caseMarks, setCaseMarks] = useState<{ version: number; marks: CompareMarks } | null>(null);
  const [panelWidth, setPanelWidth] = usePanelWidth(config.user);
  const [panelOpen, setPanelOpen] = usePanelOpen(config.user, tab);
  const [canvasMode, setCanvasMode, toggleCanvasMode] = useCanvasMode();

  const working = s.history.state;
  const readOnly = lockedVersion !== null || view !== null;
  const base = s.base && s.base > 0 ? s.base : null;
  const manifestJson = useMemo(() => JSON.stringify(toManifest(working)), [working]);
  // The loader's callback runs after this render, when `loadVersion` below exists.
  const { loading, loadError, graphInfo } = useGraphLoader({ api, graphName, lockedVersion, dispatch, loadVersion: (v) => loadVersion(v) });
  // What the Run panel's last Test connection found, for the environment it tested.
  const [probed, setProbed] = useState<{ environment: string; services: ServiceContracts } | null>(null);
  // The release of the Run panel's environment (set below, once the environments are listed).
  const [release, setRelease] = useState<string | undefined>(undefined);
  const validation = useLiveValidation(api, manifestJson, !loading && !loadError && lockedVersion === null, probed?.services, release);
  const { setServerIssues } = validation;
  const bumpHistory = useCallback(() => setHistoryKey((k) => k + 1), []);

  // ---- loading -------------------------------------------------------------------------
  const loadVersion = useCallback(
    (version: Version | null) => {
      if (version) dispatch({ type: "load", version });
      setCanvasKey((k) => k + 1);
      setServerIssues(version?.issues ?? null);
    },
    [setServerIssues],
  );

  // ---- derived -------------------------------------------------------------------------
  const dirty = useMemo(() => lockedVersion === null && !loading && snapshot(working) !== s.savedSnapshot, [working, s.savedSnapshot, lockedVersion, loading]);
  const viewState = useMemo(() => (view?.kind === "version" ? stateOfVersion(view.version) : view?.kind === "compare" ? view.cmp.state : null), [view]);
  const displayState = viewState ?? working;
  const displayNodes = displayState.nodes;

  const workingIssues = useMemo(() => validation.serverIssues ?? localIssues(working), [validation.serverIssues, working]);
  const displayIssues = useMemo(() => (view?.kind === "version" ? (view.version.issues ?? []) : view?.kind === "compare" ? (view.cmp.to.issues ?? []) : workingIssues), [view, workingIssues]);
  // indexIssues reads only the nodes: a viewport change (every pan) keeps the index, so the canvas
  // does not rebuild every card.
  const issueIndex = useMemo(() => indexIssues({ nodes: displayNodes }, displayIssues), [displayNodes, displayIssues]);
  // The latency budgets against the timeouts of the version on screen, pinned to their fields.
  const budgetWarnings = useBudgetCheck(api, graphName, view?.kind === "version" ? view.version.number : (lockedVersion ?? base), tab === "properties" && s.selection.kind === "none");
  const errorCount = displayIssues.filter((i) => i.severity === "error").length;
  const warningCount = displayIssues.length - errorCount;

  useUnsavedGuard(dirty, graphName);
  const remountCanvas = useCallback(() => setCanvasKey((k) => k + 1), []);
  const keptDraft = useKeptDraft({ api, user: config.user, graphName, enabled: lockedVersion === null, loaded: !loading && !loadError, dirty, editor: s, base, dispatch, loadVersion, remountCanvas, setNotice });

  // ---- editing ---------------------------------------------------------------------------
  const onSelect = useCallback((selection: Selection) => dispatch({ type: "select", selection }), []);
  const onViewport = useCallback(
    (viewport: Viewport) => {
      if (!viewState) dispatch({ type: "viewport", viewport });
    },
    [viewState],
  );

  const { onEdit, onCanvasEdit, onPanelEdit, addNode, addStep, removeNodes, deleteSelection, selectedNodeName, selectedNames } = useNodeEditing({ dispatch, readOnly, working, selection: s.selection, setConfirm, viewCenter, measuredSizes });
  const clipboard = useClipboard({ displayState, working, selectedNames, readOnly, onEdit, removeNodes, viewCenter, measuredSizes, setNotice });

  // ---- auto layout / view ---------------------------------------------------------------------
  const autoLayout = async () => {
    if (readOnly) return;
    if (canvasMode === "flow") {
      onEdit({ type: "moveFlowBoxes", positions: {}, reset: true });
      setTimeout(() => fitView(300), 50);
      return;
    }
    setBusy("layout");
    try {
      const positions = await computeAutoLayout(working, measuredSizes());
      onEdit({ type: "moveNodes", positions });
      setTimeout(() => fitView(300), 50);
    } catch (err) {
      setNotice({ kind: "error", text: `Auto layout failed: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const editorSave = useEditorSave({
    api,
    graphName,
    user: config.user,
    editor: s,
    dispatch,
    canSave: !readOnly && !loading && !loadError,
    base,
    setServerIssues,
    setNotice,
    setBusy,
    onVersionsChanged: bumpHistory,
    showYaml: () => setTab("yaml"),
  });
  const { saver, save, yamlControl, yamlInvalid, setYamlInvalid } = editorSave;
  const { conflict } = saver;

  const showView = (next: View) => {
    setView(next);
    setCanvasKey((k) => k + 1);
  };
  const versions = useVersionActions({
    api,
    graphName,
    base,
    dirty,
    view,
    showView,
    loadVersion: (version) => {
      setView(null);
      loadVersion(version);
    },
    onVersionsChanged: bumpHistory,
    onCompared: () => setTab("history"),
    setBusy,
    setNotice,
    setConfirm,
    onTestsRequired: (refusal) => exportMenu.setGate(refusal),
  });

  // ---- deploys through Git, the export menu ------------------------------------------------
  const gitDeploys = useGitDeploys({
    api,
    graphName,
    loaded: !loading && !loadError,
    dirty,
    lockedVersion,
    editVersion: (version) => {
      setView(null);
      loadVersion(version);
    },
    onVersionsChanged: bumpHistory,
    setNotice,
  });
  const { deploys, setDeployOf } = gitDeploys;
  const exportMenu = useExportMenu({ api, graphName, view, base, lockedVersion, exportAs: versions.exportAs, deployVersion: setDeployOf, setNotice });

  // ---- test runs ---------------------------------------------------------------------------
  const runTarget = useRunTarget({ view, lockedVersion, dirty, base, setNotice });
  const samplesOfGraph = useMemo(() => graphSamples(working.layoutExtra), [working.layoutExtra]);
  const catalog = useServiceCatalog(api);
  const runs = useRunController({ api, graph: graphName, resolveVersion: runTarget.resolveVersion, graphSamples: samplesOfGraph });
  const workingNodes = working.nodes;
  const graphServices = useMemo(() => serviceNames({ nodes: workingNodes }), [workingNodes]);
  const probedSamples = useMemo(() => metadataSamples(probed?.services), [probed]);
  const probeProps = useMemo(() => ({ api, services: graphServices, onProbed: (results: ProbeResult[], environment: string) => setProbed({ environment, services: contractsFromProbe(results) }) }), [api, graphServices]);
  // Another environment may map the services elsewhere: its contracts are not known yet.
  useEffect(() => {
    if (probed && probed.environment !== runs.environment) setProbed(null);
  }, [probed, runs.environment]);
  useEffect(() => setRelease(validationRelease(runs.environments, runs.environment)), [runs.environments, runs.environment]);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- reads only working.nodes
  const services = useMemo(() => paletteServices(catalog, runs.environments, working), [catalog, runs.environments, working.nodes]);
  const openRun = useOpenedRun({ shownRun: runs.run, lockedVersion, base, dirty, view, showView, viewVersion: versions.viewVersion, setNotice });

  const selectRunStep = (node: string, index: number) => {
    if (!displayState.nodes.some((n) => n.name === node)) return;
    onSelect({ kind: "step", node, index });
    focusNode(node);
  };

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
  const dialogOpen = helpOpen || confirm !== null || conflict !== null || editorSave.signIn !== null || keptDraft.offer !== null;
  useShortcuts({
    save: () => void save(),
    run: () => {
      setTab("run");
      void runs.start();
    },
    undo: () => dispatch({ type: "undo" }),
    redo: () => dispatch({ type: "redo" }),
    copy: clipboard.copy,
    cut: clipboard.cut,
    paste: () => void clipboard.paste(),
    selectAll: () => onSelect({ kind: "nodes", names: displayState.nodes.map((n) => n.name) }),
    deleteSelection,
    escape: () => {
      onSelect({ kind: "none" });
      exportMenu.setOpen(false);
    },
    help: () => setHelpOpen(true),
    fitView,
    autoLayout: () => void autoLayout(),
    toggleView: toggleCanvasMode,
    togglePanel: () => setPanelOpen(!panelOpen),
    readOnly,
    dialogOpen,
    runBlocked: dialogOpen || runTarget.asking || runsOpen,
  });

  // ---- render -----------------------------------------------------------------------------
  // Both views of the graph get the same document, selection and marks.
  const viewProps: GraphViewProps = {
    state: displayState,
    selection: s.selection,
    issues: issueIndex,
    readOnly,
    compare: caseMarks && view?.kind === "version" && view.version.number === caseMarks.version ? caseMarks.marks : view?.kind === "compare" ? view.cmp.marks : null,
    run: runs.marks,
    contracts: probed?.services ?? null,
    services,
    onEdit: onCanvasEdit,
    onSelect,
  };
  const headerStatus = (
    <HeaderStatus
      graphName={graphName}
      description={graphInfo?.description}
      lockedVersion={lockedVersion}
      view={view}
      base={base}
      dirty={dirty}
      loaded={!loading && !loadError}
      checking={validation.checking}
      errorCount={errorCount}
      warningCount={warningCount}
      yamlInvalid={view ? null : yamlInvalid}
      live={deploys.live}
    />
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

  const renderPanel = (id: Exclude<PanelTab, "yaml">) => {
    switch (id) {
      case "properties":
        return (
          <>
            <PropertiesPanel state={displayState} selection={s.selection} issues={issueIndex} readOnly={readOnly} api={api} onEdit={onPanelEdit} onSelect={onSelect} budgetWarnings={budgetWarnings} />
            {s.selection.kind === "none" && <SuiteGateSetting api={api} graph={graphName} readOnly={lockedVersion !== null} />}
          </>
        );
      case "problems":
        return (
          <ProblemsPanel
            issues={displayIssues}
            checking={validation.checking && !view}
            source={view ? "server" : validation.validationFailed ? "local" : validation.serverIssues ? "server" : "none"}
            onActivate={activateIssue}
            fixFor={(issue) => fixForIssue(working, issue)}
            onFix={readOnly ? undefined : (fix) => onEdit(fix.edit)}
          />
        );
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
              onView={(n) => void versions.viewVersion(n)}
              onCompare={(a, b) => void versions.compareVersions(a, b)}
              onRollback={versions.rollback}
              deployments={deploys.deployments}
              onDeploy={lockedVersion === null ? (n) => setDeployOf(n) : undefined}
            />
          </>
        );
      case "run":
        return (
          <RunPanel
            ctl={runs}
            versionLabel={runTarget.label}
            selection={s.selection}
            onSelectStep={selectRunStep}
            caseFailures={caseFailures}
            probe={probeProps}
            metadataSamples={probedSamples}
            saveAsCase={{
              api,
              onSaved: (row) => {
                setSavedCase((prev) => ({ id: row.id, key: (prev?.key ?? 0) + 1 }));
                setNotice({ kind: "ok", text: `Saved the test case “${row.name}”; it is in the Tests tab.` });
                setTab("tests");
              },
            }}
          />
        );
      case "load":
        return <LoadTestsPanel api={api} graph={graphName} version={view?.kind === "version" ? view.version.number : (lockedVersion ?? base)} environments={runs.environments} />;
      case "tests":
        return (
          <SuitePanel
            api={api}
            graph={graphName}
            shownRun={runs.run}
            refreshKey={savedCase?.key ?? 0}
            highlight={savedCase?.id ?? null}
            suite={{
              controller: suite,
              shownVersion: view?.kind === "version" ? view.version.number : view?.kind === "compare" ? view.cmp.to.number : (lockedVersion ?? base),
              environments: runs.environments,
              defaultEnvironment: "",
              onCompareCase: (c, b) => {
                if (!c) {
                  setCaseMarks(null);
                  return;
                }
                api.getVersion(graphName, b).then(
                  (version) => {
                    const nodes = stateOfVersion(version).nodes.map((n) => ({ name: n.name, steps: n.steps.map((st) => (typeof st.fields.name === "string" ? st.fields.name : null)) }));
                    setCaseMarks({ version: b, marks: caseMarksOf(c.comparison, nodes) });
                    showView({ kind: "version", version });
                  },
                  (err: unknown) => setNotice({ kind: "error", text: `Could not open version ${b}: ${errorText(err)}` }),
                );
              },
              onOpenRun: (result) => {
                if (!result.run) return;
                setCaseFailures(result);
                openRun(result.run);
                runs.attach(result.run);
                setTab("run");
              },
            }}
          />
        );
    }
  };

  return (
    <div className="page editor-page">
      <AppHeader config={config}>{headerStatus}</AppHeader>
      <Toolbar
        readOnly={readOnly}
        dirty={dirty}
        busy={busy}
        canUndo={canUndo(s.history)}
        canRedo={canRedo(s.history)}
        onUndo={() => dispatch({ type: "undo" })}
        onRedo={() => dispatch({ type: "redo" })}
        onAutoLayout={() => void autoLayout()}
        canvasView={canvasMode}
        onCanvasView={setCanvasMode}
        onFitView={fitView}
        onHelp={() => setHelpOpen(true)}
        message={saver.message}
        onMessage={saver.setMessage}
        saving={saver.saving}
        onSave={() => void save()}
        exportOpen={exportMenu.open}
        onExportOpen={exportMenu.setOpen}
        exportNote={
          exportMenu.note && (
            <p className="menu-note small" role="note">
              {exportMenu.note}
            </p>
          )
        }
        onExport={exportMenu.download}
        onCopyExportCurl={exportMenu.copyCurl}
        onDeploy={exportMenu.deploy}
        onImportStart={versions.startImport}
        onImportFile={(file, done) => void versions.importFile(file, done)}
        historyActive={tab === "history"}
        onHistory={() => setTab("history")}
        onRuns={() => setRunsOpen(true)}
        panelOpen={panelOpen}
        onPanelOpen={setPanelOpen}
      />
      <div className="editor-body">
        <Palette disabled={readOnly} canAddStep={!readOnly && selectedNodeName !== null} onAddNode={addNode} onAddStep={addStep} services={services} flow={canvasMode === "flow"} />
        <div className="canvas-wrap">
          <ViewBanners graphName={graphName} lockedVersion={lockedVersion} base={base} view={view} onBack={() => showView(null)} onRollback={versions.rollback} />
          {deploys.drift && <DriftBanner deployment={deploys.drift} canImport={lockedVersion === null} onImport={gitDeploys.importDrift} />}
          {canvasMode === "flow" ? <FlowCanvas key={canvasKey} {...viewProps} /> : <Canvas key={canvasKey} {...viewProps} onViewport={onViewport} />}
          {(busy === "view" || busy === "compare" || busy === "rollback" || busy === "rebase") && (
            <div className="canvas-busy">
              <Spinner /> Working…
            </div>
          )}
        </div>
        {panelOpen && <PanelResizer width={panelWidth} user={config.user} onWidth={setPanelWidth} />}
        <SidePanel
          tab={tab}
          onTab={setTab}
          width={panelWidth}
          hidden={!panelOpen}
          issueCount={displayIssues.length}
          errorCount={errorCount}
          yaml={yamlShown && <YamlPanel state={displayState} issues={displayIssues} readOnly={readOnly} visible={tab === "yaml"} onManifest={(m) => onEdit(editForManifest(working, m), { key: "yaml" })} onInvalid={setYamlInvalid} control={yamlControl} />}
          panel={renderPanel}
        />
      </div>
      <NoticeToast notice={notice} onDismiss={() => setNotice(null)} />
      <EditorDialogs
        api={api}
        config={config}
        graphName={graphName}
        base={base}
        busy={busy}
        editorSave={editorSave}
        exportMenu={exportMenu}
        keptDraft={keptDraft}
        gitDeploys={gitDeploys}
        runTarget={runTarget}
        confirm={confirm}
        setConfirm={setConfirm}
        helpOpen={helpOpen}
        onHelpClose={() => setHelpOpen(false)}
        runsList={{
          shown: runsShown,
          open: runsOpen,
          currentRunId: runs.console.runId,
          onClose: () => setRunsOpen(false),
          onOpen: (r) => {
            setRunsOpen(false);
            setTab("run");
            openRun(r.id);
            runs.attach(r.id, { replay: true });
          },
          onRunAgain: (r) => {
            setRunsOpen(false);
            setTab("run");
            void runs.rerun(r.id);
          },
        }}
      />
    </div>
  );
}
