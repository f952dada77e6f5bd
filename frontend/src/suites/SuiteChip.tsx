/** A version's green state as a small chip (History, the version banner, the graph list). */
import type { VersionTests } from "../api";
import { suiteLabel } from "./suite";
import "./chip.css";

export function SuiteChip({ tests, none = "no suite run" }: { tests: VersionTests | null | undefined; none?: string | null }) {
  if (!tests) return none ? <span className="tests-chip tests-none">{none}</span> : null;
  const label = suiteLabel(tests);
  return (
    <span
      className={`tests-chip tests-${tests.status}${tests.current ? "" : " tests-stale"}${tests.gate === false ? " tests-untrusted" : ""}`}
      title={`Latest suite run: ${label}${tests.current ? "" : " (the cases changed since)"}${tests.gate === false ? " (the export gate does not count it: not run by the owner or an editor in a trusted environment)" : ""}`}
    >
      {tests.status === "passed" ? "✓ " : tests.status === "failed" || tests.status === "error" ? "✗ " : ""}
      {label}
    </span>
  );
}
