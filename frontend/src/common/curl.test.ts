import { describe, expect, it } from "vitest";
import { exportCurl, runCurl, shellQuote } from "./curl";

const run = {
  graph: "animal-switch",
  version: 2,
  environment: { id: 1, name: "local" },
  seed: 42,
  request: { body: { instances: [{ animal: "cat" }] }, content_type: "application/json", headers: { "Content-Type": "application/json", "X-Trace": "t1" } },
};

describe("Copy as curl", () => {
  it("quotes for the shell so that nothing inside is read", () => {
    expect(shellQuote("it's $HOME `x`")).toBe(`'it'\\''s $HOME \`x\`'`);
  });

  it("starts the same run again: version, payload, headers, environment and seed", () => {
    const line = runCurl("http://127.0.0.1:8000/", run);
    expect(line).toBe(
      `curl -X POST -H "Authorization: Token $STUDIO_TOKEN" -H 'Content-Type: application/json' --data-binary '{"version":2,"payload":{"instances":[{"animal":"cat"}]},"headers":{"X-Trace":"t1"},"environment":"local","seed":42}' 'http://127.0.0.1:8000/api/graphs/animal-switch/runs/'`,
    );
  });

  it("sends a body that is not JSON as text with its content type", () => {
    const line = runCurl("http://h", { ...run, request: { body: "a,b\n1,2", content_type: "text/csv", headers: {} } });
    expect(line).toContain(`--data-binary '{"version":2,"payload":"a,b\\n1,2","content_type":"text/csv","environment":"local","seed":42}'`);
  });

  it("keeps a JSON string payload a string", () => {
    const line = runCurl("http://h", { ...run, request: { body: "not json {", content_type: "application/json" } });
    expect(line).toContain(`"payload":"not json {","content_type":"application/json"`);
  });

  it("quotes a payload with quotes in it", () => {
    const line = runCurl("http://h", { ...run, request: { body: { text: "it's" }, content_type: "application/json" } });
    expect(line).toContain(`'{"version":2,"payload":{"text":"it'\\''s"}`);
  });

  it("has nothing to copy while the run's request is not loaded", () => {
    expect(runCurl("http://h", { ...run, request: { content_type: "application/json" } })).toBeNull();
  });

  it("downloads an export to the file the Export menu would save", () => {
    expect(exportCurl("https://studio.example", "face recognition", 3, "yaml")).toBe(
      `curl -H "Authorization: Token $STUDIO_TOKEN" -o 'face recognition-v3.yaml' 'https://studio.example/api/graphs/face%20recognition/versions/3/export/?format=yaml'`,
    );
  });
});
