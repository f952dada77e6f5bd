import { describe, expect, it } from "vitest";
import { applyEdit } from "../graph/edits";
import { toLayout, toManifest } from "../graph/manifest";
import { snapshot } from "../editor/store";
import { graphOf } from "../graph/__fixtures__/graphs";
import type { GraphState, JsonObject } from "../graph/types";
import { addConditional, addParallel, addSplit, appendModel, deleteBox, dropIndex, dropOnBox, insertModel, moveAlong, type FlowEdit, type NewModel } from "./edits";


function nodesAfter(state: GraphState, fe: FlowEdit | null): JsonObject {
  expect(fe).not.toBeNull();
  const next = applyEdit(state, (fe as FlowEdit).edit);
  expect(next).not.toBe(state);
  return (toManifest(next).spec as JsonObject).nodes as JsonObject;
}

const chain = (): GraphState =>
  graphOf({
    root: {
      routerType: "Sequence",
      steps: [
        { name: "detect", serviceName: "detect" },
        { name: "embed", serviceName: "embed", data: "$response", dependency: "Hard", extra: { kept: true } },
      ],
    },
  });

describe("flow edits: each is the smallest change to the document", () => {
  it("'+' between two steps inserts a model that takes the previous answer", () => {
    const fe = insertModel(chain(), { node: "root", index: 1 });
    expect(fe?.select).toEqual({ node: "root", index: 1 });
    expect(nodesAfter(chain(), fe)).toEqual({
      root: {
        routerType: "Sequence",
        steps: [
          { name: "detect", serviceName: "detect" },
          { name: "model", serviceName: "", data: "$response" },
          { name: "embed", serviceName: "embed", data: "$response", dependency: "Hard", extra: { kept: true } },
        ],
      },
    });
  });

  it("'+' before the first step hands the new model's answer to the old first step", () => {
    const nodes = nodesAfter(chain(), insertModel(chain(), { node: "root", index: 0 }));
    expect((nodes.root as JsonObject).steps).toEqual([
      { name: "model", serviceName: "" },
      { name: "detect", serviceName: "detect", data: "$response" },
      { name: "embed", serviceName: "embed", data: "$response", dependency: "Hard", extra: { kept: true } },
    ]);
  });

  it("'+' at the end appends; into an empty root it adds the first step; names stay unique", () => {
    const g = graphOf({ root: { routerType: "Sequence", steps: [{ name: "model", serviceName: "m" }] } });
    expect(((nodesAfter(g, insertModel(g, { node: "root", index: 1 })).root as JsonObject).steps as JsonObject[])[1]).toEqual({ name: "model-2", serviceName: "", data: "$response" });
    const empty = graphOf({ root: { routerType: "Sequence", steps: [] } });
    expect(nodesAfter(empty, insertModel(empty, { node: "root", index: 0 }))).toEqual({ root: { routerType: "Sequence", steps: [{ name: "model", serviceName: "" }] } });
  });

  it("'+' into a Switch branch: the branch (keeping its condition) calls a new Sequence, the new model first", () => {
    const sw = graphOf({ root: { routerType: "Switch", steps: [{ name: "a", serviceName: "a", condition: "x" }] } });
    const fe = insertModel(sw, { node: "root", index: 0, wrap: "before" });
    expect(fe?.select).toEqual({ node: "sequence", index: 0 });
    expect(nodesAfter(sw, fe)).toEqual({
      root: { routerType: "Switch", steps: [{ name: "a", nodeName: "sequence", condition: "x" }] },
      sequence: { routerType: "Sequence", steps: [{ name: "model", serviceName: "" }, { name: "a", serviceName: "a", data: "$response" }] },
    });
  });

  it("'+' out of an Ensemble branch: the new model takes the branch's answer, before the merge", () => {
    const ens = graphOf({ root: { routerType: "Ensemble", steps: [{ name: "a", serviceName: "a" }, { name: "b", serviceName: "b" }] } });
    const fe = insertModel(ens, { node: "root", index: 1, wrap: "after" });
    expect(fe?.select).toEqual({ node: "sequence", index: 1 });
    expect(nodesAfter(ens, fe)).toEqual({
      root: { routerType: "Ensemble", steps: [{ name: "a", serviceName: "a" }, { name: "b", nodeName: "sequence" }] },
      sequence: { routerType: "Sequence", steps: [{ name: "b", serviceName: "b" }, { name: "model", serviceName: "", data: "$response" }] },
    });
  });

  it("'+' does not apply outside a Sequence or out of range", () => {
    const sw = graphOf({ root: { routerType: "Switch", steps: [{ name: "a", serviceName: "a", condition: "x" }] } });
    expect(insertModel(sw, { node: "root", index: 0 })).toBeNull();
    expect(insertModel(chain(), { node: "root", index: 0, wrap: "before" })).toBeNull();
    expect(insertModel(chain(), { node: "root", index: 3 })).toBeNull();
    expect(insertModel(chain(), { node: "nope", index: 0 })).toBeNull();
  });

  it("a parallel branch beside a Sequence step wraps it in a new Ensemble; the step keeps its other keys and takes the node's name", () => {
    const fe = addParallel(chain(), { node: "root", index: 1 });
    expect(fe?.select).toEqual({ node: "ensemble", index: 1 });
    expect(nodesAfter(chain(), fe)).toEqual({
      root: {
        routerType: "Sequence",
        steps: [
          { name: "detect", serviceName: "detect" },
          { name: "ensemble", nodeName: "ensemble", data: "$response", dependency: "Hard", extra: { kept: true } },
        ],
      },
      ensemble: { routerType: "Ensemble", steps: [{ name: "embed", serviceName: "embed" }, { name: "model", serviceName: "" }] },
    });
  });

  it("a parallel branch beside an Ensemble step extends the Ensemble", () => {
    const g = graphOf({ root: { routerType: "Ensemble", steps: [{ name: "a", serviceName: "a" }, { name: "b", serviceName: "b" }] } });
    expect(nodesAfter(g, addParallel(g, { node: "root", index: 0 }))).toEqual({
      root: { routerType: "Ensemble", steps: [{ name: "a", serviceName: "a" }, { name: "model", serviceName: "" }, { name: "b", serviceName: "b" }] },
    });
  });

  it("a conditional branch: a new Switch around the box, or one more Switch step", () => {
    expect(nodesAfter(chain(), addConditional(chain(), { node: "root", index: 0 }))).toEqual({
      root: {
        routerType: "Sequence",
        steps: [
          { name: "switch", nodeName: "switch" },
          { name: "embed", serviceName: "embed", data: "$response", dependency: "Hard", extra: { kept: true } },
        ],
      },
      switch: { routerType: "Switch", steps: [{ name: "detect", serviceName: "detect", condition: "" }, { name: "model", serviceName: "", condition: "" }] },
    });
    const sw = graphOf({ root: { routerType: "Switch", steps: [{ name: "a", serviceName: "a", condition: "x" }] } });
    expect(((nodesAfter(sw, addConditional(sw, { node: "root", index: 0 })).root as JsonObject).steps as JsonObject[])[1]).toEqual({ name: "model", serviceName: "", condition: "" });
  });

  it("a weighted split: a new 50/50 Splitter around the box, or one more step of weight 0", () => {
    const nodes = nodesAfter(chain(), addSplit(chain(), { node: "root", index: 0 }));
    expect(nodes.splitter).toEqual({ routerType: "Splitter", steps: [{ name: "detect", serviceName: "detect", weight: 50 }, { name: "model", serviceName: "", weight: 50 }] });
    const sp = graphOf({ root: { routerType: "Splitter", steps: [{ name: "a", serviceName: "a", weight: 100 }] } });
    expect(((nodesAfter(sp, addSplit(sp, { node: "root", index: 0 })).root as JsonObject).steps as JsonObject[])[1]).toEqual({ name: "model", serviceName: "", weight: 0 });
  });

  it("a new router's name does not clash with an existing node", () => {
    const g = graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "a" }] }, ensemble: { routerType: "Sequence", steps: [] } });
    expect(addParallel(g, { node: "root", index: 0 })?.select).toEqual({ node: "ensemble-2", index: 1 });
  });

  it("delete removes the step and nothing else; moving along the chain moves it", () => {
    expect((nodesAfter(chain(), deleteBox(chain(), { node: "root", index: 0 })).root as JsonObject).steps).toEqual([
      { name: "embed", serviceName: "embed", data: "$response", dependency: "Hard", extra: { kept: true } },
    ]);
    const fe = moveAlong(chain(), { node: "root", index: 0 }, 1);
    expect(fe?.select).toEqual({ node: "root", index: 1 });
    expect(((nodesAfter(chain(), fe).root as JsonObject).steps as JsonObject[]).map((s) => s.name)).toEqual(["embed", "detect"]);
    expect(moveAlong(chain(), { node: "root", index: 0 }, -1)).toBeNull();
    expect(deleteBox(chain(), { node: "root", index: 5 })).toBeNull();
  });

  it("an edit of one node leaves every other node as it was (the same object)", () => {
    const g = graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "a" }] }, other: { routerType: "Switch", steps: [] } });
    const next = applyEdit(g, (insertModel(g, { node: "root", index: 1 }) as FlowEdit).edit);
    expect(next.nodes[1]).toBe(g.nodes[1]);
  });

  it("a drop reorders by x in a Sequence and by y among parallel branches", () => {
    const centers = new Map([
      [0, { x: 0, y: 0 }],
      [1, { x: 200, y: 0 }],
      [2, { x: 400, y: 0 }],
    ]);
    expect(dropIndex("Sequence", 0, { x: 300, y: 50 }, centers)).toBe(1);
    expect(dropIndex("Sequence", 0, { x: 500, y: 0 }, centers)).toBe(2);
    expect(dropIndex("Sequence", 2, { x: -10, y: 0 }, centers)).toBe(0);
    expect(dropIndex("Sequence", 1, { x: 210, y: 300 }, centers)).toBeNull();
    const vertical = new Map([
      [0, { x: 0, y: 0 }],
      [1, { x: 0, y: 100 }],
    ]);
    expect(dropIndex("Ensemble", 0, { x: 0, y: 150 }, vertical)).toBe(1);
  });
});

