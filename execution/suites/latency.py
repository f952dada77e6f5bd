"""A suite run's latencies judged against its graph's latency budgets (``graphs.language.budgets``):
each case's run is one sample of the whole graph, each of its step calls one of that step."""

from __future__ import annotations

from typing import Any

from execution.engine.load import LoadStats, step_key
from execution.models import RunStep
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs.language.budgets import BudgetError, judge, parse_budgets


def suite_budget_verdict(suite: SuiteRun) -> dict[str, Any]:
    """The verdict (``{"passed", "checks"}``) of ``suite``'s finished cases against its graph's
    budgets; ``{}`` when the graph states none (nothing is read then)."""
    try:
        budgets = parse_budgets(suite.graph.latency_budgets or None)
    except BudgetError:
        return {}
    if budgets.empty:
        return {}
    stats = LoadStats()
    rows = SuiteCaseResult.objects.filter(suite=suite, run__isnull=False, duration_ms__isnull=False)
    runs = []
    for run_id, duration, status in rows.values_list("run_id", "duration_ms", "status_code"):
        stats.add_request(float(duration or 0.0), status)
        runs.append(run_id)
    steps = RunStep.objects.filter(run_id__in=runs, duration_ms__isnull=False)
    for node, name, index, duration, status, outcome in steps.values_list(
        "node", "step_name", "step_index", "duration_ms", "status_code", "outcome"
    ).iterator(chunk_size=2000):
        stats.add_step(step_key(node, name, index), float(duration or 0.0), status, outcome)
    return judge(budgets, stats.summary(0.0))
