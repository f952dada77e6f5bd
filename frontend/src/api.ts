/**
 * The REST client: the only module that calls `fetch` (docs/architecture.md, "The frontend"). Session auth with the CSRF
 * token from the page's `studio-config`. Every failure becomes an `ApiError` carrying the
 * server's `{detail, issues}` body.
 */
import type { components } from "./generated/api";
import type { Issue, JsonObject, Layout } from "./graph/types";
import type { RunEvent } from "./generated/events";
import type { SuiteRun } from "./tests/suite";
import type { CompareResult } from "./tests/compare";

export interface StudioConfig {
  apiBase: string;
  user: string;
  csrfToken: string;
  logoutUrl: string;
  graph?: string;
  version?: number | null;
  /** The environments page: staff may share environments and change the system default. */
  isStaff?: boolean;
}

/** Reads the JSON that Django's `json_script` filter put in `<script id="studio-config">`. */
export function readConfig(): StudioConfig {
  const el = document.getElementById("studio-config");
  const parsed = el?.textContent ? (JSON.parse(el.textContent) as Partial<StudioConfig>) : {};
  return {
    apiBase: parsed.apiBase ?? "/api/",
    user: parsed.user ?? "",
    csrfToken: parsed.csrfToken ?? "",
    logoutUrl: parsed.logoutUrl ?? "/logout/",
    graph: parsed.graph,
    version: parsed.version ?? null,
    isStaff: parsed.isStaff ?? false,
  };
}

// ---- what the server answers: generated from its OpenAPI schema (scripts/api_types.sh) ----------
type Schemas = components["schemas"];

/** A version's latest suite run (its green state); `current`: it ran the graph's current cases. */
export type VersionTests = Schemas["TestsSummary"];

/**
 * A saved version (`VersionOutput`). Its manifest and layout are the JSON the graph model reads
 * (graph/manifest.ts); the schema calls the manifest an InferenceGraph or any object.
 */
export type Version = Omit<Schemas["VersionOutput"], "manifest" | "layout"> & { manifest: JsonObject; layout: Layout | JsonObject | null };

/** A graph with its latest version in full (GET /api/graphs/{name}/). */
export type GraphSummary = Omit<Schemas["GraphOutput"], "latest_version"> & { latest_version: Version | null };

/** A list entry's latest version: a summary, never the manifest (GET /api/graphs/). */
export type VersionBrief = Schemas["VersionBrief"];

/** A row of the graph list: the graph with a summary of its latest version. */
export type GraphListItem = Schemas["GraphListItem"];

/** A row of a graph's history: a version without its manifest and layout. */
export type VersionSummary = Schemas["VersionSummary"];

/** One page of a paginated list (every list the API answers is one). */
export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/**
 * The semantic diff of the spec core, as graphs/spec/diff.py writes it. The schema says only
 * "an object" for it, so this shape is written by hand and read defensively.
 */
export interface Diff {
  metadata?: FieldChange[];
  spec?: FieldChange[];
  nodes?: {
    added?: string[];
    removed?: string[];
    changed?: {
      node: string;
      fields?: FieldChange[];
      steps?: {
        added?: { index: number; name?: string | null; step?: unknown }[];
        removed?: { index: number; name?: string | null; step?: unknown }[];
        moved?: { name?: string | null; from: number; to: number }[];
        changed?: { index: number; name?: string | null; fields?: FieldChange[] }[];
      };
    }[];
  };
  summary?: string;
}

export type ValidationResult = Schemas["ValidateResult"];
export type ConditionResult = Schemas["ConditionResult"];
/** What an import answers: each graph it wrote with its new version, and the issues found. */
export type ImportResult = Omit<Schemas["ImportResult"], "graphs"> & { graphs: (Omit<Schemas["ImportedGraph"], "version"> & { version: Version })[] };

// ---- test runs (Run, RunStep: docs/architecture.md, "The Django apps"; execution/apis.py) ----------------------

/** A stored body as the engine keeps it (execution/engine/trace.py `body_view`). */
export type BodyView = Schemas["BodyView"];

