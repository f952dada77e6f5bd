import { describe, expect, it } from "vitest";
import type { JsonObject } from "../graph/types";
import { ANIMAL_SWITCH, CANARY, CAT_DOG, FACE_RECOGNITION, graphOf } from "../graph/__fixtures__/graphs";
import { describeBox, mergeKey, project, protocolOf, readFlowLayout, REQUEST_ID, RESPONSE_ID, type FlowModel } from "./project";

/** "from -> to [label]" of every arrow, by box titles, sorted. */
function arrowsByTitle(m: FlowModel): string[] {
  const title = new Map(m.boxes.map((b) => [b.id, b.title]));
  return m.arrows.map((a) => `${title.get(a.from)} -${a.kind}-> ${title.get(a.to)}${a.label ? ` [${a.label}]` : ""}`).sort();
}

describe("project: the demo graphs", () => {
  it("face-recognition reads detect → embed → (employees ‖ visitors) → merge → result-merger", () => {
    const m = project(graphOf(FACE_RECOGNITION));
    expect(arrowsByTitle(m)).toEqual(
      [
        "Request -data-> face-detector",
        "face-detector -data-> feature-extractor",
        "feature-extractor -data-> db-employees",
        "feature-extractor -data-> db-visitors",
        "db-employees -merge-> merge [db-employees]",
        "db-visitors -merge-> merge [db-visitors]",
        "merge -data-> result-merger",
        "result-merger -data-> Response",
      ].sort(),
    );
    const merge = m.boxes.find((b) => b.kind === "merge");
    expect(merge?.subtitle).toBe("{db-employees, db-visitors}");
    // The Ensemble's steps sit in the group of the call; the rest at the top level.
    expect(m.groups).toEqual([expect.objectContaining({ id: "root/2>match", node: "match", routerType: "Ensemble", call: { node: "root", index: 2 }, parent: null, collapsed: false, title: "match" })]);
    expect(m.boxes.filter((b) => b.group === "root/2>match").map((b) => b.title)).toEqual(["merge", "db-employees", "db-visitors"]);
    // Box ids are the run console's call ids.
    expect(m.boxes.find((b) => b.title === "db-visitors")?.id).toBe("root/2>match/1");
    const emp = m.boxes.find((b) => b.title === "db-employees");
    expect(emp).toMatchObject({ kind: "step", subtitle: "face-db-employees", targetKind: "serviceName", protocol: "service", step: { node: "match", index: 0 } });
  });

  it("cat-dog-breed: the breed step takes the request and runs after the classifier, if its condition holds", () => {
    const m = project(graphOf(CAT_DOG));
    expect(arrowsByTitle(m)).toEqual(
      [
        "Request -data-> cat-dog-classifier",
        'Request -data-> breed [if [@this].#(predictions.0=="dog")]',
        'cat-dog-classifier -order-> breed [then · if [@this].#(predictions.0=="dog")]',
        "breed -data-> Response",
      ].sort(),
    );
    expect(m.boxes.find((b) => b.title === "breed")?.condition).toBe('[@this].#(predictions.0=="dog")');
  });

  it("animal-switch: a decision with branches labelled by conditions and the 404 exit", () => {
    const m = project(graphOf(ANIMAL_SWITCH));
    expect(arrowsByTitle(m)).toEqual(
      [
        "Request -data-> root",
        'root -branch-> cat [if instances.#(animal=="cat")]',
        'root -branch-> dog [if instances.#(animal=="dog")]',
        "root -exit-> nothing matched → 404 [no match]",
        "cat -data-> Response",
        "dog -data-> Response",
      ].sort(),
    );
    expect(m.boxes.find((b) => b.id === "root:switch")?.kind).toBe("switch");
  });

  it("canary: branches labelled by weights; no exit when they sum to 100", () => {
    const m = project(graphOf(CANARY));
    expect(arrowsByTitle(m)).toEqual(["Request -data-> root", "root -branch-> stable [90%]", "root -branch-> canary [10%]", "stable -data-> Response", "canary -data-> Response"].sort());
  });

  it("a Splitter whose weights leave draws unassigned exits with a 500", () => {
    const m = project(graphOf({ root: { routerType: "Splitter", steps: [{ name: "a", serviceName: "a", weight: 70 }] } }));
    expect(arrowsByTitle(m)).toContain("root -exit-> no route → 500 [30%]");
  });

  it("is deterministic", () => {
    const g = graphOf(FACE_RECOGNITION);
    expect(JSON.stringify(project(g))).toBe(JSON.stringify(project(graphOf(FACE_RECOGNITION))));
  });
});

