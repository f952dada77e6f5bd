/**
 * The deploy targets page: the Git repositories versions are deployed to (a branch, a path
 * template, commit or review mode, the commit author, write-only credentials, the hosts the URL
 * guard lets through), with a form to create, change or delete one. The API decides; its 400
 * issues are shown beside the field their `path` names.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { Api, ApiError, type DeployTarget, type StudioConfig } from "../api";
import { ConfirmDialog } from "../common/ConfirmDialog";
import { Notice, useNotice } from "../common/Notice";
import { AppHeader, ErrorBanner, Spinner, describeApiError, errorText, formatTime } from "../common/ui";
import { DEFAULT_PATH, emptyTargetForm, formFromTarget, targetInput, targetIssues, type TargetForm } from "./targetForm";

type Editing = { kind: "new" } | { kind: "edit"; target: DeployTarget };

export function DeployTargetsApp({ config }: { config: StudioConfig }) {
  const api = useRef(new Api(config)).current;
  const isStaff = config.isStaff ?? false;
  const [targets, setTargets] = useState<DeployTarget[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [deleting, setDeleting] = useState<DeployTarget | null>(null);
  const [busy, setBusy] = useState(false);
  const { notice, setNotice, noticeRef } = useNotice();

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const all = await api.allPages(await api.listDeployTargets());
      setTargets(all);
      setError(null);
    } catch (err) {
      setError(`Could not list deploy targets: ${errorText(err)}`);
    } finally {
      setLoading(false);
    }
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (target: DeployTarget) => {
    setBusy(true);
    try {
      await api.deleteDeployTarget(target.id);
      setDeleting(null);
      setEditing(null);
      setNotice(`Deleted deploy target ${target.name}.`);
      await load();
    } catch (err) {
      setDeleting(null);
      setError(`Could not delete ${target.name}: ${describeApiError(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="page">
      <AppHeader config={config}>
        <a className="crumb-link" href="/">
          Graphs
        </a>
        <span className="crumb-sep" aria-hidden="true">
          /
        </span>
        <span className="crumb">Deploy targets</span>
      </AppHeader>
      <main className="list-main">
        <div className="list-toolbar">
          <h1>Deploy targets</h1>
          <div className="spacer" />
          <button type="button" className="btn btn-primary" onClick={() => setEditing({ kind: "new" })} disabled={editing?.kind === "new"}>
            New deploy target
          </button>
        </div>
        <p className="env-intro">
          A deploy target is a Git repository that Argo CD or Flux applies to a cluster. Deploying a version commits its exported YAML there (to the branch, or to a review branch for a pull request); the studio then shows what is live and notices when the file is changed in Git by hand.
        </p>
        <ErrorBanner error={error} onDismiss={() => setError(null)} />
        <Notice notice={notice} noticeRef={noticeRef} />
        {editing && (
          <TargetEditor
            key={editing.kind === "edit" ? editing.target.id : "new"}
            api={api}
            isStaff={isStaff}
            target={editing.kind === "edit" ? editing.target : null}
            onSaved={(t, created) => {
              setNotice(`${created ? "Created" : "Saved"} deploy target ${t.name}.`);
              setEditing(null);
              void load();
            }}
            onCancel={() => setEditing(null)}
          />
        )}
        <div className="table-wrap">
          <table className="graph-table env-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Repository</th>
                <th>Branch and path</th>
                <th>Mode</th>
                <th>Owner</th>
                <th>Changed</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {targets.map((t) => (
                <tr key={t.id}>
                  <td>
                    <span className="mono env-name">{t.name}</span>
                    {t.visibility === "shared" && <span className="badge badge-base">shared</span>}
                    {t.description && <div className="muted small">{t.description}</div>}
                  </td>
                  <td className="mono small env-where">{t.url}</td>
                  <td className="mono small">
                    {t.branch} · {t.path}
                  </td>
                  <td>{t.mode === "review" ? "review branch" : "commit"}</td>
                  <td>{t.owner ?? "system"}</td>
                  <td className="nowrap">{formatTime(t.updated_at)}</td>
                  <td className="row-actions">
                    <button type="button" className="btn btn-small" aria-label={`Edit ${t.name}`} onClick={() => setEditing({ kind: "edit", target: t })}>
                      Edit
                    </button>
                    <button type="button" className="btn btn-small btn-danger-ghost" aria-label={`Delete ${t.name}`} onClick={() => setDeleting(t)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {loading && (
            <div className="table-status">
              <Spinner /> Loading deploy targets…
            </div>
          )}
          {!loading && targets.length === 0 && <div className="table-status empty">No deploy targets yet.</div>}
        </div>
      </main>
      <ConfirmDialog open={deleting !== null} title="Delete deploy target" confirmLabel="Delete" danger busy={busy} onConfirm={() => deleting && void remove(deleting)} onClose={() => setDeleting(null)}>
        Delete <strong className="mono">{deleting?.name}</strong>? Its deployments stay in each graph&apos;s history, with its name; nothing is removed from the repository.
      </ConfirmDialog>
    </div>
  );
}

function TargetEditor({ api, isStaff, target, onSaved, onCancel }: { api: Api; isStaff: boolean; target: DeployTarget | null; onSaved: (t: DeployTarget, created: boolean) => void; onCancel: () => void }) {
  const [form, setForm] = useState<TargetForm>(() => (target ? formFromTarget(target) : emptyTargetForm()));
  const [saving, setSaving] = useState(false);
  const [issues, setIssues] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const set = <K extends keyof TargetForm>(key: K, value: TargetForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    setIssues({});
    setFormError(null);
    try {
      const input = targetInput(form, target !== null);
      const saved = target ? await api.updateDeployTarget(target.id, input) : await api.createDeployTarget(input);
      onSaved(saved, target === null);
    } catch (err) {
      if (err instanceof ApiError) setIssues(targetIssues(err.issues));
      setFormError(describeApiError(err));
    } finally {
      setSaving(false);
    }
  };

  const field = (key: keyof TargetForm, label: string, help?: string, type = "text") => {
    const id = `target-${key}`;
    const errors = issues[key];
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          type={type}
          className={`input${key === "url" || key === "path" || key === "branch" ? " mono" : ""}${errors ? " input-invalid" : ""}`}
          value={String(form[key])}
          autoComplete={type === "password" ? "new-password" : "off"}
          spellCheck={false}
          aria-invalid={errors ? true : undefined}
          aria-describedby={[help ? `${id}-help` : "", errors ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined}
          onChange={(e) => set(key, e.target.value as never)}
        />
        {help && (
          <div id={`${id}-help`} className="field-help">
            {help}
          </div>
        )}
        {errors && (
          <div id={`${id}-error`} className="field-error env-field-error">
            {errors.join("; ")}
          </div>
        )}
      </div>
    );
  };

  return (
    <form className="env-form card" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="target-form-title">
      <h2 id="target-form-title">{target ? `Deploy target ${target.name}` : "New deploy target"}</h2>
      {formError && (
        <div className="field-error env-form-error" role="alert">
          {formError}
        </div>
      )}
      <fieldset className="env-fieldset" disabled={saving}>
        {field("name", "Name")}
        {field("description", "Description")}
        {field("url", "Repository URL", "file://, git://, https:// (smart HTTP) or ssh:// (with this machine's key). No password in the URL: put it below.")}
        {field("branch", "Branch")}
        {field("path", "Path in the repository", `{namespace} and {name} are the graph's; the default is ${DEFAULT_PATH}.`)}
        <div className="field" role="radiogroup" aria-labelledby="target-mode-label">
          <div id="target-mode-label" className="label">
            Mode
          </div>
          <label className="check-label">
            <input type="radio" name="target-mode" value="commit" checked={form.mode === "commit"} onChange={() => set("mode", "commit")} /> Commit to the branch (what Argo CD applies)
          </label>
          <label className="check-label">
            <input type="radio" name="target-mode" value="review" checked={form.mode === "review"} onChange={() => set("mode", "review")} /> Push a branch studio/&lt;graph&gt;-v&lt;n&gt; for a pull request
          </label>
        </div>
        {field("author_name", "Commit author name")}
        {field("author_email", "Commit author email")}
        {field("username", "User name (HTTPS)")}
        {field("password", target?.has_credentials ? "Password or token (set; type a new one to replace it)" : "Password or token", "Kept as a secret: never shown again, never logged.", "password")}
        {field("allow_hosts", "Allowed private hosts", "Host names (or *.suffix) the repository may be on although they are loopback or private addresses, separated by commas.")}
        <div className="field" role="radiogroup" aria-labelledby="target-visibility-label">
          <div id="target-visibility-label" className="label">
            Visibility
          </div>
          <label className="check-label">
            <input type="radio" name="target-visibility" value="private" checked={form.visibility === "private"} onChange={() => set("visibility", "private")} /> Private: only you (and staff) deploy to it
          </label>
          <label className="check-label">
            <input type="radio" name="target-visibility" value="shared" checked={form.visibility === "shared"} disabled={!isStaff} onChange={() => set("visibility", "shared")} /> Shared: every editor may deploy to it
          </label>
          {!isStaff && <div className="field-help">Only staff may share a deploy target.</div>}
        </div>
      </fieldset>
      <div className="create-actions env-actions">
        <button type="submit" className="btn btn-primary" disabled={saving}>
          {saving && <Spinner decorative />} {target ? "Save" : "Create"}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