export type RunStatus = Schemas["StatusEnum"];

export type RunStepRow = Schemas["RunStepOutput"];

/** A run as `GET /api/runs/{id}/` answers it. */
export type Run = Schemas["RunOutput"];

/** A row of a graph's runs: no steps, config or bodies (fetch the run for those). */
export type RunSummary = Schemas["RunSummary"];

/** An environment as `GET /api/environments/{id}/` answers it. */
export type Environment = Schemas["EnvironmentOutput"];

/** The fields `POST /api/environments/` takes (`PATCH` takes any of them). */
export type EnvironmentInput = Schemas["EnvironmentInputRequest"];

/** The services the studio knows (`GET /api/services/`): the most used first. */
export type ServiceCatalog = Schemas["ServiceCatalogOutput"];

/** What `POST /api/graphs/{name}/runs/` takes. */
export type RunStart = Schemas["InputRequest"];

export interface RunFilters {
  version?: number;
  status?: RunStatus | "";
  environment?: string;
}

// ---- graph tests (docs/graph-tests.md; execution/testcases/apis.py) ----------------------------

/**
 * A saved test case as `GET /api/graphs/{name}/tests/{id}/` answers it (`TestCaseOutput`); its
 * document (name, description, request, seed, environment, expectations) is read as JSON.
 */
export type TestCaseRow = Omit<Schemas["TestCaseOutput"], "document"> & { document: JsonObject };

/** What "save run as test" takes: a name, `preview` (answer the document, save nothing), the expectations kept. */
export type SaveAsTestInput = Partial<Schemas["SaveAsTestInputRequest"]>;

export class ApiError extends Error {
  readonly status: number;
  readonly body: { detail?: string; issues?: Issue[]; [key: string]: unknown } | null;

  constructor(status: number, message: string, body: ApiError["body"]) {
    super(message);
    this.status = status;
    this.body = body;
  }

  get issues(): Issue[] {
    return Array.isArray(this.body?.issues) ? this.body.issues : [];
  }
}

/** The body of a 409 on save or rollback; the schema calls its diff any object (see `Diff`). */
export type ConflictBody = Omit<Schemas["Conflict"], "diff" | "latest"> & { diff: Diff | null; latest: Version | null };

/** `GET /api/runs/{id}/events/?format=json`; each event's `data` typed by its declaration. */
export type RunEventLog = Omit<Schemas["RunEventLog"], "events"> & { events: RunEvent[] };

