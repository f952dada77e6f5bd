/**
 * What the server answers and takes, as the client's callers read it: generated from its OpenAPI
 * schema (scripts/api_types.sh), narrowed where the schema says only "an object".
 */
import type { components } from "../generated/api";
import type { Issue, JsonObject, Layout } from "../graph/types";
import type { RunEvent } from "../generated/events";

type Schemas = components["schemas"];

/** A load test (GET /api/load-tests/{id}/); `summary` holds the percentiles (panels/load/loadTest.ts reads it). */
export type LoadTest = Schemas["LoadTest"];
export type LoadTestSummary = Schemas["LoadTestSummary"];
export type LoadTestInput = Schemas["LoadTestInputRequest"];
export type LoadTestComparison = Schemas["LoadTestComparison"];
/** The budget check's issues are ordinary issues, pinned to a field by `path`. */
export type BudgetCheck = Omit<Schemas["BudgetCheck"], "issues"> & { issues: Issue[] };

/** A version's latest suite run (its green state); `current`: it ran the graph's current cases. */
export type VersionTests = Schemas["TestsSummary"];

/** What `POST /api/graphs/{name}/versions/{n}/export/` takes (a forced export: `force` and its `reason`). */
export type ExportInput = Schemas["ExportInputRequest"];

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
 * The semantic diff of the spec core, as graphs/language/diff.py writes it. The schema says only
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

/** One behaviour of a graph that differs between two KServe releases (graphs/language/release_rules.py). */
export interface UpgradeChange {
  code: string;
  release: string;
  message: string;
  before: string;
  after: string;
  node: string | null;
  step: number | null;
  step_name: string | null;
}

/** GET /api/graphs/{name}/versions/{n}/upgrade-report/. */
export interface UpgradeReport {
  graph: string;
  version: number;
  from: { name: string; label: string };
  to: { name: string; label: string };
  same_router: boolean;
  releases: string[];
  changes: UpgradeChange[];
  issues: Record<string, Issue[]>;
}
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

/** A personal API token as listed (never its key). */
export type ApiToken = Schemas["ApiTokenOutput"];

/** A token just created: the one answer that carries its `key`. */
export type ApiTokenCreated = Schemas["ApiTokenCreated"];

/** A deploy target (a Git repository, branch and path template); its credentials are never answered. */
export type DeployTarget = Omit<Schemas["DeployTargetOutput"], "allow_hosts"> & { allow_hosts?: string[] };
/** The fields `POST /api/deploy-targets/` takes (`PATCH` takes any of them). */
export type DeployTargetInput = Schemas["DeployTargetInputRequest"];
/** What `PATCH /api/deploy-targets/{id}/` takes: any of those fields. */
export type DeployTargetPatch = Schemas["PatchedDeployTargetInputRequest"];
/** A deployment: one version committed to one target; `drift` when the file at the branch head differs. */
export type Deployment = Omit<Schemas["DeploymentOutput"], "diff" | "gate"> & { diff: Diff | null; gate?: { required?: boolean; verdict?: string; reason?: string } };

/** An environment as `GET /api/environments/{id}/` answers it. */
export type Environment = Schemas["EnvironmentOutput"];

/** `GET /api/environments/{id}/probe/`: each service's protocol, readiness, v2 metadata or error. */
export type ProbeResult = Schemas["ProbeServiceResult"];
export type EnvironmentProbe = { environment: string; services: ProbeResult[] };
/** What is known of each service for edge contracts (`POST /api/validate/`'s `services`). */
export type ServiceContracts = Record<string, { protocol: "v1" | "v2" | "unknown"; inputs?: ProbeResult["inputs"]; outputs?: ProbeResult["outputs"] }>;

/** The fields `POST /api/environments/` takes (`PATCH` takes any of them). */
export type EnvironmentInput = Schemas["EnvironmentInputRequest"];
/** What `PATCH /api/environments/{id}/` takes: any of those fields. */
export type EnvironmentPatch = Schemas["PatchedEnvironmentInputRequest"];

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

/** The body of a 409 on save or rollback; the schema calls its diff any object (see `Diff`). */
export type ConflictBody = Omit<Schemas["Conflict"], "diff" | "latest"> & { diff: Diff | null; latest: Version | null };

/** `GET /api/runs/{id}/events/?format=json`; each event's `data` typed by its declaration. */
export type RunEventLog = Omit<Schemas["RunEventLog"], "events"> & { events: RunEvent[] };

export type SaveResult = { status: 200 | 201; version: Version };
