/**
 * The services the palette offers by name, so that a model can be added with the mouse alone: the
 * serviceNames mapped in the environments the user may run in, and those the graph already calls.
 */
import type { Environment } from "../api";
import type { GraphState } from "../graph/types";

/** Sorted, each once, the empty name left out. */
export function paletteServices(environments: readonly Pick<Environment, "service_urls">[], state: Pick<GraphState, "nodes">): string[] {
  const names = new Set<string>();
  for (const env of environments) for (const name of Object.keys(env.service_urls)) names.add(name);
  for (const node of state.nodes) {
    for (const step of node.steps) {
      const name = step.fields.serviceName;
      if (typeof name === "string") names.add(name);
    }
  }
  names.delete("");
  return [...names].sort((a, b) => a.localeCompare(b));
}
