/**
 * The REST client: `Api`, one method per endpoint the pages call, on top of the transport in
 * `api/transport.ts` (the only code that calls `fetch`). The server's shapes (`api/types.ts`), the
 * page's settings (`api/config.ts`), `ApiError` and the file helpers are re-exported here, so the
 * pages import everything from this one module.
 */
import type { JsonObject, Layout } from "./graph/types";
import type { SuiteRun } from "./suites/suite";
import type { CompareResult } from "./suites/compare";
import { ApiTransport } from "./api/transport";
import type {
  ApiToken,
  ApiTokenCreated,
  BudgetCheck,
  ConditionResult,
  DeployTarget,
  DeployTargetInput,
  DeployTargetPatch,
  Deployment,
  Diff,
  Environment,
  EnvironmentInput,
  EnvironmentPatch,
  EnvironmentProbe,
  ExportInput,
  GraphListItem,
  GraphSummary,
  ImportResult,
  LoadTest,
  LoadTestComparison,
  LoadTestInput,
  LoadTestSummary,
  Page,
  Run,
  RunEventLog,
  RunFilters,
  RunStart,
  RunSummary,
  SaveAsTestInput,
  SaveResult,
  ServiceCatalog,
  ServiceContracts,
  TestCaseRow,
  UpgradeReport,
  ValidationResult,
  Version,
  VersionSummary,
} from "./api/types";

export { readConfig, type SignInResult, type StudioConfig } from "./api/config";
export { ApiError } from "./api/errors";
export { contentTypeFor, downloadBlob } from "./api/files";
export type * from "./api/types";

/** The studio's REST API, one method per endpoint; every failure throws an `ApiError`. */
export class Api extends ApiTransport {
  listGraphs(search = "", page?: number): Promise<Page<GraphListItem>> {
    return this.json("GET", "graphs/", { query: { search, page } });
  }


  createGraph(input: { name: string; description: string; manifest: JsonObject; layout: Layout; message: string }): Promise<GraphSummary> {
    return this.json("POST", "graphs/", { json: input });
  }

