/**
 * The environments page: the environments the user may use, and a form to create, change or
 * delete one with every field the API has. The API decides what is valid; its 400 issues are
 * shown next to the field or row their `path` names. What the user may not do is disabled, with
 * the reason beside it (the rules of `execution.services`, mirrored by `changeBlocker`).
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { Api, ApiError, type Environment, type StudioConfig } from "../api";
import { ConfirmDialog } from "../common/ConfirmDialog";
import { Notice, useNotice } from "../common/Notice";
import { AppHeader, ErrorBanner, Spinner, describeApiError, errorText, formatTime } from "../common/ui";
import type { Issue } from "../graph/types";
import { TestConnection } from "./TestConnection";
import { KSERVE_RELEASES, KSERVE_URL_TEMPLATE, changeBlocker, deleteBlocker, emptyForm, formFromEnvironment, formToInput, issuesByKey, type EnvironmentForm, type KserveVersion, type ListField } from "./form";

/** `?edit=<name>` opens that environment's form (the editor's "Manage environments" link). */
function requestedName(): string | null {
  return new URLSearchParams(window.location.search).get("edit");
}

type Editing = { kind: "new" } | { kind: "edit"; env: Environment };

export function EnvironmentsApp({ config }: { config: StudioConfig }) {
  const api = useRef(new Api(config)).current;
  const isStaff = config.isStaff ?? false;
  const [environments, setEnvironments] = useState<Environment[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [deleting, setDeleting] = useState<Environment | null>(null);
  const [busy, setBusy] = useState(false);
  const { notice, setNotice, noticeRef } = useNotice();

  const load = useCallback(async (): Promise<Environment[]> => {
    setLoading(true);
    try {
      const all = await api.allPages(await api.listEnvironments());
      setEnvironments(all);
      setError(null);
      return all;
    } catch (err) {
      setError(`Could not list environments: ${errorText(err)}`);
      return [];
    } finally {
      setLoading(false);
    }
  }, [api]);

  useEffect(() => {
    void load().then((all) => {
      const wanted = requestedName();
      const env = wanted ? all.find((e) => e.name === wanted) : undefined;
      if (env) setEditing({ kind: "edit", env });
    });
  }, [load]);

  const saved = async (env: Environment, created: boolean) => {
    setNotice(`${created ? "Created" : "Saved"} environment ${env.name}.`);
    setEditing(null);
    await load();
  };

  const remove = async (env: Environment) => {
    setBusy(true);
    try {
      await api.deleteEnvironment(env.id);
      setDeleting(null);
      if (editing?.kind === "edit" && editing.env.id === env.id) setEditing(null);
      setNotice(`Deleted environment ${env.name}.`);
      await load();
    } catch (err) {
      setDeleting(null);
      setError(`Could not delete ${env.name}: ${describeApiError(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="page">
      <AppHeader config={config}>
        <span className="crumb">Environments</span>
      </AppHeader>
      <main className="list-main">
        <div className="list-toolbar">
          <h1>Environments</h1>
          <div className="spacer" />
          <button type="button" className="btn btn-primary" onClick={() => setEditing({ kind: "new" })} disabled={editing?.kind === "new"}>
            New environment
          </button>
        </div>
        <p className="env-intro">
          An environment says where a test run sends each step's call, which of the request's headers go along, how long steps and runs may take, and which private networks they may reach. Runs that name none use <strong className="mono">local</strong>, the system's default.
        </p>
        <ErrorBanner error={error} onDismiss={() => setError(null)} />
        <Notice notice={notice} noticeRef={noticeRef} />
        {editing && (
          <EnvironmentEditor
            key={editing.kind === "edit" ? editing.env.id : "new"}
            api={api}
            env={editing.kind === "edit" ? editing.env : null}
            user={config.user}
            isStaff={isStaff}
            onCancel={() => setEditing(null)}
            onSaved={(env, created) => void saved(env, created)}
          />
        )}
        <div className="table-wrap">
          <table className="graph-table env-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Where steps go</th>
                <th>Visibility</th>
                <th>Owner</th>
                <th>Updated</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {environments.map((env) => {
                const changeReason = changeBlocker(env, config.user, isStaff);
                const deleteReason = deleteBlocker(env, config.user, isStaff);
                return (
                  <tr key={env.id}>
                    <td>
                      <span className="mono env-name">{env.name}</span>
                      {env.system && <span className="badge badge-base">system default</span>}
                      {env.description && <div className="muted small">{env.description}</div>}
                    </td>
                    <td className="mono small env-where">
                      <div>KServe {env.kserve_version}</div>
                      {Object.keys(env.service_urls).length > 0 && <div>{Object.keys(env.service_urls).length} mapped service(s)</div>}
                      <div>{env.url_template}</div>
                      <TestConnection api={api} environmentId={env.id} environmentName={env.name} idPrefix={`env-probe-${env.id}`} />
                    </td>
                    <td>{env.visibility === "shared" ? "Shared with everyone" : "Private"}</td>
                    <td>{env.system ? "system" : (env.owner ?? "")}</td>
                    <td className="nowrap">{formatTime(env.updated_at)}</td>
                    <td className="row-actions">
                      <button type="button" className="btn btn-small" aria-label={`${changeReason ? "View" : "Edit"} ${env.name}`} onClick={() => setEditing({ kind: "edit", env })}>
                        {changeReason ? "View" : "Edit"}
                      </button>
                      <button type="button" className="btn btn-small btn-danger-ghost" aria-label={`Delete ${env.name}`} disabled={deleteReason !== null} title={deleteReason ?? undefined} aria-describedby={deleteReason ? `env-delete-why-${env.id}` : undefined} onClick={() => setDeleting(env)}>
                        Delete
                      </button>
                      {deleteReason && (
                        <span id={`env-delete-why-${env.id}`} className="visually-hidden">
                          {deleteReason}
                        </span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {loading && (
            <div className="table-status">
              <Spinner /> Loading…
            </div>
          )}
          {!loading && environments.length === 0 && <div className="table-status empty">No environments yet.</div>}
        </div>
      </main>
      <ConfirmDialog open={deleting !== null} title="Delete environment" confirmLabel="Confirm delete" busyLabel="Deleting…" busy={busy} onConfirm={() => deleting && void remove(deleting)} onClose={() => setDeleting(null)}>
        <p>
          Delete <strong className="mono">{deleting?.name}</strong>? Runs made in it keep their settings and its name; new runs can no longer use it.
        </p>
      </ConfirmDialog>
    </div>
  );
}

function EnvironmentEditor({ api, env, user, isStaff, onCancel, onSaved }: { api: Api; env: Environment | null; user: string; isStaff: boolean; onCancel: () => void; onSaved: (env: Environment, created: boolean) => void }) {
  const [form, setForm] = useState<EnvironmentForm>(() => (env ? formFromEnvironment(env) : emptyForm()));
  const [issues, setIssues] = useState<Map<string, string[]>>(new Map());
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const blocker = env ? changeBlocker(env, user, isStaff) : null;
  const system = env?.system ?? false;
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => headingRef.current?.focus(), []);

  const set = <K extends keyof EnvironmentForm>(key: K, value: EnvironmentForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (blocker) return;
    const { input, rows, problems } = formToInput(form);
    if (problems.length) {
      setIssues(issuesByKey(problems, form, rows));
      setError("The form has errors; nothing was saved.");
      return;
    }
    setSaving(true);
    setError(null);
    setIssues(new Map());
    try {
      const result = env ? await api.updateEnvironment(env.id, input) : await api.createEnvironment(input);
      onSaved(result, env === null);
    } catch (err) {
      const apiIssues: Issue[] = err instanceof ApiError ? err.issues : [];
      const grouped = issuesByKey(apiIssues, form, rows);
      setIssues(grouped);
      const unplaced = grouped.get("") ?? [];
      const head = err instanceof ApiError ? (err.body?.detail ?? err.message) : errorText(err);
      setError(apiIssues.length > 0 && unplaced.length === 0 ? `Not saved: ${head} See the fields marked below.` : `Not saved: ${describeApiError(err)}`);
    } finally {
      setSaving(false);
    }
  };

  const title = env ? `${blocker ? "View" : "Edit"} environment ${env.name}` : "New environment";
  // About the whole map, or a service no row names any more.
  const mapErrors = [...(issues.get("service_urls") ?? []), ...(issues.get("services") ?? [])];
  return (
    <form className="env-form card" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="env-form-title">
      <h2 id="env-form-title" ref={headingRef} tabIndex={-1}>
        {title}
      </h2>
      {blocker && (
        <p className="env-readonly" id="env-readonly-why">
          Read-only: {blocker}
        </p>
      )}
      {error && (
        <div className="field-error env-form-error" role="alert">
          {error}
        </div>
      )}
      <fieldset className="env-fieldset" disabled={blocker !== null || saving} aria-describedby={blocker ? "env-readonly-why" : undefined}>
        <Section title="Name">
          <TextField id="env-name" label="Name" value={form.name} onChange={(v) => set("name", v)} errors={issues.get("name")} disabled={system} mono help={system ? "The system's default keeps its name: runs that name no environment use it." : "Letters, digits, '-', '_' and '.', starting with a letter or digit; at most 63 characters. 'local' is reserved."} />
          <TextField id="env-description" label="Description" value={form.description} onChange={(v) => set("description", v)} errors={issues.get("description")} />
        </Section>

        <Section title="KServe release">
          <div className="field">
            <label htmlFor="env-kserve-version">KServe release of the cluster</label>
            <select id="env-kserve-version" className="input" value={form.kserve_version} aria-invalid={issues.get("kserve_version") ? true : undefined} aria-describedby={`env-kserve-version-help${issues.get("kserve_version") ? " env-kserve-version-error" : ""}`} onChange={(e) => set("kserve_version", e.target.value as KserveVersion)}>
              {KSERVE_RELEASES.map((release) => (
                <option key={release.value} value={release.value}>
                  {release.label}
                </option>
              ))}
            </select>
            <FieldErrors id="env-kserve-version-error" errors={issues.get("kserve_version")} />
            <div id="env-kserve-version-help" className="field-help">
              Runs in this environment answer as this release's router does: its router changed between releases (status propagation, header patterns from v0.12, the Splitter's dropped draws on v0.13 to v0.18, an unmet Sequence condition answering 500 before v0.15.1, routerTimeouts and mapPredictionsToInstances from v0.16). Before v0.12 the headers below are exact header names, not patterns.
            </div>
          </div>
        </Section>

        <Section title="Where steps go">
          <p className="field-help">A step's serviceName is looked up in the service map first; a serviceName not in the map is called at the URL template.</p>
          <div className="env-rows" role="group" aria-labelledby="env-services-label">
            <div id="env-services-label" className="label">
              Service map
            </div>
            <FieldErrors id="env-services-error" errors={mapErrors.length ? mapErrors : undefined} />
            {form.services.length === 0 && <div className="field-help">No mapped services: every step uses the URL template.</div>}
            {form.services.map((row, index) => {
              const errors = issues.get(`services[${index}]`);
              const errId = `env-services-${index}-error`;
              return (
                <div className="env-row" key={index}>
                  <input className={`input mono${errors ? " input-invalid" : ""}`} aria-label={`Service name ${index + 1}`} placeholder="serviceName" value={row.service} aria-invalid={errors ? true : undefined} aria-describedby={errors ? errId : undefined} onChange={(e) => set("services", form.services.map((r, i) => (i === index ? { ...r, service: e.target.value } : r)))} />
                  <input className={`input mono grow${errors ? " input-invalid" : ""}`} aria-label={`Service URL ${index + 1}`} placeholder="http://host:port/v1/models/name:predict" value={row.url} aria-invalid={errors ? true : undefined} aria-describedby={errors ? errId : undefined} onChange={(e) => set("services", form.services.map((r, i) => (i === index ? { ...r, url: e.target.value } : r)))} />
                  <button type="button" className="btn btn-small" aria-label={`Remove service ${index + 1}`} onClick={() => set("services", form.services.filter((_, i) => i !== index))}>
                    Remove
                  </button>
                  <FieldErrors id={errId} errors={errors} />
                </div>
              );
            })}
            <button type="button" className="btn btn-small env-add" onClick={() => set("services", [...form.services, { service: "", url: "" }])}>
              Add service
            </button>
          </div>
          <TextField id="env-url-template" label="URL template" value={form.url_template} onChange={(v) => set("url_template", v)} errors={issues.get("url_template")} mono help={`For serviceNames not in the map: {name} becomes the step's serviceName and {namespace} the namespace below (or the graph's). Must be an http:// or https:// URL. KServe's own: ${KSERVE_URL_TEMPLATE}`} />
          <TextField id="env-namespace" label="Namespace" value={form.namespace} onChange={(v) => set("namespace", v)} errors={issues.get("namespace")} mono help="What {namespace} stands for; empty: the graph's own namespace." />
        </Section>

        <Section title="Headers">
          <RowsField
            field="propagate_headers"
            label="Headers to propagate"
            itemLabel="Header pattern"
            placeholder="^X-Request-Id$"
            rows={form.propagate_headers}
            issues={issues}
            onChange={(rows) => set("propagate_headers", rows)}
            help={
              <>
                Request headers whose name matches one of these patterns are forwarded to every step, as KServe's PROPAGATE_HEADERS does. Each pattern is a Go regular expression (RE2: no look-ahead or back-references), matched anywhere in the header name and case-sensitively against its canonical form (<span className="mono">X-Request-Id</span>): anchor it with <span className="mono">^…$</span> for one header. It is not a glob: <span className="mono">Auth*</span> matches any name containing <span className="mono">Aut</span>, and lower-case <span className="mono">authorization</span> matches nothing. An empty pattern would match every header, Authorization and Cookie included, so it is refused (write <span className="mono">.*</span> if you mean that); a comma is refused too, because KServe splits the list on commas.
              </>
            }
          />
          <RowsField field="secret_headers" label="Secret headers" itemLabel="Secret header" placeholder="x-api-key" rows={form.secret_headers} issues={issues} onChange={(rows) => set("secret_headers", rows)} help="Header names (any case) whose values runs and load tests store redacted, on top of the usual ones (Authorization, Cookie, …)." />
          <Check id="env-trace-propagation" label="Send a trace context (traceparent) to every step" checked={form.trace_propagation} onChange={(v) => set("trace_propagation", v)} errors={issues.get("trace_propagation")} />
          <p className="field-help">Each step call gets a W3C <span className="mono">traceparent</span> header naming its own span in the run's trace, so the spans of model servers that honour it (KServe's do) nest under the step call. It replaces a <span className="mono">traceparent</span> the patterns above would forward. Off: none is sent.</p>
        </Section>

        <Section title="Time limits">
          <div className="env-pair">
            <TextField id="env-step-timeout" label="Step timeout (seconds)" value={form.step_timeout} onChange={(v) => set("step_timeout", v)} errors={issues.get("step_timeout")} inputMode="decimal" help="How long one step call may take." />
            <TextField id="env-deadline" label="Deadline (seconds)" value={form.deadline} onChange={(v) => set("deadline", v)} errors={issues.get("deadline")} inputMode="decimal" help="How long the whole run may take. Both must be more than 0 and at most the server's limit (RUN_MAX_DEADLINE, 300 s unless configured)." />
          </div>
          <p className="field-help" id="env-run-limits">
            Whatever the deadline, a run also stops after the server's per-run limits: 10,000 step calls (RUN_MAX_STEP_CALLS) and 32 MiB of trace events (RUN_MAX_EVENT_BYTES), unless configured; its error then names the limit. A graph that loops back on itself (a nodeName cycle fed a new answer every round) ends at whichever comes first.
          </p>
        </Section>

        <Section title="Networks steps may reach">
          <p className="field-help">
            Before each call the URL guard looks up the host's addresses. Public addresses are always allowed. Cloud metadata, link-local, multicast, broadcast and unspecified addresses are never allowed, whatever is set here. Loopback (127.0.0.0/8, ::1) and private addresses (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7) are refused unless allowed below: everywhere with the two boxes, or only for the hosts and networks listed. Only http:// and https:// URLs are called.
          </p>
          <Check id="env-allow-loopback" label="Allow loopback (this machine)" checked={form.allow_loopback} onChange={(v) => set("allow_loopback", v)} errors={issues.get("allow_loopback")} />
          <Check id="env-allow-private" label="Allow private networks" checked={form.allow_private} onChange={(v) => set("allow_private", v)} errors={issues.get("allow_private")} />
          <RowsField field="allow_hosts" label="Allowed hosts" itemLabel="Allowed host" placeholder="models.internal or *.internal" rows={form.allow_hosts} issues={issues} onChange={(rows) => set("allow_hosts", rows)} help="Host names that may resolve to loopback or private addresses: an exact name (any case), or *.suffix for every name under it." />
          <RowsField field="allow_networks" label="Allowed networks" itemLabel="Allowed network" placeholder="10.1.0.0/16" rows={form.allow_networks} issues={issues} onChange={(rows) => set("allow_networks", rows)} help="Networks (CIDR, e.g. 10.1.0.0/16 or fd00::/8) whose loopback or private addresses may be called." />
        </Section>

        <Section title="Who may use it">
          <div role="radiogroup" aria-labelledby="env-visibility-label" aria-describedby="env-visibility-help">
            <div id="env-visibility-label" className="label">
              Visibility
            </div>
            <label className="check-label">
              <input type="radio" name="env-visibility" value="private" checked={form.visibility === "private"} disabled={system} onChange={() => set("visibility", "private")} /> Private: only you (and staff) see and use it
            </label>
            <label className="check-label">
              <input type="radio" name="env-visibility" value="shared" checked={form.visibility === "shared"} disabled={system || !isStaff} onChange={() => set("visibility", "shared")} /> Shared: every user may run in it
            </label>
            <div id="env-visibility-help" className="field-help">
              {system ? "The system's default stays shared." : isStaff ? "Once shared, only staff may change it." : "Only staff may share an environment (its owner could otherwise redirect everybody's runs)."}
            </div>
            <FieldErrors id="env-visibility-error" errors={issues.get("visibility")} />
          </div>
        </Section>
      </fieldset>
      <div className="create-actions env-actions">
        <button type="submit" className="btn btn-primary" disabled={saving || blocker !== null} aria-describedby={blocker ? "env-readonly-why" : undefined}>
          {saving ? (
            <>
              <Spinner decorative /> Saving…
            </>
          ) : env ? (
            "Save changes"
          ) : (
            "Create environment"
          )}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          {blocker ? "Close" : "Cancel"}
        </button>
      </div>
    </form>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="env-section">
      <h3>{title}</h3>
      {children}
    </section>
  );
}

function FieldErrors({ id, errors }: { id: string; errors?: string[] }) {
  if (!errors?.length) return null;
  return (
    <div id={id} className="field-error env-field-error">
      {errors.join(" ")}
    </div>
  );
}

function TextField({ id, label, value, onChange, errors, help, mono, disabled, inputMode }: { id: string; label: string; value: string; onChange: (v: string) => void; errors?: string[]; help?: string; mono?: boolean; disabled?: boolean; inputMode?: "decimal" }) {
  const described = [errors ? `${id}-error` : "", help ? `${id}-help` : ""].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} className={`input${mono ? " mono" : ""}${errors ? " input-invalid" : ""}`} value={value} disabled={disabled} inputMode={inputMode} autoComplete="off" spellCheck={false} aria-invalid={errors ? true : undefined} aria-describedby={described || undefined} onChange={(e) => onChange(e.target.value)} />
      <FieldErrors id={`${id}-error`} errors={errors} />
      {help && (
        <div id={`${id}-help`} className="field-help">
          {help}
        </div>
      )}
    </div>
  );
}

