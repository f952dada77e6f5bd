/**
 * The environment form and its mapping to and from the API (pure, no React).
 *
 * The server decides what is valid (`execution.services.environments.check_environment` and the serializer);
 * the form only turns its rows into the API's body and pins the API's 400 issues to the row or
 * field their `path` names (`name`, `service_urls.<service>`, `propagate_headers[1]`, …).
 */
import type { Environment, EnvironmentInput } from "../api";
import type { Issue } from "../graph/types";

/** The URL KServe itself calls for a step's serviceName (DEFAULT_URL_TEMPLATE in execution/engine/config.py). */
export const KSERVE_URL_TEMPLATE = "http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict";

/** The KServe releases whose router runs can reproduce, newest first (graphs/language/releases.py): the
 * value stored, and the tags that ship the same router. */
export const KSERVE_RELEASES: readonly { value: KserveVersion; label: string }[] = [
  { value: "master", label: "master (also v0.19.0, v0.20.0): the newest" },
  { value: "v0.16.0", label: "v0.16.0 (also v0.17.0, v0.17.1, v0.18.0, v0.18.1)" },
  { value: "v0.15.2", label: "v0.15.2 (also v0.15.1)" },
  { value: "v0.14.1", label: "v0.14.1 (also v0.14.0)" },
  { value: "v0.13.1", label: "v0.13.1 (also v0.13.0)" },
  { value: "v0.12.1", label: "v0.12.1 (also v0.12.0)" },
  { value: "v0.11.2", label: "v0.11.2 (also v0.11.1)" },
];
export type KserveVersion = Environment["kserve_version"];

/** The list fields edited as rows of single text inputs. */
export const LIST_FIELDS = ["propagate_headers", "secret_headers", "allow_hosts", "allow_networks"] as const;
export type ListField = (typeof LIST_FIELDS)[number];

export interface ServiceRow {
  service: string;
  url: string;
}

export interface EnvironmentForm {
  name: string;
  description: string;
  services: ServiceRow[];
  url_template: string;
  namespace: string;
  propagate_headers: string[];
  secret_headers: string[];
  allow_hosts: string[];
  allow_networks: string[];
  /** As typed: the API answers for anything that is not a positive number of seconds. */
  step_timeout: string;
  deadline: string;
  kserve_version: KserveVersion;
  allow_loopback: boolean;
  allow_private: boolean;
  trace_propagation: boolean;
  visibility: "private" | "shared";
}

/** A new environment's form: the model's defaults (execution.models.Environment). */
export function emptyForm(): EnvironmentForm {
  return {
    name: "",
    description: "",
    services: [],
    url_template: KSERVE_URL_TEMPLATE,
    namespace: "",
    propagate_headers: [],
    secret_headers: [],
    allow_hosts: [],
    allow_networks: [],
    step_timeout: "30", // seconds, the model's default
    deadline: "60", // seconds, the model's default
    kserve_version: "master",
    allow_loopback: false,
    allow_private: false,
    trace_propagation: true,
    visibility: "private",
  };
}

export function formFromEnvironment(env: Environment): EnvironmentForm {
  return {
    name: env.name,
    description: env.description,
    services: Object.entries(env.service_urls ?? {}).map(([service, url]) => ({ service, url })),
    url_template: env.url_template,
    namespace: env.namespace,
    propagate_headers: [...(env.propagate_headers ?? [])],
    secret_headers: [...(env.secret_headers ?? [])],
    allow_hosts: [...(env.allow_hosts ?? [])],
    allow_networks: [...(env.allow_networks ?? [])],
    step_timeout: String(env.step_timeout),
    deadline: String(env.deadline),
    kserve_version: env.kserve_version,
    allow_loopback: env.allow_loopback,
    allow_private: env.allow_private,
    trace_propagation: env.trace_propagation ?? true,
    visibility: env.visibility,
  };
}

/**
 * The body to send, and where each sent list entry came from (`rows[field][i]` is the form row of
 * the API's entry `i`): blank rows of hosts, networks and secret headers are left out, so the API's
 * indexes must be mapped back. Blank header patterns are sent, for the API to explain what an
 * empty pattern would mean. Fully blank service rows are left out; a row with a URL and no name,
 * or a name given twice, cannot be sent as a map and becomes a problem of the form itself.
 */
export interface FormBody {
  input: EnvironmentInput;
  rows: Record<ListField, number[]>;
  problems: Issue[];
}

