import { describe, expect, it } from "vitest";
import { emptyTargetForm, liveText, targetInput, targetIssues } from "./targetForm";

describe("deploy target form", () => {
  it("sends credentials only when a password was typed, and splits the allow list", () => {
    const form = { ...emptyTargetForm(), name: " prod ", url: "https://git.example.org/c.git ", allow_hosts: "git.internal, 10.0.0.5" };
    expect(targetInput(form, false)).toMatchObject({ name: "prod", url: "https://git.example.org/c.git", allow_hosts: ["git.internal", "10.0.0.5"] });
    expect(targetInput(form, false).credentials).toBeUndefined();
    expect(targetInput({ ...form, username: "bot", password: "tok" }, true).credentials).toEqual({ username: "bot", password: "tok" });
    expect(targetInput({ ...form, username: "bot" }, true).credentials).toBeUndefined();
  });

  it("puts each issue under the field its path names", () => {
    expect(targetIssues([{ code: "x", severity: "error", message: "bad", path: "credentials.password" }, { code: "y", severity: "error", message: "no", path: "url" }])).toEqual({ password: ["bad"], url: ["no"] });
  });

  it("says what is live where", () => {
    expect(liveText({ version: 5, target: "prod", commit: "3f2a9c1d00" })).toBe("v5 live on prod, commit 3f2a9c1");
  });
});