describe("moveFlowBoxes", () => {
  it("keeps Flow positions in the layout under their own key; the Nodes view's positions stay", () => {
    const g = chain();
    const moved = applyEdit(g, { type: "moveFlowBoxes", positions: { "root/detect": { x: 5, y: 6 } } });
    expect(toLayout(moved).flow).toEqual({ boxes: { "root/detect": { x: 5, y: 6 } } });
    expect(toLayout(moved).nodes).toEqual(toLayout(g).nodes);
    expect(toManifest(moved)).toEqual(toManifest(g));
    // A move is an unsaved change; the same position again is no edit.
    expect(snapshot(moved)).not.toBe(snapshot(g));
    expect(applyEdit(moved, { type: "moveFlowBoxes", positions: { "root/detect": { x: 5, y: 6 } } })).toBe(moved);
    const again = applyEdit(moved, { type: "moveFlowBoxes", positions: { "root/embed": { x: 1, y: 1 } } });
    expect(toLayout(again).flow).toEqual({ boxes: { "root/detect": { x: 5, y: 6 }, "root/embed": { x: 1, y: 1 } } });
    // Auto layout in the Flow view forgets the stored positions; with none stored it is no edit.
    const reset = applyEdit(again, { type: "moveFlowBoxes", positions: {}, reset: true });
    expect(toLayout(reset).flow).toEqual({ boxes: {} });
    expect(applyEdit(reset, { type: "moveFlowBoxes", positions: {}, reset: true })).toBe(reset);
  });

  const service = (name: string): NewModel => ({ name, target: "serviceName", value: name });

  it("a service picked in the palette: inserted on an arrow, beside a box, or appended to the root chain", () => {
    expect(((nodesAfter(chain(), insertModel(chain(), { node: "root", index: 1 }, service("align"))).root as JsonObject).steps as JsonObject[])[1]).toEqual({ name: "align", serviceName: "align", data: "$response" });
    const nodes = nodesAfter(chain(), addParallel(chain(), { node: "root", index: 0 }, service("detect-v2")));
    expect(nodes.ensemble).toEqual({ routerType: "Ensemble", steps: [{ name: "detect", serviceName: "detect" }, { name: "detect-v2", serviceName: "detect-v2" }] });
    const appended = appendModel(chain(), service("embed"));
    expect(appended?.select).toEqual({ node: "root", index: 2 });
    // The name is free in its node: a second "embed" is "embed-2".
    expect(((nodesAfter(chain(), appended).root as JsonObject).steps as JsonObject[])[2]).toEqual({ name: "embed-2", serviceName: "embed", data: "$response" });
  });

  it("a service dropped on a blank box fills it in; on any other box it runs beside it", () => {
    const g = graphOf({ root: { routerType: "Sequence", steps: [{ name: "model", serviceName: "", data: "$request" }, { name: "mine", serviceName: "" }] } });
    const after = nodesAfter(g, dropOnBox(g, { node: "root", index: 0 }, service("detect")));
    expect((after.root as JsonObject).steps).toEqual([{ name: "detect", serviceName: "detect", data: "$request" }, { name: "mine", serviceName: "" }]);
    // A name the user gave is kept.
    expect(((nodesAfter(g, dropOnBox(g, { node: "root", index: 1 }, service("detect"))).root as JsonObject).steps as JsonObject[])[1]).toEqual({ name: "mine", serviceName: "detect" });
    expect(Object.keys(nodesAfter(chain(), dropOnBox(chain(), { node: "root", index: 1 }, service("embed-2"))))).toEqual(["root", "ensemble"]);
  });

  it("appended with no root Sequence: the first root of an empty graph, else a Sequence of its own", () => {
    const empty = graphOf({});
    expect(nodesAfter(empty, appendModel(empty, service("detect")))).toEqual({ root: { routerType: "Sequence", steps: [{ name: "detect", serviceName: "detect" }] } });
    const sw = graphOf({ root: { routerType: "Switch", steps: [{ name: "a", serviceName: "a", condition: "x" }] } });
    const fe = appendModel(sw, service("detect"));
    expect(fe?.select).toEqual({ node: "sequence", index: 0 });
    expect(nodesAfter(sw, fe).sequence).toEqual({ routerType: "Sequence", steps: [{ name: "detect", serviceName: "detect" }] });
  });
});
