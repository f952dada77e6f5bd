import { describe, expect, it } from "vitest";
import { emptyConsole, reduceEvents } from "./console";
import { releaseTitle } from "./consoleViews";
import type { RunEventMsg } from "./events";

function queued(data: Record<string, unknown>): RunEventMsg {
  return { run: "r1", seq: 1, type: "run.queued", created_at: "2026-01-01T00:00:01.000Z", data: { graph: "g", version: 3, environment: "old-cluster", seed: 1, rerun_of: null, ...data } };
}

describe("the KServe release a run used", () => {
  it("is told when the run is queued and shown in the console's title", () => {
    const c = reduceEvents(emptyConsole("r1"), [queued({ kserve_version: "v0.15.2" })]);
    expect(c.kserveVersion).toBe("v0.15.2");
    expect(c.lines.map((l) => ("text" in l ? l.text : ""))).toContain("Queued: version 3 in environment old-cluster, as KServe v0.15.2's router.");
    expect(releaseTitle(c, null)).toBe(" · KServe v0.15.2");
  });

  it("comes from the run's config snapshot when the events have not told it (yet)", () => {
    expect(releaseTitle(emptyConsole("r1"), { config: { kserve_version: "v0.14.1", allow_loopback: true } })).toBe(" · KServe v0.14.1");
    const c = reduceEvents(emptyConsole("r1"), [queued({ kserve_version: "master" })]);
    expect(releaseTitle(c, { config: { kserve_version: "v0.14.1" } })).toBe(" · KServe master");
  });

  it("is not mentioned for a run made before releases", () => {
    const c = reduceEvents(emptyConsole("r1"), [queued({})]);
    expect(c.kserveVersion).toBeNull();
    expect(c.lines.map((l) => ("text" in l ? l.text : ""))).toContain("Queued: version 3 in environment old-cluster.");
    expect(releaseTitle(c, { config: {} })).toBe("");
    expect(releaseTitle(c, undefined)).toBe("");
    expect(releaseTitle(c, { config: "master" })).toBe("");
  });
});
