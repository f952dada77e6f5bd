/**
 * The latency budget check of the version on screen (the graph's budgets, and what its newest load
 * test measured, against its timeouts), read each time the Properties tab is shown: its warnings
 * by the field they are pinned to. A check that cannot be read shows nothing (the budgets are a
 * hint, the timeouts still save).
 */
import { useEffect, useState } from "react";
import type { Api } from "../../api";
import { warningsByField } from "./loadTest";

const NONE: Map<string, string> = new Map();

export function useBudgetCheck(api: Api, graph: string, version: number | null, active: boolean): Map<string, string> {
  const [warnings, setWarnings] = useState<Map<string, string>>(NONE);
  useEffect(() => {
    if (!active || version === null || !graph) return;
    let gone = false;
    api.budgetCheck(graph, version).then(
      (check) => !gone && setWarnings(check.issues.length ? warningsByField(check.issues) : NONE),
      () => !gone && setWarnings(NONE),
    );
    return () => {
      gone = true;
    };
  }, [api, graph, version, active]);
  return warnings;
}
