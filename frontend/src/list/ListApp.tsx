/** The graph list page: search, create, import, archive, open. */
import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { Api, ApiError, contentTypeFor, type Deployment, type GraphListItem, type StudioConfig, type VersionBrief } from "../api";
import { ConfirmDialog } from "../common/ConfirmDialog";
import { AppHeader, ErrorBanner, Modal, Spinner, describeApiError, errorText, formatTime } from "../common/ui";
import { emptyManifest, fromManifest, toLayout } from "../graph/manifest";
import { GRAPH_NAME_RE } from "../graph/queries";
import { SuiteChip } from "../suites/SuiteChip";
import { liveText } from "../deploys/targetForm";

export function editorUrl(name: string): string {
  return `/graphs/${encodeURIComponent(name)}/`;
}

/** Inline message for a graph name, or null when the name is acceptable. */
export function nameProblem(name: string): string | null {
  if (!name) return "A name is required.";
  if (name.length > 63) return "At most 63 characters.";
  if (!GRAPH_NAME_RE.test(name)) {
    return "Lower-case letters, digits and '-'; start with a letter, end with a letter or digit (e.g. \"my-graph\").";
  }
  return null;
}

/**
 * A valid name close to what was typed ("Seed Pipeline" -> "seed-pipeline"), or null when there
 * is none (nothing but symbols) or the name is valid already.
 */
export function suggestName(name: string): string | null {
  if (!nameProblem(name)) return null;
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return slug && !nameProblem(slug) ? slug : null;
}

