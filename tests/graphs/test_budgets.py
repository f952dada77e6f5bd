"""Latency budgets (graphs/language/budgets.py): reading them, judging a summary, and the static check
of budgets against a graph's own timeouts, on hand-written graphs."""

from __future__ import annotations

from typing import Any

import pytest

from graphs.language import manifest_from_document
from graphs.language.budgets import (
    BudgetError,
    Budgets,
    check_timeouts,
    critical_path_ms,
    judge,
    parse_budgets,
)


def graph(nodes: dict[str, Any], **spec: Any) -> Any:
    return manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g"},
            "spec": {"nodes": nodes, **spec},
        }
    )


def step(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "serviceName": name, **extra}


# root: Sequence(pre, ens -> Ensemble(a, b), sw -> Switch(x, y)), the critical path: pre + max(a, b) + max(x, y)
NESTED = graph(
    {
        "root": {
            "routerType": "Sequence",
            "steps": [step("pre"), {"name": "ens", "nodeName": "fan"}, {"name": "sw", "nodeName": "pick"}],
        },
        "fan": {"routerType": "Ensemble", "steps": [step("a"), step("b")]},
        "pick": {
            "routerType": "Switch",
            "steps": [step("x", condition="k == 1"), step("y", condition="k == 2")],
        },
    },
    routerTimeouts={"serverWrite": 1, "serviceClient": 1},
)


def test_the_critical_path_adds_a_sequence_takes_the_slowest_of_an_ensemble_and_a_switch() -> None:
    costs = {"root/pre": 100.0, "fan/a": 300.0, "fan/b": 200.0, "pick/x": 50.0, "pick/y": 400.0}
    assert critical_path_ms(NESTED, costs) == 100 + 300 + 400
    assert critical_path_ms(NESTED, {}) == 0


def test_budgets_that_add_up_past_server_write_are_pinned_to_it() -> None:
    budgets = Budgets(steps={"root/pre": 100.0, "fan/a": 300.0, "pick/y": 700.0})
    issues = check_timeouts(NESTED, budgets)
    assert [(i.code, i.path) for i in issues] == [("budget.timeout", "spec.routerTimeouts.serverWrite")]
    assert issues[0].severity == "warning"
    assert (
        "serverWrite 1 s leaves no room: the critical path's step budgets add up to 1.1 s"
        in issues[0].message
    )


def test_a_measured_p99_past_service_client_and_server_write_is_named() -> None:
    measured = {"root/pre": 200.0, "fan/a": 1500.0, "pick/x": 60.0, "graph": 1800.0}
    issues = check_timeouts(NESTED, Budgets(), measured)
    assert [(i.path, i.node, i.step_name, i.message) for i in issues] == [
        (
            "spec.routerTimeouts.serviceClient",
            "fan",
            "a",
            "serviceClient 1 s leaves no room: step fan/a's measured p99 is 1.5 s",
        ),
        (
            "spec.routerTimeouts.serverWrite",
            None,
            None,
            "serverWrite 1 s leaves no room: the critical path's p99 measured 1.76 s",
        ),
        (
            "spec.routerTimeouts.serverWrite",
            None,
            None,
            "serverWrite 1 s leaves no room: the graph's p99 measured 1.8 s",
        ),
    ]


def test_budgets_within_the_timeouts_raise_nothing() -> None:
    budgets = Budgets(graph_p95_ms=900, steps={"root/pre": 100.0, "fan/a": 300.0, "pick/y": 400.0})
    assert check_timeouts(NESTED, budgets, {"root/pre": 90.0}) == []


def test_a_graph_budget_below_its_steps_sum_and_spec_timeout_are_checked() -> None:
    g = graph({"root": {"routerType": "Sequence", "steps": [step("a"), step("b")]}}, timeout=1)
    issues = check_timeouts(g, Budgets(graph_p95_ms=1500, steps={"root/a": 200.0, "root/b": 1400.0}))
    assert {(i.code, i.path) for i in issues} == {
        ("budget.timeout", "spec.timeout"),
        ("budget.inconsistent", "latency_budgets.graph_p95_ms"),
    }


def test_judging_names_each_budget_and_what_was_measured() -> None:
    budgets = parse_budgets({"graph_p95_ms": 50, "steps": {"root/a": 20, "root/never": 5}})
    summary = {"graph": {"p95_ms": 61.2}, "steps": {"root/a": {"p95_ms": 12.0}}}
    verdict = judge(budgets, summary)
    assert verdict["passed"] is False
    assert verdict["checks"] == [
        {"target": "graph", "budget_ms": 50.0, "measured_ms": 61.2, "passed": False},
        {"target": "root/a", "budget_ms": 20.0, "measured_ms": 12.0, "passed": True},
        {"target": "root/never", "budget_ms": 5.0, "measured_ms": None, "passed": None},
    ]
    assert judge(Budgets(), summary) == {"passed": None, "checks": []}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"graph_p95_ms": -1}, "latency_budgets.graph_p95_ms"),
        ({"graph_p95_ms": "fast"}, "latency_budgets.graph_p95_ms"),
        ({"steps": {"nodeonly": 5}}, "latency_budgets.steps.nodeonly"),
        ({"steps": {"root/a": True}}, "latency_budgets.steps.root/a"),
        ({"p99": 5}, "latency_budgets.p99"),
        ([1], "latency_budgets"),
    ],
)
def test_budgets_that_do_not_read_are_refused_where_they_are_wrong(value: Any, path: str) -> None:
    with pytest.raises(BudgetError) as caught:
        parse_budgets(value)
    assert [i["path"] for i in caught.value.issues] == [path]
