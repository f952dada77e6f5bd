import { describe, expect, it } from "vitest";
import type { JsonObject } from "../graph/types";
import { graphOf } from "../graph/__fixtures__/graphs";
import { insertModel } from "./edits";
import { boxIssues, boxMark, boxRun } from "./marks";
import { project, type FlowModel } from "./project";

/** "from -> to [label]" of every arrow, by box titles, sorted. */
function arrowsByTitle(m: FlowModel): string[] {
  const title = new Map(m.boxes.map((b) => [b.id, b.title]));
  return m.arrows.map((a) => `${title.get(a.from)} -${a.kind}-> ${title.get(a.to)}${a.label ? ` [${a.label}]` : ""}`).sort();
}

/** A Switch of 3 branches, then (if `cond` holds) an Ensemble of 3 branches, in the root Sequence. */
function switchThenEnsemble(cond?: string): JsonObject {
  return {
    root: { routerType: "Sequence", steps: [{ name: "route", nodeName: "route" }, { name: "fan", nodeName: "fan", data: "$response", ...(cond ? { condition: cond } : {}) }] },
    route: { routerType: "Switch", steps: ["a", "b", "c"].map((n) => ({ name: n, serviceName: n, condition: `x==${n}` })) },
    fan: { routerType: "Ensemble", steps: ["p", "q", "r"].map((n) => ({ name: n, serviceName: n })) },
  };
}

/** N stages: a Switch of `width` branches, then an Ensemble of `width` branches, then the next Switch… */
function pipeline(stages: number, width = 3): JsonObject {
  const branches = Array.from({ length: width }, (_, j) => j);
  const nodes: JsonObject = {};
  const steps: JsonObject[] = [];
  for (let i = 0; i < stages; i++) {
    const name = `s${i}`;
    steps.push({ name, nodeName: name, ...(i > 0 ? { data: "$response" } : {}) });
    nodes[name] =
      i % 2 === 0
        ? { routerType: "Switch", steps: branches.map((j) => ({ name: `${name}-${j}`, serviceName: `${name}-${j}`, condition: `k==${j}` })) }
        : { routerType: "Ensemble", steps: branches.map((j) => ({ name: `${name}-${j}`, serviceName: `${name}-${j}` })) };
  }
  return { root: { routerType: "Sequence", steps }, ...nodes };
}

describe("project: a join point where a fan-out meets the next fan-out", () => {
  it("a Switch (k=3) then an Ensemble (m=3): k+m arrows through one join point, not k×m", () => {
    const m = project(graphOf(switchThenEnsemble()));
    const joins = m.boxes.filter((b) => b.kind === "join");
    expect(joins).toHaveLength(1);
    expect(joins[0]).toMatchObject({ title: "join", step: null, node: null, group: null });
    expect(arrowsByTitle(m)).toEqual(
      [
        "Request -data-> route",
        "route -branch-> a [if x==a]",
        "route -branch-> b [if x==b]",
        "route -branch-> c [if x==c]",
        "route -exit-> nothing matched → 500 [no match]",
        "a -data-> join",
        "b -data-> join",
        "c -data-> join",
        "join -data-> p",
        "join -data-> q",
        "join -data-> r",
        "p -merge-> merge [p]",
        "q -merge-> merge [q]",
        "r -merge-> merge [r]",
        "merge -data-> Response",
      ].sort(),
    );
  });

  it("the calling step's condition stays on the arrows into its group: out of the join", () => {
    const m = project(graphOf(switchThenEnsemble("ok")));
    expect(arrowsByTitle(m).filter((a) => a.includes("join"))).toEqual(["a -data-> join", "b -data-> join", "c -data-> join", "join -data-> p [if ok]", "join -data-> q [if ok]", "join -data-> r [if ok]"]);
  });

  it("'+' is on the arrows out of the join and inserts after the fan-out, as the old arrows did", () => {
    const m = project(graphOf(switchThenEnsemble()));
    const join = m.boxes.find((b) => b.kind === "join")!;
    expect(m.arrows.filter((a) => a.to === join.id).map((a) => a.insert)).toEqual([null, null, null]);
    const out = m.arrows.filter((a) => a.from === join.id);
    expect(out.map((a) => a.insert)).toEqual([0, 1, 2].map(() => ({ node: "root", index: 1 })));
    const fe = insertModel(graphOf(switchThenEnsemble()), out[0].insert!);
    expect(fe?.edit).toMatchObject({ type: "addStep", node: "root", index: 1, step: { data: "$response" } });
  });

  it("no join where one end meets a fan-out, or many ends meet one box", () => {
    const oneToMany = project(graphOf({ root: { routerType: "Sequence", steps: [{ name: "pre", serviceName: "pre" }, { name: "fan", nodeName: "fan", data: "$response" }] }, fan: switchThenEnsemble().fan }));
    expect(oneToMany.boxes.some((b) => b.kind === "join")).toBe(false);
    const manyToOne = project(graphOf({ root: { routerType: "Sequence", steps: [{ name: "route", nodeName: "route" }, { name: "post", serviceName: "post", data: "$response" }] }, route: switchThenEnsemble().route }));
    expect(manyToOne.boxes.some((b) => b.kind === "join")).toBe(false);
    expect(arrowsByTitle(manyToOne).filter((a) => a.endsWith("-> post"))).toEqual(["a -data-> post", "b -data-> post", "c -data-> post"]);
    expect(manyToOne.arrows.filter((a) => a.to === "root/1").map((a) => a.insert)).toEqual([0, 1, 2].map(() => ({ node: "root", index: 1 })));
  });

  it("a step that does not take the previous answer: its 'then' arrows go through a join too (labelled where they leave it)", () => {
    const g = switchThenEnsemble();
    const root = g.root as { steps: JsonObject[] };
    delete root.steps[1].data;
    const m = project(graphOf(g));
    expect(arrowsByTitle(m).filter((a) => a.includes("join") || a.includes("-order->"))).toEqual(
      ["a -order-> join", "b -order-> join", "c -order-> join", "join -order-> p [then]", "join -order-> q [then]", "join -order-> r [then]"],
    );
  });

  it("the arrows of a generated pipeline grow linearly with its stages", () => {
    const count = (n: number) => project(graphOf(pipeline(n))).arrows.length;
    const [a, b, c] = [count(10), count(20), count(40)];
    expect(b - a).toBe((c - b) / 2);
    // Per two stages (a Switch and an Ensemble of 3): into the decision, 3 branches, the exit, 3
    // into the join, 3 out of it and 3 into the merge.
    expect(b - a).toBe(5 * 14);
    // Wide fan-outs too: the arrows stay within twice the boxes (k×m would be 400 per stage).
    const wide = project(graphOf(pipeline(20, 20)));
    expect(wide.arrows.length).toBeLessThanOrEqual(2 * wide.boxes.length);
  });

  it("a join point has no run outcome, comparison mark or issues of its own", () => {
    const state = graphOf(switchThenEnsemble());
    const join = project(state).boxes.find((b) => b.kind === "join")!;
    const run = { finished: true, nodes: new Map(), steps: new Map() } as unknown as Parameters<typeof boxRun>[1];
    expect(boxRun(join, run)).toBeNull();
    expect(boxMark(join, { nodes: new Map([["root", "changed"]]), steps: new Map() } as unknown as Parameters<typeof boxMark>[1])).toBeUndefined();
    expect(boxIssues(join, { graph: [{ message: "x" }], byNode: new Map(), byStep: new Map() } as unknown as Parameters<typeof boxIssues>[1])).toEqual([]);
  });
});
