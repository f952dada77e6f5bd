/**
 * The latency budgets form of the graph's test settings, without the DOM: the stored budgets
 * (`{graph_p95_ms, steps: {"node/step": ms}}`) as editable text, the text back as the PATCH body
 * with an error per field that does not read (the server checks the same, see
 * graphs/language/budgets.py), and the steps of a manifest as the names a budget may take.
 */

/** The most a budget may be (a day: above it is a typo, not a latency target). */
export const MAX_BUDGET_MS = 86_400_000;

export interface StepRow {
  target: string;
  ms: string;
}

export interface BudgetsForm {
  graph: string;
  steps: StepRow[];
}

export interface Budgets {
  graph_p95_ms: number | null;
  steps: Record<string, number>;
}

/** Field errors by key: "graph", or "step-<row index>-target" / "step-<row index>-ms". */
export type FormErrors = Record<string, string>;

export function formOf(stored: unknown): BudgetsForm {
  const o = stored && typeof stored === "object" ? (stored as Record<string, unknown>) : {};
  const graph = typeof o.graph_p95_ms === "number" ? String(o.graph_p95_ms) : "";
  const steps = o.steps && typeof o.steps === "object" ? Object.entries(o.steps as Record<string, unknown>) : [];
  return { graph, steps: steps.filter(([, ms]) => typeof ms === "number").map(([target, ms]) => ({ target, ms: String(ms) })) };
}

function readMs(text: string, what: string): number | string {
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isFinite(value)) return `${what} must be a number of milliseconds, not "${text.trim()}"`;
  if (value <= 0 || value > MAX_BUDGET_MS) return `${what} must be above 0 and at most ${MAX_BUDGET_MS} ms`;
  return value;
}

/** The budgets the form states, or the errors that keep it from being saved. Empty rows are dropped. */
export function budgetsOf(form: BudgetsForm): { budgets: Budgets; errors: FormErrors } {
  const errors: FormErrors = {};
  let graph: number | null = null;
  if (form.graph.trim() !== "") {
    const ms = readMs(form.graph, "The graph's p95 budget");
    if (typeof ms === "string") errors.graph = ms;
    else graph = ms;
  }
  const steps: Record<string, number> = {};
  form.steps.forEach((row, i) => {
    const target = row.target.trim();
    if (target === "" && row.ms.trim() === "") return;
    const [node, ...rest] = target.split("/");
    const step = rest.join("/");
    if (!node || !step) errors[`step-${i}-target`] = `"${target}" does not name a step: write node/step name or node/index`;
    else if (target in steps) errors[`step-${i}-target`] = `${target} has a budget already`;
    const ms = readMs(row.ms, `The p95 budget of ${target || "this step"}`);
    if (typeof ms === "string") errors[`step-${i}-ms`] = ms;
    else if (!errors[`step-${i}-target`]) steps[target] = ms;
  });
  return { budgets: { graph_p95_ms: graph, steps }, errors };
}

/** How budgets name a manifest's steps: `node/step name`, else `node/index`, in the manifest's order. */
export function stepTargets(manifest: unknown): string[] {
  const spec = manifest && typeof manifest === "object" ? (manifest as { spec?: { nodes?: unknown } }).spec : undefined;
  const nodes = spec?.nodes && typeof spec.nodes === "object" ? Object.entries(spec.nodes as Record<string, unknown>) : [];
  const out: string[] = [];
  for (const [node, body] of nodes) {
    const steps = body && typeof body === "object" ? (body as { steps?: unknown }).steps : undefined;
    if (!Array.isArray(steps)) continue;
    steps.forEach((step: unknown, i) => {
      const name = step && typeof step === "object" ? (step as { name?: unknown }).name : undefined;
      out.push(`${node}/${typeof name === "string" && name ? name : i}`);
    });
  }
  return out;
}