export function ListApp({ config }: { config: StudioConfig }) {
  const api = useRef(new Api(config)).current;
  const [search, setSearch] = useState("");
  const [graphs, setGraphs] = useState<GraphListItem[]>([]);
  const [count, setCount] = useState(0);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [archiving, setArchiving] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  /** An import refused because its graph name is taken: the text, kept for the two ways on. */
  const [clash, setClash] = useState<{ name: string; text: string; contentType: "application/yaml" | "application/json" } | null>(null);
  const [rename, setRename] = useState("");
  const fileRef = useRef<HTMLInputElement>(null);
  const requestSeq = useRef(0);
  /** Each graph's live deployments ("v5 live on prod, commit 3f2a9c1"), by graph name. */
  const [live, setLive] = useState<Record<string, Deployment[]>>({});

  useEffect(() => {
    api.listLiveDeployments().then(
      (page) => {
        const byGraph: Record<string, Deployment[]> = {};
        for (const d of page.results) (byGraph[d.graph] ??= []).push(d);
        setLive(byGraph);
      },
      () => setLive({}), // the list works without it
    );
  }, [api]);

  const load = useCallback(
    async (query: string) => {
      const seq = ++requestSeq.current;
      setLoading(true);
      try {
        const page = await api.listGraphs(query);
        if (seq !== requestSeq.current) return;
        setGraphs(page.results);
        setCount(page.count);
        setNext(page.next);
        setError(null);
      } catch (err) {
        if (seq === requestSeq.current) setError(`Could not load graphs: ${errorText(err)}`);
      } finally {
        if (seq === requestSeq.current) setLoading(false);
      }
    },
    [api],
  );

  useEffect(() => {
    const t = setTimeout(() => void load(search), search ? 250 : 0);
    return () => clearTimeout(t);
  }, [search, load]);

  const loadMore = async () => {
    if (!next) return;
    setBusy("more");
    try {
      const page = await api.nextPage<GraphListItem>(next);
      setGraphs((g) => [...g, ...page.results]);
      setNext(page.next);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(null);
    }
  };

  const onImportFile = async (file: File) => {
    setBusy("import");
    setError(null);
    let text = "";
    try {
      text = await file.text();
      const result = await api.importText(text, contentTypeFor(file.name, text));
      const name = result.graphs[0]?.graph;
      if (name) window.location.assign(editorUrl(name));
      else await load(search);
    } catch (err) {
      const taken = takenName(err);
      if (taken) {
        setClash({ name: taken, text, contentType: contentTypeFor(file.name, text) });
        setRename(`${taken}-imported`);
      } else {
        setError(`Import failed: ${describeApiError(err)}`);
      }
    } finally {
      setBusy(null);
      if (fileRef.current) fileRef.current.value = "";
    }
  };

  /** Imports the clashing text as a new version of the graph of that name, or under `as`. */
  const resolveClash = async (how: { version: true } | { as: string }) => {
    if (!clash) return;
    setBusy("import");
    setError(null);
    try {
      const result = await api.importText(clash.text, clash.contentType, "version" in how ? { graph: clash.name } : { name: how.as });
      setClash(null);
      window.location.assign(editorUrl(result.graphs[0]?.graph ?? ("version" in how ? clash.name : how.as)));
    } catch (err) {
      setClash(null);
      setError(`Import failed: ${describeApiError(err)}`);
    } finally {
      setBusy(null);
    }
  };

  const archive = async (name: string) => {
    setBusy(`archive:${name}`);
    try {
      await api.archiveGraph(name);
      setArchiving(null);
      setGraphs((g) => g.filter((x) => x.name !== name));
      setCount((c) => Math.max(0, c - 1));
    } catch (err) {
      setError(`Could not archive ${name}: ${errorText(err)}`);
      setArchiving(null);
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="page">
      <AppHeader config={config} page="graphs">
        <span className="crumb">Graphs</span>
      </AppHeader>
      <main className="list-main">
        <div className="list-toolbar">
          <h1>Inference graphs</h1>
          <input
            type="search"
            className="input search-input"
            placeholder="Search graphs…"
            aria-label="Search graphs"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <div className="spacer" />
          {busy === "import" && <Spinner label="Importing" />}
          <button type="button" className="btn" onClick={() => fileRef.current?.click()} disabled={busy === "import"}>
            Import
          </button>
          <input
            ref={fileRef}
            type="file"
            accept=".yaml,.yml,.json,application/yaml,application/json,text/yaml"
            hidden
            aria-label="Import file"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void onImportFile(f);
            }}
          />
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            New graph
          </button>
        </div>
        <ErrorBanner error={error} onDismiss={() => setError(null)} />
        {creating && <CreateForm api={api} onCancel={() => setCreating(false)} />}
        <div className="table-wrap">
          <table className="graph-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Description</th>
                <th>Latest</th>
                <th>Owner</th>
                <th>Updated</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {graphs.map((g) => (
                <tr key={g.name}>
                  <td>
                    <a className="graph-link" href={editorUrl(g.name)}>
                      {g.name}
                    </a>
                    {g.namespace && <span className="muted small"> · {g.namespace}</span>}
                    {(live[g.name] ?? []).map((d) => (
                      <div key={d.id} className="small">
                        <span className={`badge live-chip${d.drift ? " live-drift" : ""}`}>{liveText(d)}</span>
                      </div>
                    ))}
                  </td>
                  <td className="desc">{g.description}</td>
                  <td>
                    {g.latest_version ? (
                      <span className="version-cell" title={versionSummary(g.latest_version)}>
                        v{g.latest_version.number}
                        {g.latest_version.valid === false ? (
                          <span className="badge badge-error">invalid</span>
                        ) : (
                          g.latest_version.issue_counts.warning > 0 && <span className="badge badge-warning">{g.latest_version.issue_counts.warning === 1 ? "1 warning" : `${g.latest_version.issue_counts.warning} warnings`}</span>
                        )}{" "}
                        <SuiteChip tests={g.latest_version.tests} none={null} />
                      </span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td>{g.owner ?? ""}</td>
                  <td className="nowrap">{formatTime(g.updated_at)}</td>
                  <td className="row-actions">
                    <a className="btn btn-small" href={editorUrl(g.name)}>
                      Open
                    </a>
                    <button type="button" className="btn btn-small btn-danger-ghost" aria-label={`Archive ${g.name}`} onClick={() => setArchiving(g.name)}>
                      Archive
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {loading && (
            <div className="table-status">
              <Spinner /> Loading…
            </div>
          )}
          {!loading && graphs.length === 0 && (
            <div className="table-status empty">
              {search ? `No graph matches “${search}”.` : "No graphs yet. Create one or import a YAML file."}
            </div>
          )}
        </div>
        <div className="list-footer">
          <span className="muted">
            {graphs.length} of {count} graph{count === 1 ? "" : "s"}
          </span>
          {next && (
            <button type="button" className="btn btn-small" onClick={() => void loadMore()} disabled={busy === "more"}>
              {busy === "more" ? "Loading…" : "Load more"}
            </button>
          )}
        </div>
      </main>
      <Modal
        open={clash !== null}
        title="A graph with this name exists"
        onClose={() => setClash(null)}
        footer={
          <button type="button" className="btn" onClick={() => setClash(null)}>
            Cancel
          </button>
        }
      >
        <p>
          A graph named <strong className="mono">{clash?.name}</strong> already exists. Add the file to it as its next version, or import it as a new graph under another name.
        </p>
        <div className="clash-actions">
          <button type="button" className="btn btn-primary" disabled={busy === "import"} onClick={() => void resolveClash({ version: true })}>
            Import as a new version of {clash?.name}
          </button>
          <form
            className="clash-rename"
            onSubmit={(e) => {
              e.preventDefault();
              if (!nameProblem(rename)) void resolveClash({ as: rename });
            }}
          >
            <label htmlFor="import-rename">New name</label>
            <input id="import-rename" className="input mono" value={rename} onChange={(e) => setRename(e.target.value)} aria-invalid={nameProblem(rename) ? true : undefined} />
            <button type="submit" className="btn" disabled={busy === "import" || nameProblem(rename) !== null}>
              Import under this name
            </button>
            {nameProblem(rename) && <div className="field-error">{nameProblem(rename)}</div>}
          </form>
        </div>
      </Modal>
      <ConfirmDialog open={archiving !== null} title="Archive graph" confirmLabel="Confirm archive" busyLabel={busy?.startsWith("archive:") ? "Archiving…" : undefined} busy={busy !== null} onConfirm={() => archiving && void archive(archiving)} onClose={() => setArchiving(null)}>
        <p>
          Archive <strong>{archiving}</strong>? It disappears from this list; its versions are kept.
        </p>
      </ConfirmDialog>
    </div>
  );
}

/** "3 nodes · 5 steps · 1 error" for the version cell's tooltip. */
function versionSummary(v: VersionBrief): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts = [plural(v.node_count, "node"), plural(v.step_count, "step")];
  if (v.issue_counts.error) parts.push(plural(v.issue_counts.error, "error"));
  if (v.issue_counts.warning) parts.push(plural(v.issue_counts.warning, "warning"));
  return parts.join(" · ");
}

function CreateForm({ api, onCancel }: { api: Api; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [touched, setTouched] = useState(false);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const problem = nameProblem(name);
  const suggestion = touched && problem ? suggestName(name) : null;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (problem) return;
    setSaving(true);
    setError(null);
    try {
      const manifest = emptyManifest(name);
      const layout = toLayout(fromManifest(manifest, null));
      await api.createGraph({ name, description, manifest, layout, message: "Created" });
      window.location.assign(editorUrl(name));
    } catch (err) {
      setError(describeApiError(err));
      setSaving(false);
    }
  };

  return (
    <form className="create-form card" onSubmit={(e) => void submit(e)} noValidate>
      <div className="field">
        <label htmlFor="new-graph-name">Name</label>
        <input
          id="new-graph-name"
          className={`input mono${touched && problem ? " input-invalid" : ""}`}
          value={name}
          autoFocus
          autoComplete="off"
          spellCheck={false}
          aria-invalid={touched && problem ? true : undefined}
          aria-describedby="new-graph-name-help"
          placeholder="my-graph"
          onChange={(e) => {
            setName(e.target.value);
            if (e.target.value) setTouched(true);
          }}
        />
        <div id="new-graph-name-help" className={touched && problem ? "field-error" : "field-help"}>
          {touched && problem ? problem : "KServe name: lower-case letters, digits and '-'."}
        </div>
        {suggestion && (
          <button type="button" className="btn btn-small name-suggestion" onClick={() => setName(suggestion)}>
            Use <span className="mono">{suggestion}</span>
          </button>
        )}
      </div>
      <div className="field grow">
        <label htmlFor="new-graph-description">Description</label>
        <input id="new-graph-description" className="input" value={description} onChange={(e) => setDescription(e.target.value)} placeholder="What does this graph do?" />
      </div>
      <div className="create-actions">
        <button type="submit" className="btn btn-primary" disabled={saving || (touched && problem !== null)}>
          {saving ? "Creating…" : "Create"}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {error && <div className="field-error full">{error}</div>}
    </form>
  );
}

/** The name an import was refused for because a graph already has it (issue `graph.name-taken`). */
export function takenName(err: unknown): string | null {
  if (!(err instanceof ApiError)) return null;
  const issue = err.issues.find((i) => i.code === "graph.name-taken");
  if (!issue) return null;
  const m = /named '([^']+)'|named "([^"]+)"/.exec(issue.message);
  return m ? (m[1] ?? m[2]) : null;
}

