import { describe, expect, it } from "vitest";
import { issueProblems, lineAt, manifestToYaml, parseManifestText, splitIssuePath } from "./yamlText";

const text = `apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: g
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
        - serviceName: a
        - nodeName: other
`;

const lineOf = (t: string, pos: number) => t.slice(0, pos).split("\n").length;

describe("YAML view text", () => {
  it("parses a valid manifest and writes it back unchanged", () => {
    const r = parseManifestText(text);
    expect(r.ok).toBe(true);
    if (r.ok) expect(manifestToYaml(r.manifest)).toBe(text);
  });

  it("marks a syntax error at its line", () => {
    const bad = text.replace("routerType: Sequence", "routerType: [Sequence");
    const r = parseManifestText(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(lineOf(bad, r.problems[0].from)).toBeGreaterThanOrEqual(8);
  });

  it("marks a document the canvas cannot show at the offending key", () => {
    const bad = text.replace("      steps:\n        - serviceName: a\n        - nodeName: other\n", "      steps: oops\n");
    const r = parseManifestText(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(lineOf(bad, r.problems[0].from)).toBe(9);
  });

  it("places server issues on the node or step they name", () => {
    const r = parseManifestText(text);
    if (!r.ok) throw new Error("expected a valid document");
    const [step, node, byLine] = issueProblems(text, r.doc, [
      { code: "x", severity: "warning", message: "m", node: "root", step: 1 },
      { code: "y", severity: "error", message: "m", node: "root" },
      { code: "z", severity: "error", message: "m", line: 4, column: 3 },
    ]);
    expect(lineOf(text, step.from)).toBe(11);
    expect(lineOf(text, node.from)).toBe(7);
    expect(text.slice(byLine.from, byLine.to)).toBe("name: g");
  });

  it("splits dotted issue paths with indices", () => {
    expect(splitIssuePath("spec.nodes.root.steps[1].weight")).toEqual(["spec", "nodes", "root", "steps", 1, "weight"]);
  });
});

describe("YAML syntax errors name the line they underline", () => {
  const manifest = `apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: g
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
        - name: detect
          serviceName: face-detector
    match:
      routerType: Ensemble
      steps:
        - serviceName: emb
`;

  it("puts a mis-indented line's problem on that line, not on the line before it", () => {
    // Line 8 ("routerType: Sequence") indented three columns less: the parser points at the
    // line break that ends line 7 and says "line 7".
    const bad = manifest.replace("      routerType: Sequence", "   routerType: Sequence");
    const r = parseManifestText(bad);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const p = r.problems[0];
    expect(lineAt(bad, p.from)).toBe(8);
    expect(lineAt(bad, p.to - 1)).toBe(8);
    expect(bad.slice(p.from, p.to)).toBe("routerType: Sequence");
    expect(p.message).not.toMatch(/line \d+/);
    expect(p.message).toMatch(/same column/);
  });

  it("keeps an error that already points inside its line where it is", () => {
    const bad = manifest.replace("routerType: Sequence", "routerType: [Sequence");
    const r = parseManifestText(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.every((p) => !/at line \d+/.test(p.message))).toBe(true);
  });

  it("counts lines from one", () => {
    expect(lineAt("a\nb\nc", 0)).toBe(1);
    expect(lineAt("a\nb\nc", 2)).toBe(2);
    expect(lineAt("a\nb\nc", 4)).toBe(3);
  });
});
