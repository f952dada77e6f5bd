"""A suite run judges its graph's latency budgets on its cases: each case's run is one sample of
the graph, each step call one of its step (tests/graphs/test_budgets.py tests the judging)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from execution.devtools import demo
from execution.tasks.runs import run_graph_task
from graphs.models import Graph
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

GRAPH = "animal-switch"


@pytest.fixture
def demo_api(db: Any, mock_server: Any) -> APIClient:
    list(demo.seed())
    return client_for(get_user_model().objects.get(username=demo.DEMO_USER))


def run_suite(api: APIClient, enqueued: list[dict[str, Any]]) -> dict[str, Any]:
    response = api.post(f"/api/graphs/{GRAPH}/suite-runs/", {"version": 1}, format="json")
    assert response.status_code == 202, response.json()
    suite = response.json()
    for message in list(enqueued):
        run_graph_task.apply(args=message["args"])
    return dict(api.get(f"/api/suite-runs/{suite['id']}/").json())


def test_a_suite_run_judges_the_graphs_budgets(demo_api: APIClient, enqueued: list[dict[str, Any]]) -> None:
    Graph.objects.filter(name=GRAPH).update(
        latency_budgets={"graph_p95_ms": 0.001, "steps": {"root/cat": 60_000, "root/nowhere": 1}}
    )
    done = run_suite(demo_api, enqueued)
    assert done["status"] == "passed"  # the cases' verdicts are the cases' own
    checks = {c["target"]: c for c in done["budgets"]["checks"]}
    assert done["budgets"]["passed"] is False
    assert checks["graph"]["passed"] is False and checks["graph"]["measured_ms"] > 0.001
    assert checks["root/cat"]["passed"] is True and checks["root/cat"]["measured_ms"] > 0
    assert checks["root/nowhere"] == {
        "target": "root/nowhere",
        "budget_ms": 1.0,
        "measured_ms": None,
        "passed": None,
    }


def test_without_budgets_a_suite_run_judges_none(demo_api: APIClient, enqueued: list[dict[str, Any]]) -> None:
    assert run_suite(demo_api, enqueued)["budgets"] == {}


def final_event(api: APIClient, suite_id: str) -> dict[str, Any]:
    events = api.get(f"/api/suite-runs/{suite_id}/events/?format=json").json()["events"]
    assert events[-1]["type"] == "suite.finished"
    return dict(events[-1]["data"])


def test_the_suite_finished_event_carries_the_budget_verdict(
    demo_api: APIClient, enqueued: list[dict[str, Any]]
) -> None:
    Graph.objects.filter(name=GRAPH).update(latency_budgets={"graph_p95_ms": 0.001})
    done = run_suite(demo_api, enqueued)
    verdict = final_event(demo_api, done["id"])["budgets"]
    assert verdict == done["budgets"]
    assert verdict["passed"] is False and verdict["checks"][0]["target"] == "graph"


def test_without_budgets_the_suite_finished_event_says_none(
    demo_api: APIClient, enqueued: list[dict[str, Any]]
) -> None:
    done = run_suite(demo_api, enqueued)
    assert final_event(demo_api, done["id"])["budgets"] is None
