import { useEffect, useState } from "react";
import type { Api, VersionTests } from "../api";
import { suiteLabel } from "./suite";

/**
 * What the export menu says about the version it exports, read when the menu opens: its latest
 * suite result, whether that passed on the current cases where the gate trusts it, and whether
 * the graph's gate will ask for a reason.
 */
export function exportNote(version: number, tests: VersionTests | null | undefined, gate: boolean): string {
  // A pass the gate does not trust (who ran it, or where) is no pass here; its label says so.
  const passed = tests?.status === "passed" && tests.current && tests.gate;
  const state = !tests ? `v${version} has no suite run` : passed ? `v${version} passed its suite (${suiteLabel(tests)})` : `v${version} has no passing suite run (latest: ${suiteLabel(tests)})`;
  return passed ? state : `${state}${gate ? "; exporting asks for a reason" : ""}.`;
}

export function useExportNote(api: Api, graph: string, version: number | null, open: boolean): string | null {
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    if (!open || version === null) {
      setNote(null);
      return;
    }
    let stale = false;
    Promise.all([api.getVersion(graph, version), api.getGraph(graph)]).then(
      ([v, g]) => !stale && setNote(exportNote(version, v.tests, !!g.require_passing_tests)),
      () => !stale && setNote(null), // the export itself will say what is wrong
    );
    return () => {
      stale = true;
    };
  }, [api, graph, version, open]);
  return note;
}
