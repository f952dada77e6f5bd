import { afterEach, describe, expect, it, vi } from "vitest";
import { Api, ApiError } from "../api";
import { caseConflictOf } from "./caseConflict";

const STALE = {
  detail: "Test case 4 was changed by someone else since revision 1 (it is at revision 2 now).",
  issues: [{ code: "test_case.stale", severity: "error" as const, message: "stale revision 1, the latest is 2" }],
  base_revision: 1,
  revision: 2,
  current: { id: 4, name: "cat", description: "theirs", document: { name: "cat", description: "theirs", expectations: [{ status: 200 }] }, revision: 2, updated_at: "2026-12-04T18:00:00Z" },
};

function api(): Api {
  return new Api({ apiBase: "/api/", csrfToken: "t" } as unknown as ConstructorParameters<typeof Api>[0]);
}

afterEach(() => vi.unstubAllGlobals());

describe("saving a test case over someone else's change", () => {
  it("sends the revision the edit started from as If-Match", async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ id: 4, revision: 3 }), { status: 200, headers: { "Content-Type": "application/json" } }));
    vi.stubGlobal("fetch", fetch);
    await api().updateTest("pets", 4, { name: "cat" }, 2);
    const init = (fetch.mock.calls[0] as unknown as [string, RequestInit])[1];
    expect((init.headers as Record<string, string>)["If-Match"]).toBe('"r2"');
    expect(init.method).toBe("PUT");
  });

  it("sends no precondition without a revision", async () => {
    const fetch = vi.fn(async () => new Response("{}", { status: 200 }));
    vi.stubGlobal("fetch", fetch);
    await api().updateTest("pets", 4, { name: "cat" });
    const init = (fetch.mock.calls[0] as unknown as [string, RequestInit])[1];
    expect((init.headers as Record<string, string>)["If-Match"]).toBeUndefined();
  });

  it("reads a stale answer as a conflict carrying their case", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(STALE), { status: 409, headers: { "Content-Type": "application/json" } })));
    const err = await api()
      .updateTest("pets", 4, { name: "cat", description: "mine" }, 1)
      .then(() => null)
      .catch((e: unknown) => e);
    const conflict = caseConflictOf(err);
    expect(conflict).not.toBeNull();
    expect(conflict?.baseRevision).toBe(1);
    expect(conflict?.revision).toBe(2);
    expect(conflict?.current.description).toBe("theirs");
    expect(conflict?.message).toContain("changed by someone else");
  });

  it("is not a conflict for other failures", () => {
    expect(caseConflictOf(new ApiError(409, "409: name taken", { detail: "name taken", issues: [{ code: "test_case.name_taken" } as never] }))).toBeNull();
    expect(caseConflictOf(new ApiError(400, "400", { detail: "bad", issues: [] }))).toBeNull();
    expect(caseConflictOf(new Error("x"))).toBeNull();
    expect(caseConflictOf(new ApiError(409, "409", { ...STALE, current: null }))).toBeNull();
  });
});
