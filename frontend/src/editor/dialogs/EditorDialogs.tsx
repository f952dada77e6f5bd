/**
 * The editor's dialogs, each shown while its flow asks for it: the export gate's reason, a save
 * conflict, a confirmation, the keyboard help, a kept draft, signing in again, deploying, which
 * version to run, and the runs list. The rare ones load when they first open.
 */
import type { Api, RunSummary, StudioConfig } from "../../api";
import { ConfirmDialog } from "../../common/ConfirmDialog";
import { lazyComponent } from "../../common/lazyChunk";
import { ExportGateDialog } from "../../suites/SuiteGate";
import type { useKeptDraft } from "../draft/useKeptDraft";
import type { useEditorSave } from "../hooks/useEditorSave";
import type { useExportMenu } from "../hooks/useExportMenu";
import type { useGitDeploys } from "../hooks/useGitDeploys";
import type { useRunTarget } from "../hooks/useRunTarget";
import type { Busy, Confirm } from "../types";
import { RunConfirmDialog } from "./RunConfirmDialog";

// Dialogs for the rare cases (a kept draft, an ended session, a save conflict, the keyboard
// help) load when they open.
const ConflictDialog = lazyComponent(() => import("./ConflictDialog").then((m) => m.ConflictDialog), "conflict dialog");
const HelpDialog = lazyComponent(() => import("./HelpDialog").then((m) => m.HelpDialog), "keyboard help");
const RestoreDraftDialog = lazyComponent(() => import("./RestoreDraftDialog").then((m) => m.RestoreDraftDialog), "restore dialog");
const SignInDialog = lazyComponent(() => import("./SignInDialog").then((m) => m.SignInDialog), "sign-in dialog");
// The deploy dialog and the runs list are loaded when first opened.
const DeployDialog = lazyComponent(() => import("../../deploys/DeployDialog").then((m) => m.DeployDialog), "deploy dialog");
const RunsDialog = lazyComponent(() => import("../../panels/run/RunsDialog").then((m) => m.RunsDialog), "runs list");

/** The runs list: mounted once first opened (it keeps its filters), shown while `open`. */
export interface RunsListProps {
  shown: boolean;
  open: boolean;
  currentRunId: string | null;
  onClose: () => void;
  onOpen: (run: RunSummary) => void;
  onRunAgain: (run: RunSummary) => void;
}

interface EditorDialogsProps {
  api: Api;
  config: StudioConfig;
  graphName: string;
  base: number | null;
  busy: Busy;
  editorSave: ReturnType<typeof useEditorSave>;
  exportMenu: ReturnType<typeof useExportMenu>;
  keptDraft: ReturnType<typeof useKeptDraft>;
  gitDeploys: ReturnType<typeof useGitDeploys>;
  runTarget: ReturnType<typeof useRunTarget>;
  confirm: Confirm | null;
  setConfirm: (confirm: Confirm | null) => void;
  helpOpen: boolean;
  onHelpClose: () => void;
  runsList: RunsListProps;
}

export function EditorDialogs({ api, config, graphName, base, busy, editorSave, exportMenu, keptDraft, gitDeploys, runTarget, confirm, setConfirm, helpOpen, onHelpClose, runsList }: EditorDialogsProps) {
  const { saver, save, signIn } = editorSave;
  const { conflict } = saver;
  return (
    <>
      <ExportGateDialog refusal={exportMenu.gate} onClose={() => exportMenu.setGate(null)} onForce={exportMenu.forceExport} />
      {conflict && <ConflictDialog conflict={conflict} busy={busy === "rebase" || saver.saving} onRebase={() => void saver.rebase()} onKeepMine={() => conflict && void save(conflict.latest_version)} onClose={() => saver.setConflict(null)} />}
      <ConfirmDialog
        open={confirm !== null}
        title={confirm?.title ?? ""}
        confirmLabel={confirm?.confirmLabel ?? ""}
        danger={confirm?.danger ?? false}
        onClose={() => setConfirm(null)}
        onConfirm={() => {
          const action = confirm?.action;
          setConfirm(null);
          action?.();
        }}
      >
        <p>{confirm?.body}</p>
      </ConfirmDialog>
      {helpOpen && <HelpDialog open={helpOpen} onClose={onHelpClose} />}
      {keptDraft.offer && <RestoreDraftDialog draft={keptDraft.offer} graphName={graphName} base={base} onLater={keptDraft.later} onDiscard={keptDraft.discard} onRestore={() => void keptDraft.restore()} />}
      {signIn && <SignInDialog open={signIn !== null} user={config.user} loginUrl={config.loginUrl ?? "/login/"} onClose={editorSave.closeSignIn} onRetry={editorSave.retryAfterSignIn} onSignIn={editorSave.signInWith} />}
      {gitDeploys.deployOf !== null && <DeployDialog api={api} graph={graphName} version={gitDeploys.deployOf} onClose={() => gitDeploys.setDeployOf(null)} onDeployed={gitDeploys.onDeployed} />}
      <RunConfirmDialog
        open={runTarget.asking}
        base={base}
        onCancel={() => runTarget.answer(null)}
        onRunBase={() => runTarget.answer(base)}
        onSaveAndRun={() => runTarget.answer(save().then((v) => (v ? v.number : null)))}
      />
      {runsList.shown && <RunsDialog api={api} graph={graphName} open={runsList.open} currentRunId={runsList.currentRunId} onClose={runsList.onClose} onOpen={runsList.onOpen} onRunAgain={runsList.onRunAgain} />}
    </>
  );
}
