import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { applyEdit, copyNodes, isClipboardPayload, type Edit } from "./edits";
import { canRedo, canUndo, createHistory, editsSince, pushEdit, redo, replay, seal, undo } from "./history";
import { emptyManifest, fromManifest, shapeProblems, toLayout, toManifest } from "./manifest";
import { edges, indexIssues, localIssues, reachable } from "./queries";
import { editForManifest } from "./textEdits";
import type { GraphState, JsonObject } from "./types";

const here = dirname(fileURLToPath(import.meta.url));
const fixtureDir = join(here, "__fixtures__");
// The backend's example manifests, when they exist in this checkout.
const backendDir = join(here, "../../../tests/graphs/spec/examples/valid");

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
    .sort()
    .map((f) => join(dir, f));
}

function load(file: string): JsonObject[] {
  // A file may hold several documents separated by ---.
  const text = readFileSync(file, "utf8");
  return text
    .split(/^---\s*$/m)
    .map((part) => parse(part) as unknown)
    .filter((doc): doc is JsonObject => typeof doc === "object" && doc !== null && !Array.isArray(doc));
}

function fixture(name: string): JsonObject {
  return load(join(fixtureDir, `${name}.yaml`))[0];
}

/** Equality including key order (JSON text), not only deep equality. */
function expectSameDocument(actual: unknown, expected: unknown) {
  expect(actual).toEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
}

const manifests = [...yamlFiles(fixtureDir), ...yamlFiles(backendDir)].flatMap((file) =>
  load(file).map((doc, i) => ({ label: `${file.split("/").slice(-3).join("/")}#${i}`, doc })),
);

describe("manifest ⇄ state round trip", () => {
  it("has example manifests to check", () => {
    expect(manifests.length).toBeGreaterThanOrEqual(6);
  });

  it.each(manifests)("toManifest(fromManifest(m)) gives back $label exactly", ({ doc }) => {
    const state = fromManifest(doc, null);
    expectSameDocument(toManifest(state), doc);
  });

  it.each(manifests)("the layout written for $label reads back to the same positions", ({ doc }) => {
    const state = fromManifest(doc, null);
    const again = fromManifest(toManifest(state), toLayout(state));
    expect(toLayout(again)).toEqual(toLayout(state));
    expectSameDocument(toManifest(again), doc);
  });

  it("does not share objects with the input manifest", () => {
    const doc = fixture("sequence");
    const before = JSON.stringify(doc);
    const state = applyEdit(fromManifest(doc, null), { type: "setStepField", node: "root", index: 0, field: "name", value: "x" });
    toManifest(state);
    expect(JSON.stringify(doc)).toBe(before);
  });

  it("gives every node an automatic position when there is no layout, in columns by depth", () => {
    const state = fromManifest(fixture("full-spec"), null);
    const pos = Object.fromEntries(state.nodes.map((n) => [n.name, n.position]));
    expect(pos.root.x).toBeLessThan(pos.split.x);
    expect(pos.split.x).toBeLessThan(pos.ensemble.x);
  });

  it("keeps stored positions and viewport, and places only the nodes missing from the layout", () => {
    const layout = { nodes: { root: { x: 10, y: 20 } }, viewport: { x: 1, y: 2, zoom: 0.5 }, extra: "kept" };
    const state = fromManifest(fixture("switch"), layout);
    expect(state.nodes[0].position).toEqual({ x: 10, y: 20 });
    expect(state.nodes[1].position.x).toBeGreaterThan(10);
    expect(toLayout(state).viewport).toEqual({ x: 1, y: 2, zoom: 0.5 });
    expect(toLayout(state).extra).toBe("kept");
  });

  it("reports shape problems that keep a document off the canvas", () => {
    expect(shapeProblems([])).toHaveLength(1);
    expect(shapeProblems({ spec: { nodes: [] } })[0].path).toEqual(["spec", "nodes"]);
    expect(shapeProblems({ spec: { nodes: { root: { steps: "x" } } } })[0].path).toEqual(["spec", "nodes", "root", "steps"]);
    expect(shapeProblems(fixture("full-spec"))).toEqual([]);
  });
});

