import { describe, expect, it } from "vitest";
import { graphOf } from "../flow/__fixtures__/graphs";
import { paletteServices } from "./paletteServices";

describe("the palette's services", () => {
  it("are the environments' mapped services and the graph's own, sorted, each once", () => {
    const state = graphOf({ root: { routerType: "Sequence", steps: [{ name: "a", serviceName: "zeta" }, { name: "b", serviceName: "" }, { name: "c", serviceUrl: "http://x" }, { name: "d", serviceName: "alpha" }] } });
    const environments: { service_urls: Record<string, string> }[] = [{ service_urls: { beta: "http://b", alpha: "http://a" } }, { service_urls: {} }];
    expect(paletteServices(environments, state)).toEqual(["alpha", "beta", "zeta"]);
    expect(paletteServices([], graphOf({}))).toEqual([]);
  });
});
