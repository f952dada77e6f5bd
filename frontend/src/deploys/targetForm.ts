/** The deploy target form: its fields as text, and the input the API takes. Pure (unit-tested). */
import type { DeployTarget, DeployTargetInput } from "../api";
import type { Issue } from "../graph/types";

export const DEFAULT_PATH = "graphs/{namespace}/{name}.yaml";

export interface TargetForm {
  name: string;
  description: string;
  url: string;
  branch: string;
  path: string;
  mode: "commit" | "review";
  author_name: string;
  author_email: string;
  allow_hosts: string;
  visibility: "private" | "shared";
  username: string;
  password: string;
}

export function emptyTargetForm(): TargetForm {
  return {
    name: "",
    description: "",
    url: "",
    branch: "main",
    path: DEFAULT_PATH,
    mode: "commit",
    author_name: "Inference Graph Studio",
    author_email: "studio@localhost",
    allow_hosts: "",
    visibility: "private",
    username: "",
    password: "",
  };
}

export function formFromTarget(t: DeployTarget): TargetForm {
  return {
    name: t.name,
    description: t.description ?? "",
    url: t.url,
    branch: t.branch ?? "main",
    path: t.path ?? DEFAULT_PATH,
    mode: t.mode === "review" ? "review" : "commit",
    author_name: t.author_name ?? "",
    author_email: t.author_email ?? "",
    allow_hosts: (t.allow_hosts ?? []).join(", "),
    visibility: t.visibility === "shared" ? "shared" : "private",
    username: t.username ?? "",
    password: "",
  };
}

/** The API input; credentials only when a password or token was typed (they are write-only). */
export function targetInput(form: TargetForm, editing: boolean): DeployTargetInput {
  const input: DeployTargetInput = {
    name: form.name.trim(),
    description: form.description,
    url: form.url.trim(),
    branch: form.branch.trim(),
    path: form.path.trim(),
    mode: form.mode,
    author_name: form.author_name.trim(),
    author_email: form.author_email.trim(),
    allow_hosts: form.allow_hosts
      .split(/[\s,]+/)
      .map((h) => h.trim())
      .filter(Boolean),
    visibility: form.visibility,
  };
  if (form.password || (!editing && form.username.trim())) input.credentials = { username: form.username.trim(), password: form.password };
  return input;
}

/** The API's issues by the field their `path` names (`credentials.password` goes to `password`). */
export function targetIssues(issues: Issue[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const issue of issues) {
    const key = (issue.path ?? "").split(".").pop() || "form";
    (out[key] ??= []).push(issue.message);
  }
  return out;
}

/** "v5 live on prod, commit 3f2a9c1". */
export function liveText(d: { version: number; target: string; commit?: string }): string {
  return `v${d.version} live on ${d.target}${d.commit ? `, commit ${d.commit.slice(0, 7)}` : ""}`;
}