export type SaveResult = { status: 200 | 201; version: Version };

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export class Api {
  readonly config: StudioConfig;

  constructor(config: StudioConfig) {
    this.config = config;
  }

  private url(path: string, query?: Record<string, string | number | undefined>): string {
    const base = this.config.apiBase.endsWith("/") ? this.config.apiBase : `${this.config.apiBase}/`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") params.set(k, String(v));
    const qs = params.toString();
    return `${base}${path}${qs ? `?${qs}` : ""}`;
  }

  /** One request; returns the Response for 2xx, throws ApiError otherwise. */
  async raw(method: string, path: string, init: { query?: Record<string, string | number | undefined>; body?: BodyInit; json?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
    let body = init.body;
    if (init.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.json);
    }
    if (!SAFE.has(method)) headers["X-CSRFToken"] = this.config.csrfToken;
    let response: Response;
    try {
      response = await fetch(this.url(path, init.query), { method, headers, body, credentials: "same-origin" });
    } catch (err) {
      throw new ApiError(0, `Network error: ${err instanceof Error ? err.message : String(err)}`, null);
    }
    if (!response.ok) {
      let parsed: ApiError["body"];
      const text = await response.text();
      try {
        parsed = JSON.parse(text) as ApiError["body"];
      } catch {
        parsed = null;
      }
      // A non-JSON body (an HTML or plain-text error page) is summarised by its first line.
      const firstLine = text.trim().split("\n")[0]?.slice(0, 200) ?? "";
      const detail = typeof parsed?.detail === "string" ? parsed.detail : (response.headers.get("Content-Type") ?? "").includes("html") ? response.statusText : firstLine || response.statusText;
      throw new ApiError(response.status, `${response.status}: ${detail}`, parsed);
    }
    return response;
  }

  private async json<T>(method: string, path: string, init: Parameters<Api["raw"]>[2] = {}): Promise<T> {
    const response = await this.raw(method, path, init);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  listGraphs(search = "", page?: number): Promise<Page<GraphListItem>> {
    return this.json("GET", "graphs/", { query: { search, page } });
  }

  /** Follows a `next` link of a paginated list (an absolute or root-relative URL). */
  async nextPage<T>(next: string): Promise<Page<T>> {
    const url = new URL(next, window.location.href);
    const rel = url.pathname.startsWith(this.config.apiBase) ? url.pathname.slice(this.config.apiBase.length) : url.pathname;
    return this.json("GET", rel, { query: Object.fromEntries(url.searchParams) });
  }

  createGraph(input: { name: string; description: string; manifest: JsonObject; layout: Layout; message: string }): Promise<GraphSummary> {
    return this.json("POST", "graphs/", { json: input });
  }

  getGraph(name: string): Promise<GraphSummary> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/`);
  }

  /** Changes the graph's settings (the owner and editors). */
  updateGraph(name: string, patch: { require_passing_tests?: boolean }): Promise<GraphSummary> {
    return this.json("PATCH", `graphs/${encodeURIComponent(name)}/`, { json: patch });
  }

  archiveGraph(name: string): Promise<void> {
    return this.json("DELETE", `graphs/${encodeURIComponent(name)}/`);
  }

  listVersions(name: string, page?: number): Promise<Page<VersionSummary>> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/versions/`, { query: { page } });
  }

  getVersion(name: string, n: number): Promise<Version> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/versions/${n}/`);
  }

  /**
   * Saves a new version on top of `base` (If-Match "v{base}"). 201 = new version, 200 = same
   * as the latest. A 409 throws an ApiError whose body is a `ConflictBody`.
   */
  async saveVersion(name: string, input: { manifest: JsonObject; layout: Layout; message: string }, base: number | null): Promise<SaveResult> {
    const headers: Record<string, string> = {};
    if (base !== null) headers["If-Match"] = `"v${base}"`;
    const response = await this.raw("POST", `graphs/${encodeURIComponent(name)}/versions/`, { json: input, headers });
    return { status: response.status === 201 ? 201 : 200, version: (await response.json()) as Version };
  }

  /**
   * Saves a new version with the content of version `n`, on top of `base` (If-Match "v{base}",
   * the latest version the editor knows). A 409 throws an ApiError whose body is a `ConflictBody`:
   * someone saved since, and nothing was rolled back.
   */
  rollback(name: string, n: number, base: number | null): Promise<Version> {
    const headers: Record<string, string> = {};
    if (base !== null) headers["If-Match"] = `"v${base}"`;
    return this.json("POST", `graphs/${encodeURIComponent(name)}/versions/${n}/rollback/`, { headers });
  }

  diff(name: string, from: number, to: number): Promise<Diff> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/diff/`, { query: { from, to } });
  }

  /**
   * The export exactly as the server wrote it (bytes, for a byte-identical download). With the
   * graph's test gate on and no passing suite run, a 409 (`code: tests_required`) unless `force`
   * carries the reason (kept in the audit log).
   */
  async exportVersion(name: string, n: number, format: "yaml" | "json", force?: { reason: string }): Promise<Blob> {
    const response = await this.raw("GET", `graphs/${encodeURIComponent(name)}/versions/${n}/export/`, {
      query: { format, ...(force ? { force: "1", reason: force.reason } : {}) },
      headers: { Accept: format === "yaml" ? "application/yaml, text/yaml, */*" : "application/json, */*" },
    });
    return response.blob();
  }

  /** Imports YAML or JSON text: a new graph (named `name` if given), or with `graph` a new version of it. */
  importText(text: string, contentType: "application/yaml" | "application/json", options: { graph?: string; base?: number | null; name?: string } = {}): Promise<ImportResult> {
    const headers: Record<string, string> = { "Content-Type": contentType };
    if (options.graph && options.base !== undefined && options.base !== null) headers["If-Match"] = `"v${options.base}"`;
    return this.json("POST", "graphs/import/", { body: text, headers, query: { graph: options.graph, name: options.name } });
  }

  validate(manifest: JsonObject): Promise<ValidationResult> {
    return this.json("POST", "validate/", { json: { manifest } });
  }

  evaluateCondition(document: unknown, condition: string): Promise<ConditionResult> {
    return this.json("POST", "conditions/evaluate/", { json: { document, condition } });
  }

  /** The serviceNames the graphs call and the usable environments map, for the palette. */
  listServices(): Promise<ServiceCatalog> {
    return this.json("GET", "services/");
  }

  // ---- test runs ----------------------------------------------------------------------------

  listEnvironments(page?: number): Promise<Page<Environment>> {
    return this.json("GET", "environments/", { query: { page } });
  }

  /** Creates an environment (201); a 400 carries `issues` whose `path` names the field. */
  createEnvironment(input: EnvironmentInput): Promise<Environment> {
    return this.json("POST", "environments/", { json: input });
  }

  /** Changes the fields given; 400 as for create, 403 when the user may not change it. */
  updateEnvironment(id: number, input: Schemas["PatchedEnvironmentInputRequest"]): Promise<Environment> {
    return this.json("PATCH", `environments/${id}/`, { json: input });
  }

  /** Deletes it (204); 403 for the system default or another user's environment. */
  deleteEnvironment(id: number): Promise<void> {
    return this.json("DELETE", `environments/${id}/`);
  }

  /** Starts a run (202); the answer is the queued run. */
  startRun(graph: string, input: RunStart): Promise<Run> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/runs/`, { json: input });
  }

  listRuns(graph: string, filters: RunFilters = {}, page?: number): Promise<Page<RunSummary>> {
    return this.json("GET", `graphs/${encodeURIComponent(graph)}/runs/`, { query: { version: filters.version, status: filters.status, environment: filters.environment, page } });
  }

  getRun(id: string): Promise<Run> {
    return this.json("GET", `runs/${encodeURIComponent(id)}/`);
  }

  cancelRun(id: string): Promise<Run> {
    return this.json("POST", `runs/${encodeURIComponent(id)}/cancel/`);
  }

  rerun(id: string): Promise<Run> {
    return this.json("POST", `runs/${encodeURIComponent(id)}/rerun/`);
  }

  /**
   * The run's Server-Sent Events (same-origin: the session cookie goes along). Starts after
   * event `after` (0 = from the first); the browser reconnects by itself sending Last-Event-ID.
   */
  /** The run's stored events after `after`, at once (the console's replay). */
  runEventLog(id: string, after = 0): Promise<RunEventLog> {
    return this.json("GET", `runs/${encodeURIComponent(id)}/events/`, { query: { format: "json", last_event_id: after > 0 ? after : undefined } });
  }

  runEvents(id: string, after = 0): EventSource {
    return new EventSource(this.url(`runs/${encodeURIComponent(id)}/events/`, { last_event_id: after > 0 ? after : undefined }), { withCredentials: true });
  }

  // ---- graph tests -----------------------------------------------------------------------------

  /** Every case of the graph (all pages; a graph holds at most 1,000). */
  async listTests(graph: string): Promise<TestCaseRow[]> {
    let page: Page<TestCaseRow> = await this.json("GET", `graphs/${encodeURIComponent(graph)}/tests/`);
    const rows = [...page.results];
    while (page.next) {
      page = await this.nextPage<TestCaseRow>(page.next);
      rows.push(...page.results);
    }
    return rows;
  }

  /** Adds a case (201); 400 with issues pinned to the expectation and field, 409 for a taken name. */
  createTest(graph: string, document: JsonObject): Promise<TestCaseRow> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/tests/`, { json: document });
  }

  /** Replaces a case's document; errors as for create. */
  updateTest(graph: string, id: number, document: JsonObject): Promise<TestCaseRow> {
    return this.json("PUT", `graphs/${encodeURIComponent(graph)}/tests/${id}/`, { json: document });
  }

  deleteTest(graph: string, id: number): Promise<void> {
    return this.json("DELETE", `graphs/${encodeURIComponent(graph)}/tests/${id}/`);
  }

  /** The graph's cases as one `kind: InferenceGraphTest` YAML file. */
  async exportTests(graph: string): Promise<Blob> {
    const response = await this.raw("GET", `graphs/${encodeURIComponent(graph)}/tests/export/`, { headers: { Accept: "application/yaml, */*" } });
    return response.blob();
  }

  /** Imports a test file, all or nothing: merge (same-named cases replaced) or replace. */
  importTests(graph: string, text: string, mode: "merge" | "replace"): Promise<{ count: number; cases: TestCaseRow[] }> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/tests/import/`, { body: text, headers: { "Content-Type": "application/yaml" }, query: { mode } });
  }

  // ---- suite runs ------------------------------------------------------------------------------

  /** Runs the graph's cases (or `cases`) on a version (202, the queued suite run); 409 without cases. */
  startSuite(graph: string, input: { version: number; environment?: string; cases?: number[] }): Promise<SuiteRun> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/suite-runs/`, { json: input });
  }

  /** The graph's suite runs, newest first, as summaries (no per-case results). */
  listSuiteRuns(graph: string, version?: number): Promise<Page<SuiteRun>> {
    return this.json("GET", `graphs/${encodeURIComponent(graph)}/suite-runs/`, { query: { version } });
  }

  getSuiteRun(id: string): Promise<SuiteRun> {
    return this.json("GET", `suite-runs/${encodeURIComponent(id)}/`);
  }

  cancelSuiteRun(id: string): Promise<SuiteRun> {
    return this.json("POST", `suite-runs/${encodeURIComponent(id)}/cancel/`);
  }

  /** Starts suite runs of every case on versions `a` and `b` (202: both ids and where their comparison is). */
  startCompare(graph: string, input: { a: number; b: number; environment?: string }): Promise<{ a: string; b: string; compare_url: string }> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/suite-runs/compare/`, { json: input });
  }

  /** Two suite runs compared; `pending` (202) with both summaries while either is unfinished. */
  async getCompare(a: string, b: string): Promise<{ pending: true; a: SuiteRun; b: SuiteRun } | ({ pending: false } & CompareResult)> {
    const response = await this.raw("GET", "suite-runs/compare/", { query: { a, b } });
    const body = (await response.json()) as CompareResult;
    return response.status === 202 ? { pending: true, a: body.a, b: body.b } : { pending: false, ...body };
  }

  /** The suite run's Server-Sent Events after event `after` (the browser resumes by itself). */
  suiteEvents(id: string, after = 0): EventSource {
    return new EventSource(this.url(`suite-runs/${encodeURIComponent(id)}/events/`, { last_event_id: after > 0 ? after : undefined }), { withCredentials: true });
  }

  /** A case from a finished run (201), or with `preview` the document it would write (200). */
  saveRunAsTest(runId: string, input: SaveAsTestInput & { preview: true }): Promise<{ document: JsonObject }>;
  saveRunAsTest(runId: string, input: SaveAsTestInput): Promise<TestCaseRow>;
  saveRunAsTest(runId: string, input: SaveAsTestInput): Promise<TestCaseRow | { document: JsonObject }> {
    return this.json("POST", `runs/${encodeURIComponent(runId)}/save-as-test/`, { json: input });
  }
}

/** `application/json` for .json files and JSON-looking text, else `application/yaml`. */
export function contentTypeFor(fileName: string, text: string): "application/yaml" | "application/json" {
  if (/\.json$/i.test(fileName)) return "application/json";
  if (/\.ya?ml$/i.test(fileName)) return "application/yaml";
  return /^\s*[[{]/.test(text) ? "application/json" : "application/yaml";
}

/** Saves a blob as a file through a temporary link. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