export function formToInput(form: EnvironmentForm): FormBody {
  const problems: Issue[] = [];
  const serviceUrls: Record<string, string> = {};
  form.services.forEach((row, index) => {
    const service = row.service.trim();
    const url = row.url.trim();
    if (!service && !url) return;
    if (!service) {
      problems.push(formIssue(`services[${index}]`, "a service needs its serviceName"));
    } else if (Object.hasOwn(serviceUrls, service)) {
      problems.push(formIssue(`services[${index}]`, `${JSON.stringify(service)} is listed twice`));
    } else {
      serviceUrls[service] = url;
    }
  });
  const rows = {} as Record<ListField, number[]>;
  const lists = {} as Record<ListField, string[]>;
  for (const field of LIST_FIELDS) {
    rows[field] = [];
    lists[field] = [];
    form[field].forEach((value, index) => {
      // A header pattern is sent exactly as typed: spaces and emptiness are part of its meaning.
      const sent = field === "propagate_headers" ? value : value.trim();
      if (field !== "propagate_headers" && sent === "") return;
      rows[field].push(index);
      lists[field].push(sent);
    });
  }
  const input: EnvironmentInput = {
    name: form.name.trim(),
    description: form.description,
    service_urls: serviceUrls,
    url_template: form.url_template.trim(),
    namespace: form.namespace.trim(),
    propagate_headers: lists.propagate_headers,
    secret_headers: lists.secret_headers,
    allow_hosts: lists.allow_hosts,
    allow_networks: lists.allow_networks,
    step_timeout: seconds(form.step_timeout),
    deadline: seconds(form.deadline),
    kserve_version: form.kserve_version,
    allow_loopback: form.allow_loopback,
    allow_private: form.allow_private,
    trace_propagation: form.trace_propagation,
    visibility: form.visibility,
  };
  for (const key of ["step_timeout", "deadline"] as const) {
    if (Number.isNaN(input[key])) problems.push(formIssue(key, "must be a number of seconds"));
  }
  return { input, rows, problems };
}

/** Seconds as typed ("", "abc" -> NaN: the form reports it before anything is sent). */
function seconds(text: string): number {
  const trimmed = text.trim();
  return trimmed === "" ? Number.NaN : Number(trimmed);
}

function formIssue(path: string, message: string): Issue {
  return { code: "form.invalid", severity: "error", path, message } as Issue;
}

/**
 * The form key an API issue belongs to: `name`, `services[i]` (a service map entry, by its
 * serviceName), `<list>[row]` (the form's row, not the API's index), or "" when it names no field
 * the form shows (shown above the form). DRF writes a list entry's error as `field.1`, our checks
 * as `field[1]`: both are understood.
 */
export function issueKey(issue: Issue, form: EnvironmentForm, rows: Record<ListField, number[]>): string {
  const path = issue.path ?? "";
  if (path.startsWith("service_urls.")) {
    const service = path.slice("service_urls.".length);
    const index = form.services.findIndex((row) => row.service.trim() === service);
    return index >= 0 ? `services[${index}]` : "services";
  }
  if (/^services\[\d+\]$/.test(path)) return path;
  const entry = /^([a-z_]+)(?:\[(\d+)\]|\.(\d+))$/.exec(path);
  if (entry) {
    const field = entry[1] as ListField;
    const sent = Number(entry[2] ?? entry[3]);
    if ((LIST_FIELDS as readonly string[]).includes(field)) return `${field}[${rows[field][sent] ?? sent}]`;
    return field;
  }
  return FIELD_KEYS.has(path) ? path : "";
}

const FIELD_KEYS = new Set(["name", "description", "service_urls", "url_template", "namespace", "step_timeout", "deadline", "allow_loopback", "allow_private", "trace_propagation", "visibility", ...LIST_FIELDS]);

/** Issues grouped by `issueKey`; those that name no field under "". */
export function issuesByKey(issues: Issue[], form: EnvironmentForm, rows: Record<ListField, number[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const issue of issues) {
    const key = issueKey(issue, form, rows);
    out.set(key, [...(out.get(key) ?? []), issue.message]);
  }
  return out;
}

/** Why the user may not change (or delete) `env`, or null when they may. Mirrors
 * `execution.services.environments.ensure_can_change_environment` and `environment_delete`. */
export function changeBlocker(env: Environment, user: string, isStaff: boolean): string | null {
  if (isStaff) return null;
  if (env.system) return "The system's default environment: only staff may change it.";
  if (env.visibility === "shared") return "A shared environment: only staff may change it.";
  if (env.owner !== user) return `Owned by ${env.owner ?? "nobody"}: only its owner or staff may change it.`;
  return null;
}

export function deleteBlocker(env: Environment, user: string, isStaff: boolean): string | null {
  if (env.system) return "The system's default environment cannot be deleted; staff may change its settings.";
  return changeBlocker(env, user, isStaff);
}
