/**
 * The services the palette offers by name, so that a model can be added with the mouse alone: the
 * studio's catalog (`GET /api/services/`: the serviceNames the graphs call and those mapped in the
 * environments the user may run in), the environments' service maps as last listed, and the names
 * the open graph calls (saved or not). In the order of their names, so that the list does not
 * reorder itself from one visit to the next as the graphs' use of them changes.
 */
import type { Environment, ServiceCatalog } from "../api";
import type { GraphState } from "../graph/types";

/** Each name once, the empty name left out, in the order of their names. */
export function paletteServices(
  catalog: Pick<ServiceCatalog, "services"> | null,
  environments: readonly Pick<Environment, "service_urls">[],
  state: Pick<GraphState, "nodes">,
): string[] {
  const ordered = new Set<string>();
  for (const entry of catalog?.services ?? []) ordered.add(entry.name);
  const others = new Set<string>();
  for (const env of environments) for (const name of Object.keys(env.service_urls)) others.add(name);
  for (const node of state.nodes) {
    for (const step of node.steps) {
      const name = step.fields.serviceName;
      if (typeof name === "string") others.add(name);
    }
  }
  return [...new Set([...ordered, ...others])].filter((name) => name !== "").sort((a, b) => a.localeCompare(b));
}

/** The names containing ``query`` (any case, spaces around it ignored); all of them for none. */
export function filterServices(names: readonly string[], query: string): readonly string[] {
  const q = query.trim().toLowerCase();
  return q === "" ? names : names.filter((name) => name.toLowerCase().includes(q));
}
