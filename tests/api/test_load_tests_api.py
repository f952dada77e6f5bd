"""The load tests API without a worker: what it refuses (bounds, environments, fair share), its
secret headers (stored redacted, their values in Redis until it ends), who may read and cancel,
the budgets setting and the static budget check. The real worker runs them in
tests/integration/test_load_tests_integration.py and test_load_test_secrets_integration.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis
from rest_framework.test import APIClient

from execution import bus
from execution.loadtests import services
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

    load_id = start(api, headers={"Authorization": "Bearer s3cret"}).json()["id"]
    silent = timezone.now() - datetime.timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT + 5)
    LoadTest.objects.filter(pk=load_id).update(status="running", started_at=silent, heartbeat_at=silent)
    assert services.load_reap() == [load_id]
    reaped = api.get(f"/api/load-tests/{load_id}/").json()
    assert reaped["status"] == "failed" and "stopped answering" in reaped["error"]
    assert services.load_reap() == []  # once
    assert secrets_of(load_id) is None  # nobody will send them now
    assert start(api).status_code == 202  # its slot is free again


# --- secret headers ---------------------------------------------------------------------------------


def secrets_of(load_id: str) -> dict[str, str] | None:
    """What Redis holds for the load test's worker (through the settings' URL, the test Redis)."""
    return bus.load_secret_headers(load_id, owner="load")


def test_secret_headers_are_stored_redacted_and_their_values_wait_in_redis_until_it_ends(
    api: APIClient, graph: Any, sent: list[str], redis_url: str, settings: Any
) -> None:
    Environment.objects.filter(name="local").update(secret_headers=["accept"])
    headers = {"Authorization": "Bearer s3cret", "X-Api-Key": "k3y", "Accept": "application/x-s3cret"}
    response = start(api, headers=headers)
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["request_headers"] == {"Authorization": "Bearer ***", "X-Api-Key": "***", "Accept": "***"}
    assert body["secret_header_names"] == ["Accept", "Authorization", "X-Api-Key"]
    load = LoadTest.objects.get(pk=body["id"])
    assert load.request_headers == body["request_headers"] and load.secret_header_names == [
        "Accept",
        "Authorization",
        "X-Api-Key",
    ]
    assert "s3cret" not in json.dumps(
        [body, api.get(f"/api/load-tests/{body['id']}/events/?format=json").json()]
    )
    # Under a key of their own (a run of the same id could not read or overwrite them), with the
    # runs' TTL.
    raw = redis.Redis.from_url(redis_url)
    key = bus.secret_headers_key(body["id"], owner="load")
    assert key != bus.secret_headers_key(body["id"]) and raw.exists(bus.secret_headers_key(body["id"])) == 0
    assert json.loads(raw.get(key) or b"null") == headers
    assert 0 < raw.ttl(key) <= settings.RUN_SECRET_HEADERS_TTL
    # Cancelled while queued: it ended, so its secrets are deleted at once.
    assert api.post(f"/api/load-tests/{body['id']}/cancel/").json()["status"] == "cancelled"
    assert raw.exists(key) == 0


def test_a_load_test_whose_secrets_are_gone_fails_naming_them_and_sends_nothing(
    api: APIClient, graph: Any, sent: list[str], mock_server: Any
) -> None:
    load_id = start(
        api, headers={"Authorization": "Bearer s3cret", "Content-Type": "application/json"}
    ).json()["id"]
    assert secrets_of(load_id) == {"Authorization": "Bearer s3cret"}
    bus.delete_secret_headers(load_id, owner="load")  # expired, or Redis lost them
    assert services.load_test_execute(load_id=load_id) == "failed"
    failed = api.get(f"/api/load-tests/{load_id}/").json()
    assert failed["status"] == "failed" and failed["completed"] == 0 and failed["summary"] == {}
    assert "Authorization" in failed["error"] and "RUN_SECRET_HEADERS_TTL" in failed["error"]
    final = LoadTestEvent.objects.get(load_test_id=load_id, type="load.finished")
    assert final.data["status"] == "failed" and "Authorization" in final.data["error"]
    assert not LoadTestEvent.objects.filter(load_test_id=load_id, type="load.progress").exists()


def test_a_cases_redacted_headers_are_left_out_unless_given_with_their_value(
    api: APIClient, graph: Any, sent: list[str], settings: Any
) -> None:
    settings.LOAD_TEST_MAX_IN_FLIGHT_PER_USER = 3
    case = {
        "name": "with a token",
        "request": {
            "payload": {"instances": [1]},
            "headers": {"Authorization": "Bearer s3cret", "X-Request-Id": "r-1"},
        },
        "expectations": [{"status": 200}],
    }
    created = api.post("/api/graphs/model-chainer/tests/", case, format="json")
    assert created.status_code == 201, created.json()
    case_id = created.json()["id"]
    url = "/api/graphs/model-chainer/load-tests/"
    alone = api.post(url, {"requests": 1, "concurrency": 1, "test_case": case_id}, format="json").json()
    assert alone["request_headers"] == {"X-Request-Id": "r-1"} and alone["secret_header_names"] == []
    assert secrets_of(alone["id"]) is None
    given = api.post(
        url,
        {
            "requests": 1,
            "concurrency": 1,
            "test_case": case_id,
            "headers": {"authorization": "Bearer n3w", "X-Request-Id": "r-2"},
        },
        format="json",
    ).json()
    # The load test's own headers win over the case's, whatever their case.
    assert given["request_headers"] == {"authorization": "Bearer ***", "X-Request-Id": "r-2"}
    assert given["secret_header_names"] == ["authorization"]
    assert secrets_of(given["id"]) == {"authorization": "Bearer n3w"}


def test_a_load_test_the_workers_cannot_be_sent_fails_and_forgets_its_secrets(
    api: APIClient,
    graph: Any,
    quick_run_settings: None,
    local_env: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    def broker_down(load_id: str) -> None:
        raise ConnectionError("the broker is down")

    monkeypatch.setattr(run_load_test_task, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = start(api, headers={"Authorization": "Bearer s3cret"})
    assert response.status_code == 202, response.json()
    failed = api.get(f"/api/load-tests/{response.json()['id']}/").json()
    assert failed["status"] == "failed" and "workers could not be reached" in failed["error"]
    assert secrets_of(failed["id"]) is None
    assert start(api).status_code != 429  # its slot is free again