/** Applies an edit through the history, checks undo gives the original and redo the result. */
function checkUndo(state: GraphState, edit: Edit): GraphState {
  const before = toManifest(state);
  const beforeLayout = toLayout(state);
  let h = pushEdit(createHistory(state), edit);
  expect(h.state).not.toBe(state);
  const after = toManifest(h.state);
  const afterLayout = toLayout(h.state);
  h = undo(h);
  expectSameDocument(toManifest(h.state), before);
  expect(toLayout(h.state)).toEqual(beforeLayout);
  expect(canRedo(h)).toBe(true);
  h = redo(h);
  expectSameDocument(toManifest(h.state), after);
  expect(toLayout(h.state)).toEqual(afterLayout);
  return h.state;
}

const spec = (s: GraphState) => toManifest(s).spec as JsonObject;
const nodesOf = (s: GraphState) => spec(s).nodes as Record<string, JsonObject>;
const stepsOf = (s: GraphState, node: string) => nodesOf(s)[node].steps as JsonObject[];

describe("edits (each checked with undo and redo)", () => {
  it("addNode names the first node root and later ones after their type", () => {
    let s = fromManifest({ apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" } }, null);
    s = checkUndo(s, { type: "addNode", routerType: "Sequence", position: { x: 0, y: 0 } });
    s = checkUndo(s, { type: "addNode", routerType: "Switch", position: { x: 300, y: 0 } });
    s = checkUndo(s, { type: "addNode", routerType: "Switch", position: { x: 300, y: 200 } });
    expect(Object.keys(nodesOf(s))).toEqual(["root", "switch", "switch-2"]);
    expect(nodesOf(s).switch).toEqual({ routerType: "Switch", steps: [] });
    expect(toLayout(s).nodes["switch-2"]).toEqual({ x: 300, y: 200 });
  });

  it("addNode with a taken name does nothing", () => {
    const s = fromManifest(fixture("sequence"), null);
    expect(applyEdit(s, { type: "addNode", name: "root", routerType: "Sequence", position: { x: 0, y: 0 } })).toBe(s);
  });

  it("removeNodes removes the nodes and leaves references to them dangling", () => {
    const s = checkUndo(fromManifest(fixture("switch"), null), { type: "removeNodes", names: ["breed-switch"] });
    expect(Object.keys(nodesOf(s))).toEqual(["root"]);
    expect(stepsOf(s, "root")[1].nodeName).toBe("breed-switch");
    expect(edges(s)).toHaveLength(0);
  });

  it("renameNode renames and updates nodeName references and the layout", () => {
    const s = checkUndo(fromManifest(fixture("switch"), null), { type: "renameNode", from: "breed-switch", to: "breeds" });
    expect(Object.keys(nodesOf(s))).toEqual(["root", "breeds"]);
    expect(stepsOf(s, "root")[1]).toEqual({ name: "route", nodeName: "breeds", data: "$request" });
    expect(Object.keys(toLayout(s).nodes)).toEqual(["root", "breeds"]);
  });

  it("renameNode onto an existing name does nothing", () => {
    const s = fromManifest(fixture("switch"), null);
    expect(applyEdit(s, { type: "renameNode", from: "breed-switch", to: "root" })).toBe(s);
  });

  it("setNodeField changes routerType in place and removes a field with undefined", () => {
    let s = checkUndo(fromManifest(fixture("odd-keys"), null), { type: "setNodeField", node: "root", field: "routerType", value: "Ensemble" });
    expect(Object.keys(nodesOf(s).root)).toEqual(["steps", "routerType", "x-extra"]);
    s = checkUndo(s, { type: "setNodeField", node: "root", field: "x-extra", value: undefined });
    expect(Object.keys(nodesOf(s).root)).toEqual(["steps", "routerType"]);
  });

  it("addStep appends or inserts, and creates steps on a node that had none", () => {
    let s = checkUndo(fromManifest(fixture("sequence"), null), { type: "addStep", node: "root", step: { serviceName: "m3" } });
    s = checkUndo(s, { type: "addStep", node: "root", index: 0, step: { serviceUrl: "http://x" } });
    expect(stepsOf(s, "root").map((x) => x.serviceName ?? x.serviceUrl)).toEqual(["http://x", "model1", "model2", "m3"]);
    const odd = checkUndo(fromManifest(fixture("odd-keys"), null), { type: "addStep", node: "empty", step: { serviceName: "a" } });
    expect(nodesOf(odd).empty).toEqual({ routerType: "Ensemble", steps: [{ serviceName: "a" }] });
  });

  it("removeStep removes one step", () => {
    const s = checkUndo(fromManifest(fixture("sequence"), null), { type: "removeStep", node: "root", index: 0 });
    expect(stepsOf(s, "root")).toEqual([{ serviceName: "model2", name: "model2", data: "$response" }]);
  });

  it("moveStep reorders steps", () => {
    const s = checkUndo(fromManifest(fixture("sequence"), null), { type: "moveStep", node: "root", from: 1, to: 0 });
    expect(stepsOf(s, "root").map((x) => x.name)).toEqual(["model2", "model1"]);
  });

  it("transferStep moves a step to another node", () => {
    const s = checkUndo(fromManifest(fixture("switch"), null), { type: "transferStep", from: { node: "root", index: 0 }, to: { node: "breed-switch", index: 1 } });
    expect(stepsOf(s, "root").map((x) => x.name)).toEqual(["route"]);
    expect(stepsOf(s, "breed-switch").map((x) => x.name)).toEqual(["cat", "classify", "dog"]);
  });

  it("setStepField sets, keeps key order and deletes", () => {
    let s = checkUndo(fromManifest(fixture("splitter"), null), { type: "setStepField", node: "root", index: 0, field: "weight", value: 70 });
    expect(stepsOf(s, "root")[0]).toEqual({ serviceName: "model-v1", weight: 70 });
    s = checkUndo(s, { type: "setStepField", node: "root", index: 0, field: "dependency", value: "Hard" });
    s = checkUndo(s, { type: "setStepField", node: "root", index: 0, field: "weight", value: undefined });
    expect(Object.keys(stepsOf(s, "root")[0])).toEqual(["serviceName", "dependency"]);
  });

  it("setStepTarget replaces the one target in its place", () => {
    const s = checkUndo(fromManifest(fixture("sequence"), null), { type: "setStepTarget", node: "root", index: 0, kind: "serviceUrl", value: "http://m" });
    expect(Object.entries(stepsOf(s, "root")[0])).toEqual([
      ["serviceUrl", "http://m"],
      ["name", "model1"],
    ]);
  });

  it("connect turns a step into a nodeName step to an existing node", () => {
    let s = fromManifest(fixture("switch"), null);
    s = checkUndo(s, { type: "addNode", routerType: "Ensemble", position: { x: 0, y: 0 }, name: "ens" });
    s = checkUndo(s, { type: "connect", node: "breed-switch", index: 0, target: "ens" });
    expect(stepsOf(s, "breed-switch")[0]).toEqual({ nodeName: "ens", name: "cat", condition: '[@this].#(predictions.0=="cat")' });
    expect(edges(s).map((e) => `${e.source}->${e.target}`)).toEqual(["root->breed-switch", "breed-switch->ens"]);
    expect(applyEdit(s, { type: "connect", node: "root", index: 0, target: "missing" })).toBe(s);
  });

  it("connectNew adds a nodeName step", () => {
    const s = checkUndo(fromManifest(fixture("switch"), null), { type: "connectNew", node: "breed-switch", target: "root" });
    expect(stepsOf(s, "breed-switch")[2]).toEqual({ nodeName: "root" });
  });

  it("setGraphField sets nested spec and metadata fields and drops emptied objects", () => {
    let s = checkUndo(fromManifest(fixture("sequence"), null), { type: "setGraphField", path: ["spec", "routerTimeouts", "serverRead"], value: 30 });
    expect(spec(s).routerTimeouts).toEqual({ serverRead: 30 });
    s = checkUndo(s, { type: "setGraphField", path: ["metadata", "labels"], value: { a: "b" } });
    s = checkUndo(s, { type: "setGraphField", path: ["spec", "routerTimeouts", "serverRead"], value: undefined });
    expect("routerTimeouts" in spec(s)).toBe(false);
    expect(applyEdit(s, { type: "setGraphField", path: ["spec", "nodes"], value: {} })).toBe(s);
  });

  it("moveNodes changes positions only", () => {
    const s = checkUndo(fromManifest(fixture("switch"), null), { type: "moveNodes", positions: { root: { x: 5, y: 6 } } });
    expect(toLayout(s).nodes.root).toEqual({ x: 5, y: 6 });
  });

  it("paste adds copies with fresh names and rewires links between the pasted nodes", () => {
    const source = fromManifest(fixture("switch"), null);
    const payload = copyNodes(source, ["root", "breed-switch"]);
    expect(isClipboardPayload(JSON.parse(JSON.stringify(payload)))).toBe(true);
    const s = checkUndo(source, { type: "paste", payload, offset: { x: 40, y: 40 } });
    expect(Object.keys(nodesOf(s))).toEqual(["root", "breed-switch", "root-copy", "breed-switch-copy"]);
    expect(stepsOf(s, "root-copy")[1].nodeName).toBe("breed-switch-copy");
    // Into an empty graph the names stay.
    const empty = fromManifest({ kind: "InferenceGraph", spec: { nodes: {} } }, null);
    expect(Object.keys(nodesOf(applyEdit(empty, { type: "paste", payload, offset: { x: 0, y: 0 } })))).toEqual(["root", "breed-switch"]);
  });

  it("replaceManifest swaps the document and keeps positions of nodes that remain", () => {
    let s = fromManifest(fixture("switch"), { nodes: { root: { x: 1, y: 2 }, "breed-switch": { x: 3, y: 4 } } });
    const next = toManifest(s);
    (next.spec as JsonObject).nodes = { root: { routerType: "Ensemble", steps: [{ serviceName: "z" }] }, extra: { routerType: "Sequence" } };
    s = checkUndo(s, { type: "replaceManifest", manifest: next });
    expectSameDocument(toManifest(s), next);
    expect(toLayout(s).nodes.root).toEqual({ x: 1, y: 2 });
  });

  it("replaceManifest with the same document is no edit", () => {
    const s = fromManifest(fixture("switch"), null);
    expect(applyEdit(s, { type: "replaceManifest", manifest: fixture("switch") })).toBe(s);
  });

  it("batch applies its edits in order", () => {
    const s = checkUndo(fromManifest(fixture("sequence"), null), {
      type: "batch",
      edits: [
        { type: "addNode", routerType: "Ensemble", position: { x: 0, y: 0 }, name: "e" },
        { type: "connectNew", node: "root", target: "e" },
      ],
    });
    expect(stepsOf(s, "root")[2]).toEqual({ nodeName: "e" });
  });
});

describe("YAML text to edits", () => {
  it("a field changed in the text becomes a small edit that rebases onto a newer version", () => {
    const base = fromManifest(fixture("full-spec"), null);
    const typed = toManifest(base);
    const steps = ((typed.spec as JsonObject).nodes as Record<string, JsonObject>).root.steps as JsonObject[];
    steps[1].condition = "predictions.0";
    (typed.metadata as JsonObject).labels = { team: "a" };
    const edit = editForManifest(base, typed);
    expect(edit.type).toBe("batch");
    expectSameDocument(toManifest(applyEdit(base, edit)), typed);
    // Someone else changed another field meanwhile: both changes survive the replay.
    const latest = applyEdit(base, { type: "setStepField", node: "split", index: 0, field: "weight", value: 60 });
    const merged = toManifest(applyEdit(latest, edit));
    const nodes = (merged.spec as JsonObject).nodes as Record<string, JsonObject>;
    expect((nodes.root.steps as JsonObject[])[1].condition).toBe("predictions.0");
    expect((nodes.split.steps as JsonObject[])[0].weight).toBe(60);
  });

  it("adds, removes and reorders in the text still reproduce the document exactly", () => {
    for (const name of ["switch", "full-spec", "odd-keys"]) {
      const base = fromManifest(fixture(name), null);
      const typed = toManifest(base);
      const nodes = (typed.spec as JsonObject).nodes as Record<string, JsonObject>;
      const first = Object.keys(nodes)[0];
      nodes["added-node"] = { routerType: "Ensemble", steps: [{ serviceName: "x" }] };
      (nodes[first].steps as JsonObject[]).reverse();
      const edit = editForManifest(base, typed);
      expectSameDocument(toManifest(applyEdit(base, edit)), typed);
    }
    const base = fromManifest(fixture("switch"), null);
    const reordered = { kind: "InferenceGraph", ...toManifest(base) };
    expect(editForManifest(base, reordered).type).toBe("replaceManifest");
  });
});

describe("history", () => {
  it("merges edits with the same key into one undo step, and seal stops merging", () => {
    let h = createHistory(fromManifest(fixture("sequence"), null));
    h = pushEdit(h, { type: "setStepField", node: "root", index: 0, field: "name", value: "a" }, { key: "k", now: 1 });
    h = pushEdit(h, { type: "setStepField", node: "root", index: 0, field: "name", value: "ab" }, { key: "k", now: 2 });
    expect(h.past).toHaveLength(1);
    h = seal(h);
    h = pushEdit(h, { type: "setStepField", node: "root", index: 0, field: "name", value: "abc" }, { key: "k", now: 3 });
    expect(h.past).toHaveLength(2);
    h = undo(undo(h));
    expect(canUndo(h)).toBe(false);
    expect(stepsOf(h.state, "root")[0].name).toBe("model1");
  });

  it("a no-op edit leaves the history unchanged and a new edit clears redo", () => {
    let h = createHistory(fromManifest(fixture("sequence"), null));
    expect(pushEdit(h, { type: "removeStep", node: "nope", index: 0 })).toBe(h);
    h = undo(pushEdit(h, { type: "removeStep", node: "root", index: 0 }));
    expect(canRedo(h)).toBe(true);
    h = pushEdit(h, { type: "removeStep", node: "root", index: 1 });
    expect(canRedo(h)).toBe(false);
  });

  it("replays local edits on a newer base (rebase after a conflict)", () => {
    const base = fromManifest(fixture("switch"), null);
    let h = createHistory(base);
    const mark = h.past.length;
    h = pushEdit(h, { type: "setStepField", node: "breed-switch", index: 0, field: "dependency", value: "Hard" });
    h = pushEdit(h, { type: "removeNodes", names: ["gone"] }); // no-op, not recorded
    h = pushEdit(h, { type: "addStep", node: "root", step: { serviceName: "audit" } });
    // Someone else renamed a step and removed a node meanwhile.
    const latest = applyEdit(base, { type: "setStepField", node: "root", index: 0, field: "name", value: "classifier" });
    const { state, skipped } = replay(latest, editsSince(h, mark) ?? []);
    expect(skipped).toBe(0);
    expect(stepsOf(state, "root").map((s) => s.name ?? s.serviceName)).toEqual(["classifier", "route", "audit"]);
    expect(stepsOf(state, "breed-switch")[0].dependency).toBe("Hard");
  });
});

describe("queries", () => {
  it("reachable follows nodeName steps from root", () => {
    const s = fromManifest(fixture("full-spec"), null);
    expect([...reachable(s)].sort()).toEqual(["ensemble", "root", "split"]);
    const odd = fromManifest(fixture("odd-keys"), null);
    expect([...reachable(odd)]).toEqual(["root"]);
  });

  it("indexes issues by node and step, and issues of unknown nodes by graph", () => {
    const s = fromManifest(fixture("switch"), null);
    const idx = indexIssues(s, [
      { code: "a", severity: "error", message: "m", node: "breed-switch", step: 1 },
      { code: "b", severity: "warning", message: "m", node: "root" },
      { code: "c", severity: "error", message: "m", node: "ghost" },
      { code: "d", severity: "error", message: "m" },
    ]);
    expect(idx.byStep.get("breed-switch#1")?.[0].code).toBe("a");
    expect(idx.byNode.get("root")?.[0].code).toBe("b");
    expect(idx.byNodeAll.get("breed-switch")).toHaveLength(1);
    expect(idx.graph.map((i) => i.code)).toEqual(["c", "d"]);
  });

  it("local checks flag missing targets, duplicate names and Splitter sums", () => {
    let s = fromManifest(emptyManifest("Bad_Name"), null);
    s = applyEdit(s, { type: "addStep", node: "root", step: { name: "a" } });
    s = applyEdit(s, { type: "addStep", node: "root", step: { name: "a", serviceName: "x", serviceUrl: "y" } });
    s = applyEdit(s, { type: "addNode", routerType: "Splitter", position: { x: 0, y: 0 }, name: "sp", steps: [{ serviceName: "a", weight: 30 }, { serviceName: "b", weight: 30 }] });
    const codes = localIssues(s).map((i) => i.code).sort();
    expect(codes).toEqual(["local.duplicate_step", "local.many_targets", "local.name", "local.no_target", "local.weight_sum"]);
  });
});
