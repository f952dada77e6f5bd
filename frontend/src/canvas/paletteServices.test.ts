import { describe, expect, it } from "vitest";
import { graphOf } from "../graph/__fixtures__/graphs";
import { filterServices, paletteServices } from "./paletteServices";

const entry = (name: string, graph_count: number, environments: string[] = []) => ({ name, graph_count, environments });

describe("the palette's services", () => {
  it("are the environments' mapped services and the graph's own, sorted, each once", () => {
    const state = graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "zeta" }, { name: "b", serviceName: "" }, { name: "c", serviceUrl: "http://x" }, { name: "d", serviceName: "alpha" }] } });
    const environments: { service_urls: Record<string, string> }[] = [{ service_urls: { beta: "http://b", alpha: "http://a" } }, { service_urls: {} }];
    expect(paletteServices(null, environments, state)).toEqual(["alpha", "beta", "zeta"]);
    expect(paletteServices(null, [], graphOf({}))).toEqual([]);
  });

  it("are the catalog's and the names it lacks, each once, by name (an order that stays from one visit to the next)", () => {
    const catalog = { services: [entry("classifier", 4), entry("tokenizer", 2, ["staging"]), entry("alpha", 0, ["staging"])] };
    const state = graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "tokenizer" }, { name: "b", serviceName: "mine" }, { name: "c", serviceName: "" }] } });
    const environments = [{ service_urls: { alpha: "http://a", "new-in-env": "http://n" } }];
    expect(paletteServices(catalog, environments, state)).toEqual(["alpha", "classifier", "mine", "new-in-env", "tokenizer"]);
    // A new graph of a user with no service map: the catalog alone.
    expect(paletteServices(catalog, [{ service_urls: {} }], graphOf({}))).toEqual(["alpha", "classifier", "tokenizer"]);
    expect(paletteServices({ services: [entry("", 1)] }, [], graphOf({}))).toEqual([]);
  });

  it("are filtered by a part of their name, in any case", () => {
    const names = ["face-detector", "Face-aligner", "result-merger"];
    expect(filterServices(names, " FACE ")).toEqual(["face-detector", "Face-aligner"]);
    expect(filterServices(names, "")).toBe(names);
    expect(filterServices(names, "nothing")).toEqual([]);
  });
});