describe("project: nodeName calls", () => {
  const nested: JsonObject = {
    root: { routerType: "Sequence", steps: [{ name: "pre", serviceUrl: "http://m/v2/models/pre/infer" }, { name: "route", nodeName: "pick", data: "$response" }] },
    pick: {
      routerType: "Switch",
      steps: [
        { name: "a", nodeName: "inner", condition: "x" },
        { name: "b", serviceUrl: "http://m/v1/models/b:predict", condition: "y", dependency: "Hard" },
      ],
    },
    inner: { routerType: "Sequence", steps: [{ name: "i1", serviceName: "i1", mapPredictionsToInstances: true }, { name: "i2", serviceName: "i2", data: "$response" }] },
  };

  it("draws called nodes inline, groups nested in groups; a nested Switch exits with 500", () => {
    const m = project(graphOf(nested));
    expect(m.groups.map((g) => [g.id, g.parent])).toEqual([
      ["root/1>pick", null],
      ["root/1>pick/0>inner", "root/1>pick"],
    ]);
    expect(arrowsByTitle(m)).toEqual(
      [
        "Request -data-> pre",
        "pre -data-> pick",
        "pick -branch-> i1 [if x]",
        "i1 -data-> i2",
        "pick -branch-> b [if y]",
        "pick -exit-> nothing matched → 500 [no match]",
        "i2 -data-> Response",
        "b -data-> Response",
      ].sort(),
    );
    const b = m.boxes.find((x) => x.title === "b");
    expect(b).toMatchObject({ protocol: "v1", dependency: "Hard", condition: null });
    expect(m.boxes.find((x) => x.title === "pre")?.protocol).toBe("v2");
    expect(m.boxes.find((x) => x.title === "i1")?.mapPredictions).toBe(true);
    expect(describeBox(b!)).toBe("b, URL http://m/v1/models/b:predict, protocol v1, Hard dependency");
  });

  it("a collapsed group is one call box, and the arrows go through it", () => {
    const m = project(graphOf(nested), { collapsed: new Set(["root/1>pick"]) });
    expect(m.groups.find((g) => g.id === "root/1>pick")?.collapsed).toBe(true);
    expect(m.boxes.some((b) => b.title === "i1")).toBe(false);
    expect(arrowsByTitle(m)).toEqual(["Request -data-> pre", "pre -data-> route", "route -data-> Response"].sort());
    expect(m.boxes.find((b) => b.title === "route")).toMatchObject({ kind: "call", subtitle: "pick (Switch, 2 steps)" });
  });

  it("a node called from two places is drawn once; the second call is a reference box with a warning", () => {
    const m = project(
      graphOf({
        root: { routerType: "Ensemble", steps: [{ name: "x", nodeName: "shared" }, { name: "y", nodeName: "shared" }] },
        shared: { routerType: "Sequence", steps: [{ name: "s", serviceName: "s" }] },
      }),
    );
    const refs = m.boxes.filter((b) => b.kind === "ref");
    expect(refs.map((r) => [r.title, r.step])).toEqual([["y", { node: "root", index: 1 }]]);
    expect(refs[0].warning).toContain("called from 2 places");
    expect(m.groups[0].warning).toContain("called from 2 places");
    expect(arrowsByTitle(m)).toContain("y -merge-> merge [y]");
  });

  it("a cycle and a dangling nodeName are reference boxes with their warnings", () => {
    const m = project(
      graphOf({
        root: { routerType: "Sequence", steps: [{ name: "loop", nodeName: "again" }, { name: "gone", nodeName: "missing", data: "$response" }] },
        again: { routerType: "Sequence", steps: [{ name: "back", nodeName: "root" }] },
      }),
    );
    const refs = m.boxes.filter((b) => b.kind === "ref");
    expect(refs.map((r) => r.title)).toEqual(["back", "gone"]);
    expect(refs[0].warning).toBe("Cycle: root → again → root. KServe calls it until the request fails.");
    expect(refs[1].warning).toContain('nodeName "missing" names no node');
  });

  it("a node no step reaches is drawn on its own with a warning", () => {
    const m = project(graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "a" }] }, lost: { routerType: "Sequence", steps: [{ name: "l", serviceName: "l" }] } }));
    expect(m.groups).toEqual([expect.objectContaining({ id: "lost>", call: null, warning: "No step reaches this node from root: it never runs." })]);
    expect(m.boxes.find((b) => b.title === "l")?.group).toBe("lost>");
  });
});

