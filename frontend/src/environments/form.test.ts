import { describe, expect, it } from "vitest";
import type { Environment } from "../api";
import type { Issue } from "../graph/types";
import { changeBlocker, deleteBlocker, emptyForm, formFromEnvironment, formToInput, issueKey, issuesByKey } from "./form";

const ENV: Environment = {
  id: 7,
  name: "staging",
  description: "the staging cluster",
  service_urls: { "model-a": "http://a.test/v1/models/a:predict", "model-b": "http://b.test/predict" },
  url_template: "http://{name}.{namespace}.example/v1/models/{name}:predict",
  namespace: "ml",
  propagate_headers: ["^X-Request-Id$", "^Authorization$"],
  step_timeout: 12.5,
  deadline: 40,
  kserve_version: "v0.14.1",
  allow_hosts: ["*.internal"],
  allow_networks: ["10.0.0.0/8"],
  allow_loopback: false,
  allow_private: true,
  trace_propagation: false,
  visibility: "private",
  secret_headers: ["x-api-key"],
  owner: "erin",
  system: false,
  created_at: "2026-11-30T10:00:00Z",
  updated_at: "2026-11-30T10:00:00Z",
};

function issue(path: string, message = "bad"): Issue {
  return { code: "environment.invalid", severity: "error", path, message };
}

describe("form <-> API", () => {
  it("an environment read into the form is sent back unchanged", () => {
    const { input, problems } = formToInput(formFromEnvironment(ENV));
    expect(problems).toEqual([]);
    const { id: _id, owner: _owner, system: _system, created_at: _c, updated_at: _u, ...fields } = ENV;
    expect(input).toEqual(fields);
  });

  it("a new form carries the model's defaults (KServe's URL template, 30 s steps, 60 s deadline, private)", () => {
    const { input } = formToInput({ ...emptyForm(), name: "mine" });
    expect(input.url_template).toBe("http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict");
    expect([input.step_timeout, input.deadline, input.visibility]).toEqual([30, 60, "private"]);
    expect([input.allow_loopback, input.allow_private]).toEqual([false, false]);
    expect(input.trace_propagation).toBe(true); // every step call gets a traceparent unless turned off
    expect(input.kserve_version).toBe("master"); // the newest release
  });

  it("blank host, network and secret-header rows are left out, and the API's indexes map back to the form's rows", () => {
    const form = { ...emptyForm(), allow_networks: ["", "10.0.0.0/8", " ", "nonsense"] };
    const { input, rows } = formToInput(form);
    expect(input.allow_networks).toEqual(["10.0.0.0/8", "nonsense"]);
    expect(issueKey(issue("allow_networks[1]"), form, rows)).toBe("allow_networks[3]");
    // DRF's own list errors say `field.1`
    expect(issueKey(issue("allow_networks.1"), form, rows)).toBe("allow_networks[3]");
  });

  it("header patterns are sent exactly as typed, blanks included, for the API to explain them", () => {
    const form = { ...emptyForm(), propagate_headers: ["^X-A$", "", " x-b"] };
    const { input, rows } = formToInput(form);
    expect(input.propagate_headers).toEqual(["^X-A$", "", " x-b"]);
    expect(issueKey(issue("propagate_headers[1]"), form, rows)).toBe("propagate_headers[1]");
  });

  it("service rows become a map; a blank row is dropped, a nameless or repeated one is a problem of the form", () => {
    const form = {
      ...emptyForm(),
      services: [
        { service: " a ", url: "http://a.test/" },
        { service: "", url: "" },
        { service: "", url: "http://b.test/" },
        { service: "a", url: "http://c.test/" },
      ],
    };
    const { input, problems } = formToInput(form);
    expect(input.service_urls).toEqual({ a: "http://a.test/" });
    expect(problems.map((p) => p.path)).toEqual(["services[2]", "services[3]"]);
  });

  it("an API issue about a service URL is pinned to the row of that service", () => {
    const form = formFromEnvironment(ENV);
    const { rows } = formToInput(form);
    expect(issueKey(issue("service_urls.model-b"), form, rows)).toBe("services[1]");
  });

  it("seconds that are not a number are a problem of the form; numbers are sent as numbers", () => {
    const { input, problems } = formToInput({ ...emptyForm(), step_timeout: "abc", deadline: " 2.5 " });
    expect(input.deadline).toBe(2.5);
    expect(problems.map((p) => p.path)).toEqual(["step_timeout"]);
  });

  it("issues naming no field the form shows are grouped under the empty key", () => {
    const form = emptyForm();
    const { rows } = formToInput(form);
    const grouped = issuesByKey([issue("name", "taken"), { code: "x", severity: "error", message: "whole" }, issue("step_timeout", "too long")], form, rows);
    expect(Object.fromEntries(grouped)).toEqual({ name: ["taken"], "": ["whole"], step_timeout: ["too long"] });
  });
});

describe("who may change what (execution.services)", () => {
  it("the owner changes a private environment; another user may not; staff may", () => {
    expect(changeBlocker(ENV, "erin", false)).toBeNull();
    expect(changeBlocker(ENV, "frank", false)).toMatch(/only its owner or staff/);
    expect(changeBlocker(ENV, "frank", true)).toBeNull();
  });

  it("a shared environment is changed by staff only, even by its owner", () => {
    expect(changeBlocker({ ...ENV, visibility: "shared" }, "erin", false)).toMatch(/only staff/);
  });

  it("the system default cannot be deleted, even by staff, and only staff may change it", () => {
    const local = { ...ENV, name: "local", system: true, owner: null, visibility: "shared" as const };
    expect(deleteBlocker(local, "root", true)).toMatch(/cannot be deleted/);
    expect(changeBlocker(local, "erin", false)).toMatch(/only staff/);
    expect(changeBlocker(local, "root", true)).toBeNull();
  });
});