function Check({ id, label, checked, onChange, errors }: { id: string; label: string; checked: boolean; onChange: (v: boolean) => void; errors?: string[] }) {
  return (
    <div className="field field-check">
      <label className="check-label" htmlFor={id}>
        <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} aria-invalid={errors ? true : undefined} aria-describedby={errors ? `${id}-error` : undefined} />
        {label}
      </label>
      <FieldErrors id={`${id}-error`} errors={errors} />
    </div>
  );
}

function RowsField({ field, label, itemLabel, placeholder, rows, issues, onChange, help }: { field: ListField; label: string; itemLabel: string; placeholder: string; rows: string[]; issues: Map<string, string[]>; onChange: (rows: string[]) => void; help: ReactNode }) {
  const labelId = `env-${field}-label`;
  const helpId = `env-${field}-help`;
  return (
    <div className="env-rows" role="group" aria-labelledby={labelId} aria-describedby={helpId}>
      <div id={labelId} className="label">
        {label}
      </div>
      <div id={helpId} className="field-help">
        {help}
      </div>
      <FieldErrors id={`env-${field}-error`} errors={issues.get(field)} />
      {rows.map((value, index) => {
        const errors = issues.get(`${field}[${index}]`);
        const errId = `env-${field}-${index}-error`;
        return (
          <div className="env-row" key={index}>
            <input className={`input mono grow${errors ? " input-invalid" : ""}`} aria-label={`${itemLabel} ${index + 1}`} placeholder={placeholder} value={value} autoComplete="off" spellCheck={false} aria-invalid={errors ? true : undefined} aria-describedby={errors ? errId : undefined} onChange={(e) => onChange(rows.map((r, i) => (i === index ? e.target.value : r)))} />
            <button type="button" className="btn btn-small" aria-label={`Remove ${itemLabel.toLowerCase()} ${index + 1}`} onClick={() => onChange(rows.filter((_, i) => i !== index))}>
              Remove
            </button>
            <FieldErrors id={errId} errors={errors} />
          </div>
        );
      })}
      <button type="button" className="btn btn-small env-add" onClick={() => onChange([...rows, ""])}>
        Add {itemLabel.toLowerCase()}
      </button>
    </div>
  );
}
