"""Latency budgets: what a graph promises (p95 of the whole graph, p95 per step), judged against what
a load test or a suite run measured, and checked against the graph's own timeouts before any run.

A budget document, as a graph's test settings hold it::

    {"graph_p95_ms": 250, "steps": {"root/detect": 120, "root/1": 80}}

A step is named ``node/step``: the step's ``name``, else its index in the node (the names a load
test's summary uses). The static check walks the graph the way its requests go: a Sequence's steps
add up, an Ensemble takes its slowest step, a Switch or Splitter its slowest branch, a ``nodeName``
step costs its node; a step costs its budget (or what was measured, its p99, when that is known).
Whatever that critical path comes to is compared with ``routerTimeouts`` (``serverRead``,
``serverWrite``: the router's whole answer; ``serviceClient``: each step call) and ``spec.timeout``.

Pure: no Django, nothing of ``execution``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from graphs.language.issues import Issue
from graphs.language.model import Manifest, Node, Step

__all__ = [
    "BudgetError",
    "Budgets",
    "check_timeouts",
    "critical_path_ms",
    "judge",
    "parse_budgets",
    "step_label",
]

# The most step budgets a graph may state (a graph holds at most a few hundred steps).
MAX_STEP_BUDGETS: Final = 500
# A budget above a day is a typo, not a latency target.
MAX_BUDGET_MS: Final = 86_400_000.0


class BudgetError(ValueError):
    """A budget document that does not read; ``issues`` say what and where."""

    def __init__(self, issues: list[dict[str, Any]]) -> None:
        super().__init__(issues[0]["message"])
        self.issues = issues


def step_label(node: str, step: Step) -> str:
    return f"{node}/{step.name if step.name else step.index}"


@dataclass(frozen=True)
class Budgets:
    graph_p95_ms: float | None = None
    steps: Mapping[str, float] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.graph_p95_ms is None and not self.steps

    def to_dict(self) -> dict[str, Any]:
        return {"graph_p95_ms": self.graph_p95_ms, "steps": dict(self.steps)}


def _issue(path: str, message: str) -> dict[str, Any]:
    return {"severity": "error", "code": "budget.invalid", "path": path, "message": message}


def _ms(value: Any, path: str, issues: list[dict[str, Any]]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        issues.append(_issue(path, f"{path} must be a number of milliseconds, not {value!r}"))
        return None
    if not 0 < value <= MAX_BUDGET_MS:
        issues.append(_issue(path, f"{path} must be above 0 and at most {MAX_BUDGET_MS:g} ms, not {value!r}"))
        return None
    return float(value)


def parse_budgets(value: Any) -> Budgets:
    """The budgets of ``value`` (None or {} for none); BudgetError naming every problem otherwise."""
    if value is None:
        return Budgets()
    issues: list[dict[str, Any]] = []
    if not isinstance(value, Mapping):
        raise BudgetError([_issue("latency_budgets", "latency_budgets must be an object")])
    unknown = sorted(set(value) - {"graph_p95_ms", "steps"})
    for key in unknown:
        issues.append(_issue(f"latency_budgets.{key}", f"{key!r} is not a budget (graph_p95_ms, steps)"))
    graph = value.get("graph_p95_ms")
    graph_ms = _ms(graph, "latency_budgets.graph_p95_ms", issues) if graph is not None else None
    steps_in = value.get("steps") or {}
    steps: dict[str, float] = {}
    if not isinstance(steps_in, Mapping):
        issues.append(_issue("latency_budgets.steps", "steps must be an object of 'node/step': ms"))
    elif len(steps_in) > MAX_STEP_BUDGETS:
        issues.append(_issue("latency_budgets.steps", f"at most {MAX_STEP_BUDGETS} step budgets"))
    else:
        for key, ms in steps_in.items():
            path = f"latency_budgets.steps.{key}"
            node, sep, step = str(key).partition("/")
            if not sep or not node or not step:
                issues.append(
                    _issue(path, f"{key!r} does not name a step: write 'node/step name' or 'node/index'")
                )
                continue
            parsed = _ms(ms, path, issues)
            if parsed is not None:
                steps[str(key)] = parsed
    if issues:
        raise BudgetError(issues)
    return Budgets(graph_ms, steps)


def judge(budgets: Budgets, summary: Mapping[str, Any]) -> dict[str, Any]:
    """A load test's (or a suite run's) ``summary`` against ``budgets``: each budget with what was
    measured (p95) and whether it held; ``passed`` is False when any was exceeded, None when there
    was nothing to judge. A step that was never called is ``measured_ms: null`` and not held
    against the graph (a Switch branch the payload never takes)."""
    checks: list[dict[str, Any]] = []
    if budgets.graph_p95_ms is not None:
        measured = (summary.get("graph") or {}).get("p95_ms")
        checks.append(_check("graph", budgets.graph_p95_ms, measured))
    steps = summary.get("steps") or {}
    for key, budget in sorted(budgets.steps.items()):
        checks.append(_check(key, budget, (steps.get(key) or {}).get("p95_ms")))
    judged = [c for c in checks if c["passed"] is not None]
    return {
        "passed": all(c["passed"] for c in judged) if judged else None,
        "checks": checks,
    }


def _check(target: str, budget: float, measured: float | None) -> dict[str, Any]:
    passed = None if measured is None else measured <= budget
    return {"target": target, "budget_ms": budget, "measured_ms": measured, "passed": passed}


# --- the static check: budgets against the graph's own timeouts -----------------------------------


def _step_cost(
    manifest: Manifest, node: str, step: Step, costs: Mapping[str, float], seen: frozenset[str]
) -> float:
    own = costs.get(step_label(node, step), 0.0)
    if step.node_name and step.node_name in manifest.spec.nodes and step.node_name not in seen:
        return own + _node_cost(manifest, manifest.spec.nodes[step.node_name], costs, seen)
    return own


def _node_cost(manifest: Manifest, node: Node, costs: Mapping[str, float], seen: frozenset[str]) -> float:
    seen = seen | {node.name}
    parts = [_step_cost(manifest, node.name, step, costs, seen) for step in node.steps]
    if not parts:
        return 0.0
    if node.router_type == "Sequence" or node.router_type is None:
        return sum(parts)
    return max(parts)  # Ensemble: the slowest; Switch and Splitter: the slowest branch


def critical_path_ms(manifest: Manifest, costs: Mapping[str, float]) -> float:
    """The slowest way through the graph from ``root``, each step costing ``costs[node/step]``
    (0 when unknown). A cycle is cut where it closes."""
    root = manifest.spec.nodes.get("root")
    return 0.0 if root is None else _node_cost(manifest, root, costs, frozenset())


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.4g} ms"


def check_timeouts(
    manifest: Manifest, budgets: Budgets, measured_p99: Mapping[str, float] | None = None
) -> list[Issue]:
    """Warnings, each pinned to the timeout that cannot hold: a step budget (or measured p99) above
    ``serviceClient``; the critical path (by budgets, and by what was measured) above
    ``serverWrite``, ``serverRead`` or ``spec.timeout``; the graph's p95 budget above them; a graph
    budget the step budgets along the critical path already exceed."""
    issues: list[Issue] = []
    timeouts = manifest.spec.router_timeouts
    limits: list[tuple[str, str, float]] = []  # (field path, name, ms)
    if timeouts is not None:
        for attr, name in (("server_write", "serverWrite"), ("server_read", "serverRead")):
            value = getattr(timeouts, attr)
            if value:
                limits.append((f"spec.routerTimeouts.{name}", name, float(value) * 1000))
    if manifest.spec.timeout:
        limits.append(("spec.timeout", "timeout", float(manifest.spec.timeout) * 1000))
    service_client = float(timeouts.service_client) * 1000 if timeouts and timeouts.service_client else None

    def steps_of() -> list[tuple[str, Step]]:
        return [(name, step) for name, node in manifest.spec.nodes.items() for step in node.steps]

    # Each step call against serviceClient.
    if service_client is not None:
        for node, step in steps_of():
            label = step_label(node, step)
            for what, source in (("p95 budget", budgets.steps), ("measured p99", measured_p99 or {})):
                ms = source.get(label)
                if ms is not None and ms > service_client:
                    issues.append(
                        Issue(
                            code="budget.service-client",
                            severity="warning",
                            message=f"serviceClient {_seconds(service_client)} leaves no room: step "
                            f"{label}'s {what} is {_seconds(ms)}",
                            node=node,
                            step=step.index,
                            step_name=step.name,
                            path="spec.routerTimeouts.serviceClient",
                        )
                    )
    # The whole answer against serverWrite, serverRead and spec.timeout.
    paths: list[tuple[str, float]] = []
    if budgets.steps:
        paths.append(
            ("the critical path's step budgets add up to", critical_path_ms(manifest, budgets.steps))
        )
    if measured_p99:
        paths.append(("the critical path's p99 measured", critical_path_ms(manifest, measured_p99)))
        graph_p99 = measured_p99.get("graph")
        if graph_p99 is not None:
            paths.append(("the graph's p99 measured", graph_p99))
    if budgets.graph_p95_ms is not None:
        paths.append(("the graph's p95 budget is", budgets.graph_p95_ms))
    for path, name, limit in limits:
        for what, ms in paths:
            if ms > limit:
                issues.append(
                    Issue(
                        code="budget.timeout",
                        severity="warning",
                        message=f"{name} {_seconds(limit)} leaves no room: {what} {_seconds(ms)}",
                        path=path,
                    )
                )
    if budgets.graph_p95_ms is not None and budgets.steps:
        along = critical_path_ms(manifest, budgets.steps)
        if along > budgets.graph_p95_ms:
            issues.append(
                Issue(
                    code="budget.inconsistent",
                    severity="warning",
                    message=f"the graph's p95 budget {_seconds(budgets.graph_p95_ms)} is below what its "
                    f"critical path's step budgets add up to ({_seconds(along)})",
                    path="latency_budgets.graph_p95_ms",
                )
            )
    return issues
