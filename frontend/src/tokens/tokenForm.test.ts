import { describe, expect, it } from "vitest";
import { curlLine, expiryFor, isExpired } from "./tokenForm";

describe("expiryFor", () => {
  it("is null for a token that never expires", () => {
    expect(expiryFor(null, new Date("2026-01-01T00:00:00Z"))).toBeNull();
  });
  it("counts whole days from now in UTC", () => {
    expect(expiryFor(30, new Date("2026-01-01T12:00:00Z"))).toBe("2026-01-31T12:00:00.000Z");
  });
});

describe("curlLine", () => {
  it("sends the key as a Token header to the graph list", () => {
    expect(curlLine("http://127.0.0.1:8000/", "igs_abc-_9")).toBe("curl -H 'Authorization: Token igs_abc-_9' 'http://127.0.0.1:8000/api/graphs/'");
  });
  it("quotes a single quote so the shell reads it literally", () => {
    expect(curlLine("http://h/x'y", "k")).toBe("curl -H 'Authorization: Token k' 'http://h/x'\\''y/api/graphs/'");
  });
});

describe("isExpired", () => {
  const now = new Date("2026-06-01T00:00:00Z");
  it("is false without an expiry or before it", () => {
    expect(isExpired(null, now)).toBe(false);
    expect(isExpired("2026-06-02T00:00:00Z", now)).toBe(false);
  });
  it("is true from the expiry on", () => {
    expect(isExpired("2026-06-01T00:00:00Z", now)).toBe(true);
  });
});
