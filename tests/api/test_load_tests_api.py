"""The load tests API without a worker: what it refuses (bounds, environments, secrets, fair
share), who may read and cancel, the budgets setting and the static budget check. The real worker
runs them in tests/integration/test_load_tests_integration.py."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.loadtests.models import LoadTest, LoadTestEvent
from execution.models import Environment
from execution.tasks.loadtests import run_load_test_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, quick_run_settings: None, local_env: Any) -> list[str]:
    """The load tests' task messages, instead of sending them."""
    messages: list[str] = []
    monkeypatch.setattr(run_load_test_task, "delay", lambda load_id: messages.append(load_id))
    return messages


def start(api: APIClient, name: str = "model-chainer", **body: Any) -> Any:
    return api.post(
        f"/api/graphs/{name}/load-tests/",
        {"requests": 10, "concurrency": 2, "payload": {"instances": [1]}, **body},
        format="json",
    )


def test_a_load_test_is_queued_and_sent_once_it_commits(
    api: APIClient, graph: Any, sent: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = start(api, requests=1000, concurrency=16)
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["environment"] == "local" and body["version"] == 1
    assert response["Location"] == f"/api/load-tests/{body['id']}/"
    assert sent == [body["id"]]
    events = api.get(f"/api/load-tests/{body['id']}/events/?format=json").json()
    assert [e["type"] for e in events["events"]] == ["load.queued"]
    assert events["events"][0]["data"] == {"requests": 1000, "concurrency": 16}


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        ({"requests": 10_001}, "requests", "LOAD_TEST_MAX_REQUESTS"),
        ({"concurrency": 65}, "concurrency", "LOAD_TEST_MAX_CONCURRENCY"),
        ({"requests": 0}, "requests", "greater than or equal to 1"),
        ({"headers": {"Authorization": "Bearer x"}}, "headers", "keeps no secrets"),
        ({"test_case": 999}, "test_case", "no test case 999"),
        ({"environment": "nowhere"}, "environment", "nowhere"),
    ],
)
def test_what_a_load_test_refuses_names_the_field(
    api: APIClient, graph: Any, sent: list[str], body: dict[str, Any], path: str, words: str
) -> None:
    if "test_case" in body:
        response = api.post(
            "/api/graphs/model-chainer/load-tests/", {"requests": 1, "concurrency": 1, **body}, format="json"
        )
    else:
        response = start(api, **body)
    assert response.status_code == 400, response.json()
    assert words in str(response.json()) and path in [i.get("path") for i in response.json()["issues"]]
    assert not LoadTest.objects.exists() and sent == []


def test_another_users_private_environment_is_refused_as_unknown(
    api: APIClient, bob_api: APIClient, graph: Any, other_user: Any, sent: list[str]
) -> None:
    Environment.objects.create(name="bobs", owner=other_user, visibility="private", allow_loopback=True)
    response = start(api, environment="bobs")
    assert response.status_code == 400 and "bobs" in response.json()["detail"]
    assert not LoadTest.objects.exists()


def test_one_user_may_have_one_load_test_in_flight(api: APIClient, graph: Any, sent: list[str]) -> None:
    assert start(api).status_code == 202
    refused = start(api)
    assert refused.status_code == 429 and "LOAD_TEST_MAX_IN_FLIGHT_PER_USER" in refused.json()["detail"]
    assert refused["Retry-After"] and LoadTest.objects.count() == 1


def test_nothing_is_readable_without_logging_in(
    anon: APIClient, api: APIClient, graph: Any, sent: list[str]
) -> None:
    load_id = start(api).json()["id"]
    for url in (
        f"/api/load-tests/{load_id}/",
        f"/api/load-tests/{load_id}/events/?format=json",
        "/api/graphs/model-chainer/load-tests/",
    ):
        assert anon.get(url).status_code in (401, 403)
    assert anon.post(f"/api/load-tests/{load_id}/cancel/").status_code in (401, 403)
    assert start(anon).status_code in (401, 403)


