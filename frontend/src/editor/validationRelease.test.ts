import { afterEach, describe, expect, it, vi } from "vitest";
import { Api } from "../api";
import { validationRelease } from "./validationRelease";

const ENVIRONMENTS = [
  { name: "local", kserve_version: "master" },
  { name: "old-cluster", kserve_version: "v0.15.2" },
] as const;

describe("validationRelease", () => {
  it("is the release of the environment chosen in the Run panel", () => {
    expect(validationRelease([...ENVIRONMENTS], "old-cluster")).toBe("v0.15.2");
    expect(validationRelease([...ENVIRONMENTS], "local")).toBe("master");
  });

  it("is undefined (the newest release) while that environment is not listed", () => {
    expect(validationRelease([], "old-cluster")).toBeUndefined();
    expect(validationRelease([...ENVIRONMENTS], "gone")).toBeUndefined();
  });
});

describe("Api.validate", () => {
  afterEach(() => vi.unstubAllGlobals());

  async function bodyOf(...args: Parameters<Api["validate"]>): Promise<unknown> {
    const fetch = vi.fn(async (_url: string, _init: RequestInit) => new Response(JSON.stringify({ valid: true, issues: [] }), { status: 200 }));
    vi.stubGlobal("fetch", fetch);
    const api = new Api({ apiBase: "/api/", user: "u", csrfToken: "t", logoutUrl: "/logout/" });
    await api.validate(...args);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch.mock.calls[0][0]).toBe("/api/validate/");
    return JSON.parse(String(fetch.mock.calls[0][1].body));
  }

  it("sends the release to check against when one is given", async () => {
    const manifest = { spec: { nodes: {} } };
    expect(await bodyOf(manifest, undefined, "v0.15.2")).toEqual({ manifest, kserve_version: "v0.15.2" });
    expect(await bodyOf(manifest, { detector: { protocol: "v1" } }, "v0.14.1")).toEqual({ manifest, services: { detector: { protocol: "v1" } }, kserve_version: "v0.14.1" });
    expect(await bodyOf(manifest, {})).toEqual({ manifest });
    expect(await bodyOf(manifest)).toEqual({ manifest });
  });
});
