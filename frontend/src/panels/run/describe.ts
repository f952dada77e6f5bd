/** What the console says in words: a route decision, why a step was skipped, where a step sits. */
import type { RouteDecision } from "../../graph/runMarks";
import type { StepLine } from "./console";

/** One sentence for a route decision, as the console shows it. */
export function describeRoute(node: string, r: RouteDecision): string {
  switch (r.router) {
    case "Switch":
      return describeSwitch(node, r as Decision<"Switch">);
    case "Splitter": {
      const s = r as Decision<"Splitter">;
      return `Splitter ${node}: drew ${s.draw ?? "?"} of 100 → step ${s.chosen ?? "none"} (weights ${s.weights.join("/")}).`;
    }
    case "Sequence":
      return describeSequence(node, r as Decision<"Sequence">);
    case "Ensemble":
      return describeEnsemble(node, r as Decision<"Ensemble">);
    default:
      return `${r.router || "Router"} ${node}: route decided.`;
  }
}

type Decision<R extends string> = Extract<RouteDecision, { router: R }>;

function describeSwitch(node: string, s: Decision<"Switch">): string {
  const summary = s.conditions.map((c) => `${c.name ?? `step ${c.index}`} ${c.matches ? "✓" : "✗"}`).join(", ");
  if (!s.validJson) return `Switch ${node}: the input is not valid JSON, so no condition can match.`;
  if (s.chosen === null) return `Switch ${node}: no condition matched (${summary}); the input is passed through.`;
  const chosen = s.conditions.find((c) => c.index === s.chosen);
  return `Switch ${node}: step ${s.chosen}${chosen?.name ? ` "${chosen.name}"` : ""} matched (${summary}).`;
}

function describeSequence(node: string, s: Decision<"Sequence">): string {
  const skipped = s.skipped.length ? `; skipped step${s.skipped.length > 1 ? "s" : ""} ${s.skipped.join(", ")}` : "";
  if (s.reason === "hard-failure") return `Sequence ${node} stopped at step ${s.stepIndex}: a Hard dependency answered ${s.status ?? "an error"}${skipped}.`;
  if (s.reason === "condition-unmet") return `Sequence ${node} stopped at step ${s.stepIndex}: condition ${s.condition ?? ""} did not match${skipped}.`;
  return `Sequence ${node} ${s.decision || "stopped"} at step ${s.stepIndex} (${s.reason || "no reason given"})${skipped}.`;
}

function describeEnsemble(node: string, s: Decision<"Ensemble">): string {
  const why = s.status !== null ? `answered ${s.status}` : s.error ? `failed: ${s.error}` : "failed";
  const abandoned = s.abandoned.length ? `; abandoned step${s.abandoned.length > 1 ? "s" : ""} ${s.abandoned.join(", ")}` : "";
  return `Ensemble ${node}: ${s.decision === "hard-failure" ? "Hard" : ""} step ${s.stepIndex}${s.stepName ? ` "${s.stepName}"` : ""} ${why}${abandoned}.`.replace(":  ", ": ");
}

const SKIP_REASONS: Record<string, string> = {
  "condition-unmet": "its condition did not match",
  "invalid-response": "the previous response was not valid JSON",
  "after-unmet-condition": "an earlier condition did not match",
  "after-hard-failure": "an earlier Hard step failed",
  "after-error": "an earlier step failed",
};

export function describeSkip(reason: string | null): string {
  return reason ? (SKIP_REASONS[reason] ?? reason) : "skipped";
}

/** "root › match › db-visitors": where a step sits (its node and its name or index). */
export function stepPosition(line: Pick<StepLine, "node" | "stepIndex" | "stepName">): string {
  const step = line.stepName ? line.stepName : `step ${line.stepIndex ?? "?"}`;
  return `${line.node} › ${step}`;
}

/** What a soft-failed step's tooltip and console line say. */
export const SOFT_NOTE = "failed, but the graph went on (Soft dependency)";
