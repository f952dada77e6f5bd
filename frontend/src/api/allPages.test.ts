import { afterEach, describe, expect, it, vi } from "vitest";
import { Api } from "../api";

describe("Api.allPages", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("follows every next link, in order, from the list's first page", async () => {
    const pages: Record<string, unknown> = {
      "/api/environments/?page=2": { count: 5, next: "http://studio.test/api/environments/?page=3", previous: null, results: [3, 4] },
      "/api/environments/?page=3": { count: 5, next: null, previous: null, results: [5] },
    };
    const fetch = vi.fn(async (url: string) => new Response(JSON.stringify(pages[url]), { status: 200 }));
    vi.stubGlobal("fetch", fetch);
    vi.stubGlobal("window", { location: { href: "http://studio.test/environments/" } });
    const api = new Api({ apiBase: "/api/", user: "u", csrfToken: "t", logoutUrl: "/logout/" });
    const first = { count: 5, next: "/api/environments/?page=2", previous: null, results: [1, 2] };
    expect(await api.allPages(first)).toEqual([1, 2, 3, 4, 5]);
    expect(fetch.mock.calls.map(([url]) => url)).toEqual(Object.keys(pages));
  });

  it("asks nothing more of a list that fits on one page", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const api = new Api({ apiBase: "/api/", user: "u", csrfToken: "t", logoutUrl: "/logout/" });
    expect(await api.allPages({ count: 1, next: null, previous: null, results: ["only"] })).toEqual(["only"]);
    expect(fetch).not.toHaveBeenCalled();
  });
});
