/**
 * Deploy a version through Git: pick a deploy target, add a message, deploy. The answers the API
 * can give are each shown for what they are: the test gate (force with a reason), a file changed
 * in Git since the last deployment (its diff; nothing was pushed), a Git failure (auth, not found,
 * rejected, network) or a host the URL guard refuses.
 */
import { useEffect, useState } from "react";
import { ApiError, type Api, type Deployment, type DeployTarget, type Diff } from "../api";
import { Modal, Spinner, describeApiError, errorText } from "../common/ui";
import { DiffView } from "../panels/DiffView";
import { liveText } from "./targetForm";

type Refusal = { kind: "gate"; detail: string } | { kind: "drift"; detail: string; diff: Diff | null } | { kind: "error"; detail: string };

/** The refusal the API gave, read from its error: the test gate, drift in Git, or anything else. */
function refusalOf(err: unknown): Refusal {
  const body = err instanceof ApiError ? err.body : undefined;
  const detail = describeApiError(err);
  if (body?.code === "tests_required") return { kind: "gate", detail };
  if (body?.code === "drift") return { kind: "drift", detail, diff: (body.diff as Diff | null) ?? null };
  return { kind: "error", detail };
}

/** What a deployment the API accepted says: still pushing, pushed for review, or deployed. */
function deployedText(done: Deployment): string {
  if (done.status === "pending") return `Deployment of v${done.version} to ${done.target} is still being pushed; the History tab shows how it ends.`;
  if (done.status === "review") return `Pushed v${done.version} to the review branch ${done.branch} on ${done.target}, commit ${done.commit?.slice(0, 7)}: open a pull request from it.`;
  return `Deployed: ${liveText(done)} (${done.path}).`;
}

function DeployFooter({ done, gate, busy, canDeploy, onClose, onDeploy }: { done: boolean; gate: boolean; busy: boolean; canDeploy: boolean; onClose: () => void; onDeploy: (force: boolean) => void }) {
  if (done) {
    return (
      <button type="button" className="btn btn-primary" onClick={onClose}>
        Close
      </button>
    );
  }
  return (
    <>
      <button type="button" className="btn" onClick={onClose}>
        Cancel
      </button>
      {gate ? (
        <button type="button" className="btn btn-danger" onClick={() => onDeploy(true)} disabled={busy || !canDeploy} aria-busy={busy || undefined}>
          {busy && <Spinner decorative />} Deploy anyway
        </button>
      ) : (
        <button type="button" className="btn btn-primary" onClick={() => onDeploy(false)} disabled={busy || !canDeploy} aria-busy={busy || undefined}>
          {busy && <Spinner decorative />} {busy ? "Pushing…" : "Deploy"}
        </button>
      )}
    </>
  );
}

/** Why there is no target to pick yet: they could not be listed, are loading, or there are none. */
function TargetsState({ targets, loadError }: { targets: DeployTarget[] | null; loadError: string | null }) {
  if (loadError) return <p className="field-error">Could not list deploy targets: {loadError}</p>;
  if (targets === null) {
    return (
      <p>
        <Spinner /> Loading deploy targets…
      </p>
    );
  }
  if (targets.length > 0) return null;
  return (
    <p>
      No deploy target yet: <a href="/deploy-targets/">create one</a> (a Git repository, branch and path).
    </p>
  );
}

/** A drift (with its diff) or an error; the gate's refusal is shown in the form, by its reason. */
function RefusalView({ refusal }: { refusal: Refusal }) {
  if (refusal.kind === "drift") {
    return (
      <div role="alert">
        <p className="field-error">{refusal.detail}</p>
        {refusal.diff && <DiffView diff={refusal.diff} />}
      </div>
    );
  }
  if (refusal.kind === "error") {
    return (
      <p className="field-error" role="alert">
        {refusal.detail}
      </p>
    );
  }
  return null;
}

export function DeployDialog({ api, graph, version, onClose, onDeployed }: { api: Api; graph: string; version: number; onClose: () => void; onDeployed: (d: Deployment) => void }) {
  const [targets, setTargets] = useState<DeployTarget[] | null>(null);
  const [target, setTarget] = useState("");
  const [message, setMessage] = useState("");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [done, setDone] = useState<Deployment | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    api.listDeployTargets().then(
      (page) => {
        setTargets(page.results);
        if (page.results.length > 0) setTarget(page.results[0].name);
      },
      (err: unknown) => setLoadError(errorText(err)),
    );
  }, [api]);

  const deploy = async (force: boolean) => {
    setBusy(true);
    setRefusal(null);
    try {
      const d = await api.deployVersion(graph, version, { target, message, ...(force ? { force: true, reason } : {}) });
      setDone(d);
      onDeployed(d);
    } catch (err) {
      setRefusal(refusalOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open
      wide={refusal?.kind === "drift"}
      title={`Deploy v${version}`}
      onClose={onClose}
      footer={<DeployFooter done={done !== null} gate={refusal?.kind === "gate"} busy={busy} canDeploy={!!target} onClose={onClose} onDeploy={(force) => void deploy(force)} />}
    >
      {done ? (
        <p role="status">{deployedText(done)}</p>
      ) : (
        <>
          <p>The version&apos;s exported YAML, exactly as Export gives it, is committed to the target&apos;s repository, where Argo CD or Flux applies it.</p>
          <TargetsState targets={targets} loadError={loadError} />
          {targets !== null && targets.length > 0 && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void deploy(refusal?.kind === "gate");
              }}
            >
              <div className="field">
                <label className="label" htmlFor="deploy-target">
                  Deploy target
                </label>
                <select id="deploy-target" className="input" value={target} onChange={(e) => setTarget(e.target.value)}>
                  {targets.map((t) => (
                    <option key={t.id} value={t.name}>
                      {t.name} ({t.mode === "review" ? "review branch" : t.branch})
                    </option>
                  ))}
                </select>
              </div>
              <div className="field">
                <label className="label" htmlFor="deploy-message">
                  Message (added to the commit)
                </label>
                <input id="deploy-message" className="input" value={message} maxLength={2000} onChange={(e) => setMessage(e.target.value)} />
              </div>
              {refusal?.kind === "gate" && (
                <div className="field">
                  <p className="field-error" role="alert">
                    {refusal.detail}
                  </p>
                  <label className="label" htmlFor="deploy-reason">
                    Reason to deploy without passing tests (kept in the audit log)
                  </label>
                  <input id="deploy-reason" className="input" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
                </div>
              )}
            </form>
          )}
          {refusal && <RefusalView refusal={refusal} />}
        </>
      )}
    </Modal>
  );
}
