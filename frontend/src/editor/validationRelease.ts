import type { Environment } from "../api";

/**
 * The KServe release the editor's live validation checks the graph against: that of the
 * environment chosen in the Run panel, so that a field this release's CRD does not know shows as
 * an error naming the release. Undefined while that environment is not listed (yet): the server
 * then checks against the newest release.
 */
export function validationRelease(environments: readonly Pick<Environment, "name" | "kserve_version">[], chosen: string): string | undefined {
  return environments.find((env) => env.name === chosen)?.kserve_version;
}