  getGraph(name: string): Promise<GraphSummary> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/`);
  }

  /** Changes the graph's settings (the owner and editors). */
  updateGraph(name: string, patch: { require_passing_tests?: boolean; gate_environments?: string[]; latency_budgets?: { graph_p95_ms: number | null; steps: Record<string, number> } }): Promise<GraphSummary> {
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

  /** What upgrading the cluster from KServe release `from` to `to` changes for version `n` (the release rules). */
  upgradeReport(name: string, n: number, from: string, to: string): Promise<UpgradeReport> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/versions/${n}/upgrade-report/`, { query: { from, to } });
  }

  diff(name: string, from: number, to: number): Promise<Diff> {
    return this.json("GET", `graphs/${encodeURIComponent(name)}/diff/`, { query: { from, to } });
  }

  /**
   * The export exactly as the server wrote it (bytes, for a byte-identical download). With the
   * graph's test gate on and no passing suite run the gate trusts, a 409 (`code: tests_required`).
   * With `force`, the export is a POST (CSRF-checked: it writes the forced export and its reason to
   * the audit log; only the owner and editors may); a GET never writes.
   */
  async exportVersion(name: string, n: number, format: "yaml" | "json", force?: { reason: string }): Promise<Blob> {
    const path = `graphs/${encodeURIComponent(name)}/versions/${n}/export/`;
    const headers = { Accept: format === "yaml" ? "application/yaml, text/yaml, */*" : "application/json, */*" };
    const body: ExportInput = { format, force: true, reason: force?.reason ?? "" };
    const response = force ? await this.raw("POST", path, { json: body, headers }) : await this.raw("GET", path, { query: { format }, headers });
    return response.blob();
  }

  /** Imports YAML or JSON text: a new graph (named `name` if given), or with `graph` a new version of it. */
  importText(text: string, contentType: "application/yaml" | "application/json", options: { graph?: string; base?: number | null; name?: string } = {}): Promise<ImportResult> {
    const headers: Record<string, string> = { "Content-Type": contentType };
    if (options.graph && options.base !== undefined && options.base !== null) headers["If-Match"] = `"v${options.base}"`;
    return this.json("POST", "graphs/import/", { body: text, headers, query: { graph: options.graph, name: options.name } });
  }

  /** `services`: what a Test connection found (serviceName -> protocol and v2 tensors), for edge contracts;
   * `kserveVersion`: also check against this KServe release's CRD (default: the newest release's). */
  validate(manifest: JsonObject, services?: ServiceContracts, kserveVersion?: string): Promise<ValidationResult> {
    const known = services && Object.keys(services).length > 0 ? { services } : {};
    return this.json("POST", "validate/", { json: { manifest, ...known, ...(kserveVersion ? { kserve_version: kserveVersion } : {}) } });
  }

  evaluateCondition(document: unknown, condition: string): Promise<ConditionResult> {
    return this.json("POST", "conditions/evaluate/", { json: { document, condition } });
  }

  /** The user's personal API tokens, newest first. */
  listTokens(page?: number): Promise<Page<ApiToken>> {
    return this.json("GET", "tokens/", { query: { page } });
  }

  /** Creates a token (201); its `key` is in this answer only. */
  createToken(input: { name: string; expires_at: string | null }): Promise<ApiTokenCreated> {
    return this.json("POST", "tokens/", { json: input });
  }

  /** Revokes a token (204): requests with its key are 401 from now on. */
  revokeToken(id: number): Promise<void> {
    return this.json("DELETE", `tokens/${id}/`);
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
  updateEnvironment(id: number, input: EnvironmentPatch): Promise<Environment> {
    return this.json("PATCH", `environments/${id}/`, { json: input });
  }

  /** Test connection: probes every service the environment maps, or only `service`. */
  probeEnvironment(id: number, service?: string): Promise<EnvironmentProbe> {
    return this.json("GET", `environments/${id}/probe/`, { query: { service } });
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

  /** A page of the run's stored events after `after` (the console's replay); `next` says whether more follow. */
  runEventLog(id: string, after = 0, limit?: number): Promise<RunEventLog> {
    return this.json("GET", `runs/${encodeURIComponent(id)}/events/`, { query: { format: "json", after: after > 0 ? after : undefined, limit } });
  }

  /**
   * The run's Server-Sent Events (same-origin: the session cookie goes along). Starts after
   * event `after` (0 = from the first); the browser reconnects by itself sending Last-Event-ID.
   */
  runEvents(id: string, after = 0): EventSource {
    return new EventSource(this.url(`runs/${encodeURIComponent(id)}/events/`, { last_event_id: after > 0 ? after : undefined }), { withCredentials: true });
  }

  // ---- graph tests -----------------------------------------------------------------------------

  /** Every case of the graph (all pages; a graph holds at most 1,000). */
  async listTests(graph: string): Promise<TestCaseRow[]> {
    return this.allPages(await this.json<Page<TestCaseRow>>("GET", `graphs/${encodeURIComponent(graph)}/tests/`));
  }

  /** Adds a case (201); 400 with issues pinned to the expectation and field, 409 for a taken name. */
  createTest(graph: string, document: JsonObject): Promise<TestCaseRow> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/tests/`, { json: document });
  }

  /**
   * Replaces a case's document; errors as for create. With `revision` (the one the edit started
   * from) it sends `If-Match: "r{revision}"`: a case changed since answers 409 `test_case.stale`
   * with the case as it is now (see suites/caseConflict.ts) and nothing is saved.
   */
  updateTest(graph: string, id: number, document: JsonObject, revision?: number | null): Promise<TestCaseRow> {
    const headers: Record<string, string> = revision === null || revision === undefined ? {} : { "If-Match": `"r${revision}"` };
    return this.json("PUT", `graphs/${encodeURIComponent(graph)}/tests/${id}/`, { json: document, headers });
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
  startCompare(graph: string, input: { a: number; b: number; environment?: string; kserve_version_a?: string; kserve_version_b?: string }): Promise<{ a: string; b: string; compare_url: string }> {
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

  // ---- load tests ------------------------------------------------------------------------------

  /** Starts a load test of a version (202, queued): `requests` at `concurrency`, with a payload or a test case's request. */
  startLoadTest(graph: string, input: LoadTestInput): Promise<LoadTest> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/load-tests/`, { json: input });
  }

  /** The graph's load tests, newest first (no per-step figures). */
  listLoadTests(graph: string): Promise<Page<LoadTestSummary>> {
    return this.json("GET", `graphs/${encodeURIComponent(graph)}/load-tests/`);
  }

  getLoadTest(id: string): Promise<LoadTest> {
    return this.json("GET", `load-tests/${encodeURIComponent(id)}/`);
  }

  cancelLoadTest(id: string): Promise<LoadTest> {
    return this.json("POST", `load-tests/${encodeURIComponent(id)}/cancel/`);
  }

  /** Two load tests of one graph side by side, step by step. */
  compareLoadTests(a: string, b: string): Promise<LoadTestComparison> {
    return this.json("GET", "load-tests/compare/", { query: { a, b } });
  }

  /** The load test's Server-Sent Events after event `after` (the browser resumes by itself). */
  loadTestEvents(id: string, after = 0): EventSource {
    return new EventSource(this.url(`load-tests/${encodeURIComponent(id)}/events/`, { last_event_id: after > 0 ? after : undefined }), { withCredentials: true });
  }

  /** The graph's latency budgets against a version's timeouts: warnings pinned to the field. */
  budgetCheck(graph: string, version: number): Promise<BudgetCheck> {
    return this.json("GET", `graphs/${encodeURIComponent(graph)}/versions/${version}/budget-check/`);
  }

  // ---- deploy targets and deployments ----------------------------------------------------------

  listDeployTargets(page?: number): Promise<Page<DeployTarget>> {
    return this.json("GET", "deploy-targets/", { query: { page } });
  }

  /** Creates a deploy target (201); a 400 carries `issues` whose `path` names the field. */
  createDeployTarget(input: DeployTargetInput): Promise<DeployTarget> {
    return this.json("POST", "deploy-targets/", { json: input });
  }

  updateDeployTarget(id: number, input: DeployTargetPatch): Promise<DeployTarget> {
    return this.json("PATCH", `deploy-targets/${id}/`, { json: input });
  }

  deleteDeployTarget(id: number): Promise<void> {
    return this.json("DELETE", `deploy-targets/${id}/`);
  }

  /**
   * Commits the version's export to the target through a worker: 201 pushed (or review), 202
   * still pending. 409 `tests_required` (the gate) or `drift` (with `diff`: the file changed in
   * Git); 502 with `code` for a Git failure; 400 `forbidden` for a host the URL guard refuses.
   */
  deployVersion(graph: string, n: number, input: { target: string; message?: string; force?: boolean; reason?: string }): Promise<Deployment> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/versions/${n}/deploy/`, { json: input });
  }

  /** The graph's deployments, newest first; `refresh` reads each live target's branch first (drift). */
  listDeployments(graph: string, refresh = false): Promise<Page<Deployment>> {
    return this.json("GET", `graphs/${encodeURIComponent(graph)}/deployments/`, { query: { refresh: refresh ? 1 : undefined } });
  }

  /** Saves the file changed in Git as a new version (201) and records it as live. */
  importDrift(graph: string, deployment: number): Promise<Version> {
    return this.json("POST", `graphs/${encodeURIComponent(graph)}/deployments/${deployment}/import-drift/`);
  }

  /** Every graph's live deployments (one per target), for the graph list. */
  listLiveDeployments(page?: number): Promise<Page<Deployment>> {
    return this.json("GET", "deployments/live/", { query: { page } });
  }

  /** A case from a finished run (201), or with `preview` the document it would write (200). */
  saveRunAsTest(runId: string, input: SaveAsTestInput & { preview: true }): Promise<{ document: JsonObject }>;
  saveRunAsTest(runId: string, input: SaveAsTestInput): Promise<TestCaseRow>;
  saveRunAsTest(runId: string, input: SaveAsTestInput): Promise<TestCaseRow | { document: JsonObject }> {
    return this.json("POST", `runs/${encodeURIComponent(runId)}/save-as-test/`, { json: input });
  }
}