def test_a_load_test_in_a_private_environment_does_not_exist_for_others(
    api: APIClient, bob_api: APIClient, graph: Any, user: Any, sent: list[str]
) -> None:
    Environment.objects.create(name="mine", owner=user, visibility="private", allow_loopback=True)
    load_id = start(api, environment="mine").json()["id"]
    assert bob_api.get(f"/api/load-tests/{load_id}/").status_code == 404
    assert bob_api.post(f"/api/load-tests/{load_id}/cancel/").status_code == 404
    assert bob_api.get("/api/graphs/model-chainer/load-tests/").json()["count"] == 0


def test_only_its_starter_or_an_editor_may_cancel_and_a_queued_one_ends_at_once(
    api: APIClient, bob_api: APIClient, graph: Any, sent: list[str]
) -> None:
    load_id = start(api).json()["id"]
    refused = bob_api.post(f"/api/load-tests/{load_id}/cancel/")
    assert refused.status_code == 403 and LoadTest.objects.get(pk=load_id).status == "queued"
    cancelled = api.post(f"/api/load-tests/{load_id}/cancel/")
    assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
    again = api.post(f"/api/load-tests/{load_id}/cancel/")
    assert again.status_code == 202 and again.json()["status"] == "cancelled"
    final = LoadTestEvent.objects.filter(load_test_id=load_id, type="load.finished")
    assert final.count() == 1 and final[0].data["status"] == "cancelled"
    # The worker receiving it now claims nothing.
    from execution.loadtests import services

    assert services.load_test_execute(load_id=load_id) == "not-claimed"


def test_budgets_are_a_graph_setting_refused_where_they_are_wrong(api: APIClient, graph: Any) -> None:
    bad = api.patch("/api/graphs/model-chainer/", {"latency_budgets": {"steps": {"x": 5}}}, format="json")
    assert bad.status_code == 400 and bad.json()["issues"][0]["path"] == "latency_budgets.steps.x"
    ok = api.patch("/api/graphs/model-chainer/", {"latency_budgets": {"graph_p95_ms": 90_000}}, format="json")
    assert ok.status_code == 200 and ok.json()["latency_budgets"] == {"graph_p95_ms": 90000.0, "steps": {}}


def test_the_budget_check_pins_a_timeout_that_cannot_hold(api: APIClient, user: Any) -> None:
    from graphs import services as graph_services

    manifest = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": "tight"},
        "spec": {
            "routerTimeouts": {"serverWrite": 60},
            "nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "big", "serviceName": "big"}]}},
        },
    }
    graph_services.graph_create(owner=user, manifest=manifest)
    api.patch("/api/graphs/tight/", {"latency_budgets": {"steps": {"root/big": 61_200}}}, format="json")
    response = api.get("/api/graphs/tight/versions/latest/budget-check/")
    assert response.status_code == 200
    body = response.json()
    assert body["measured_by"] is None
    assert body["issues"] == [
        {
            "code": "budget.timeout",
            "severity": "warning",
            "message": "serverWrite 60 s leaves no room: the critical path's step budgets add up to 61.2 s",
            "path": "spec.routerTimeouts.serverWrite",
        }
    ]


def test_a_load_test_whose_worker_died_is_failed_by_the_reaper(
    api: APIClient, graph: Any, sent: list[str], settings: Any
) -> None:
    import datetime

    from django.utils import timezone

    from execution.loadtests import services

    load_id = start(api).json()["id"]
    silent = timezone.now() - datetime.timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT + 5)
    LoadTest.objects.filter(pk=load_id).update(status="running", started_at=silent, heartbeat_at=silent)
    assert services.load_reap() == [load_id]
    reaped = api.get(f"/api/load-tests/{load_id}/").json()
    assert reaped["status"] == "failed" and "stopped answering" in reaped["error"]
    assert services.load_reap() == []  # once
    assert start(api).status_code == 202  # its slot is free again
