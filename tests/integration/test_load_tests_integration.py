"""Load tests end to end through the real pieces: API -> Redis broker -> Celery worker (threads) ->
engine -> mock model server; live progress over Redis pub/sub and SSE; cancel; budgets; compare."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient
from runhelpers import parse_sse

from execution.devtools import demo, mockmodels
from execution.loadtests.models import LoadTest, LoadTestEvent
from execution.models import Environment, GraphCase
from tests.conftest import client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

GRAPH = "face-recognition"


def demo_api() -> APIClient:
    return client_for(get_user_model().objects.get(username=demo.DEMO_USER))


def start(api: APIClient, graph: str = GRAPH, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/graphs/{graph}/load-tests/", body, format="json")
    assert response.status_code == 202, response.json()
    return dict(response.json())


def wait_for(api: APIClient, load_id: str, timeout: float = 90.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body = api.get(f"/api/load-tests/{load_id}/").json()
        if body["status"] not in ("queued", "running"):
            return dict(body)
        if time.monotonic() > deadline:
            raise AssertionError(f"load test {load_id} is still {body['status']}")
        time.sleep(0.05)


def first_case(graph: str = GRAPH) -> int:
    return GraphCase.objects.filter(graph__name=graph).order_by("name").values_list("pk", flat=True)[0]


def slow_env(mock: mockmodels.MockModelServer, name: str, latency_ms: int) -> Environment:
    return Environment.objects.create(
        name=name,
        visibility="shared",
        url_template=mock.url + "/v1/models/{name}:predict?latency_ms=" + str(latency_ms),
        allow_loopback=True,
    )


def test_a_load_test_streams_progress_and_reports_percentiles_per_step_and_its_budgets(
    worker: Any, demo_graphs: list, mock_server: Any
) -> None:
    slow_env(mock_server, "slow20", 20)
    api = demo_api()
    budgets = {"graph_p95_ms": 1, "steps": {"root/face-detector": 10_000}}
    patched = api.patch(f"/api/graphs/{GRAPH}/", {"latency_budgets": budgets}, format="json")
    assert patched.status_code == 200, patched.json()
    started = start(
        api, version="latest", environment="slow20", requests=300, concurrency=16, test_case=first_case()
    )
    assert started["status"] == "queued" and started["requests"] == 300 and started["concurrency"] == 16
    response = api.get(f"/api/load-tests/{started['id']}/events/", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200
    events = [e for e in parse_sse(response.streaming_content) if "data" in e]
    done = wait_for(api, started["id"])

    types = [e["event"] for e in events]
    assert types[:2] == ["load.queued", "load.started"] and types[-1] == "load.finished"
    assert [int(e["id"]) for e in events] == list(range(1, len(events) + 1))
    progress = [e["data"]["data"]["progress"]["completed"] for e in events if e["event"] == "load.progress"]
    assert progress and progress == sorted(progress) and progress[-1] <= 300  # it moved while it ran
    final = events[-1]["data"]["data"]
    assert (
        final["status"] == "finished"
        and final["progress"]["completed"] == 300
        and final["budget_passed"] is False
    )

    assert done["status"] == "finished" and done["completed"] == 300 and done["errors"] == 0
    summary = done["summary"]
    assert summary["completed"] == 300 and summary["throughput_rps"] > 0 and summary["error_rate"] == 0
    assert summary["graph"]["statuses"] == {"200": 300}
    steps = summary["steps"]
    assert steps, summary
    for key, series in steps.items():
        assert series["count"] > 0 and series["p50_ms"] <= series["p95_ms"] <= series["p99_ms"], key
        # Every step call waits the environment's 20 ms in the mock server.
        assert series["p50_ms"] >= 19.5, (key, series)
        assert sum(b["count"] for b in series["histogram"]) == series["count"]
    assert done["budgets"]["checks"][0] == {
        "target": "graph",
        "budget_ms": 1.0,
        "measured_ms": summary["graph"]["p95_ms"],
        "passed": False,
    }
    assert done["budget_passed"] is False
    # Bounded storage: a few events per second, no row per request.
    assert LoadTestEvent.objects.filter(load_test_id=started["id"]).count() < 100


def test_a_cancelled_load_test_stops_and_keeps_what_it_measured(
    worker: Any, demo_graphs: list, mock_server: Any
) -> None:
    slow_env(mock_server, "slow100", 100)
    api = demo_api()
    started = start(api, environment="slow100", requests=10_000, concurrency=2, test_case=first_case())
    deadline = time.monotonic() + 30
    while LoadTest.objects.get(pk=started["id"]).completed < 2:
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    cancelled = api.post(f"/api/load-tests/{started['id']}/cancel/")
    assert cancelled.status_code == 202 and cancelled.json()["cancel_requested"] is True
    done = wait_for(api, started["id"], timeout=30)
    assert done["status"] == "cancelled" and 2 <= done["completed"] < 10_000
    assert done["summary"]["completed"] == done["completed"]
    final = LoadTestEvent.objects.filter(load_test_id=started["id"]).order_by("-seq").first()
    assert final is not None and final.type == "load.finished" and final.data["status"] == "cancelled"


def test_two_load_tests_compare_step_by_step(worker: Any, demo_graphs: list, mock_server: Any) -> None:
    # 0 ms against 200 ms a step: far enough apart that a busy machine cannot blur them.
    slow_env(mock_server, "fast0", 0)
    slow_env(mock_server, "slow200", 200)
    api = demo_api()
    case = first_case()
    a = wait_for(api, start(api, environment="fast0", requests=24, concurrency=4, test_case=case)["id"])
    b = wait_for(api, start(api, environment="slow200", requests=24, concurrency=4, test_case=case)["id"])
    response = api.get(f"/api/load-tests/compare/?a={a['id']}&b={b['id']}")
    assert response.status_code == 200
    body = response.json()
    assert body["a"]["id"] == a["id"] and body["b"]["id"] == b["id"]
    comparison = body["comparison"]
    assert comparison["graph"]["slower"] is True
    assert set(comparison["slower_steps"]) == set(a["summary"]["steps"])  # every step waits 200 ms longer
    listed = api.get(f"/api/graphs/{GRAPH}/load-tests/").json()
    assert listed["count"] == 2 and [r["id"] for r in listed["results"]] == [b["id"], a["id"]]


def test_a_load_test_stops_at_its_time_limit_with_what_it_measured(
    worker: Any, demo_graphs: list, mock_server: Any, settings: Any
) -> None:
    settings.LOAD_TEST_MAX_SECONDS = 1.5
    slow_env(mock_server, "slow50", 50)
    api = demo_api()
    started = start(api, environment="slow50", requests=10_000, concurrency=2, test_case=first_case())
    done = wait_for(api, started["id"], timeout=30)
    assert done["status"] == "stopped" and 0 < done["completed"] < 10_000
    assert "LOAD_TEST_MAX_SECONDS" in done["error"] and done["summary"]["completed"] == done["completed"]