describe("project: edges of the document", () => {
  it("an empty root Sequence is one empty box between request and response; its arrow inserts at 0", () => {
    const m = project(graphOf({ root: { routerType: "Sequence", steps: [] } }));
    expect(m.boxes.map((b) => b.kind)).toEqual(["request", "empty", "response"]);
    expect(m.arrows.map((a) => [a.from, a.to, a.insert])).toEqual([
      [REQUEST_ID, "root:empty", { node: "root", index: 0 }],
      ["root:empty", RESPONSE_ID, { node: "root", index: 0 }],
    ]);
  });

  it("no root: a warning on the request", () => {
    const m = project(graphOf({}));
    expect(m.boxes[0].warning).toContain("no node named root");
  });

  it("arrows of a Sequence carry where '+' inserts; the arrow into a call inserts before the call", () => {
    const m = project(graphOf(FACE_RECOGNITION));
    const by = (from: string, to: string) => m.arrows.find((a) => m.boxes.find((b) => b.id === a.from)?.title === from && m.boxes.find((b) => b.id === a.to)?.title === to);
    expect(by("Request", "face-detector")?.insert).toEqual({ node: "root", index: 0 });
    expect(by("face-detector", "feature-extractor")?.insert).toEqual({ node: "root", index: 1 });
    expect(by("feature-extractor", "db-visitors")?.insert).toEqual({ node: "root", index: 2 });
    expect(by("merge", "result-merger")?.insert).toEqual({ node: "root", index: 3 });
    expect(by("result-merger", "Response")?.insert).toEqual({ node: "root", index: 4 });
    // Out of an Ensemble branch: after that branch (it then calls a new Sequence).
    expect(by("db-employees", "merge")?.insert).toEqual({ node: "match", index: 0, wrap: "after" });
    const sw = project(graphOf(ANIMAL_SWITCH));
    const into = sw.arrows.find((a) => a.to === "root/1");
    expect(into?.insert).toEqual({ node: "root", index: 1, wrap: "before" });
    expect(sw.arrows.find((a) => a.kind === "exit")?.insert).toBeNull();
  });

  it("a step without a target and an unknown router type are drawn with warnings", () => {
    const m = project(graphOf({ root: { routerType: "Sequence", steps: [{ name: "t" }, { nodeName: "odd" }] }, odd: { routerType: "Fancy", steps: [] } }));
    expect(m.boxes.find((b) => b.title === "t")?.warning).toContain("no serviceName");
    expect(m.boxes.find((b) => b.kind === "unknown")?.warning).toBe('Unknown routerType "Fancy": KServe answers 500.');
    // An unnamed step is titled by its index.
    expect(m.groups[0].title).toBe("step 1 → odd");
  });

  it("protocol badges and merge keys", () => {
    expect(protocolOf("serviceUrl", "http://h/v2/models/m/infer")).toBe("v2");
    expect(protocolOf("serviceUrl", "http://h/v1/models/m:predict")).toBe("v1");
    expect(protocolOf("serviceUrl", "http://h/score")).toBe("HTTP");
    expect(protocolOf("nodeName", "x")).toBeNull();
    expect(mergeKey({ name: "" }, 3)).toBe("3");
    expect(mergeKey({ name: "k" }, 3)).toBe("k");
  });

  it("reads a stored flow layout, ignoring what is not a position", () => {
    expect(readFlowLayout({ boxes: { a: { x: 1, y: 2 }, b: { x: "1" }, c: 3 } })).toEqual({ a: { x: 1, y: 2 } });
    expect(readFlowLayout(null)).toEqual({});
  });
});
