"""The runs API: start (202, enqueued on commit, idempotent, redacted), list, read, rerun, cancel."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import redis
from rest_framework.test import APIClient

from execution import bus
from execution.models import Environment, Run, RunEvent
from execution.services import environments, run_request, runs, worker
from graphs import services as graph_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_run_settings", "enqueued")]

RUN_FIELDS = {
    "id",
    "graph",
    "version",
    "environment",
    "status",
    "request",
    "response",
    "error",
    "steps",
    "created_at",
    "started_at",
    "finished_at",
    "attempt",
    "seed",
    "duration_ms",
    "created_by",
    "rerun_of",
}


def start(api: APIClient, name: str = "model-chainer", **body: Any) -> Any:
    headers = body.pop("http_headers", {})
    return api.post(
        f"/api/graphs/{name}/runs/", {"payload": {"instances": [[1, 2]]}, **body}, format="json", **headers
    )


def test_anonymous_requests_are_refused(anon: APIClient, api: APIClient, graph: Any, local_env: Any) -> None:
    run_id = start(api).json()["id"]
    for method, url in [
        ("get", "/api/graphs/model-chainer/runs/"),
        ("post", "/api/graphs/model-chainer/runs/"),
        ("get", f"/api/runs/{run_id}/"),
        ("post", f"/api/runs/{run_id}/rerun/"),
        ("post", f"/api/runs/{run_id}/cancel/"),
        ("get", f"/api/runs/{run_id}/events/"),
    ]:
        assert getattr(anon, method)(url, {}, format="json").status_code in (401, 403), (method, url)
    assert Run.objects.count() == 1


def test_start_answers_202_with_the_queued_run_and_enqueues_its_id_only(
    api: APIClient,
    graph: Any,
    local_env: Any,
    enqueued: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = start(api, seed=7)
    assert response.status_code == 202, response.json()
    body = response.json()
    assert set(body) >= RUN_FIELDS
    assert body["status"] == "queued" and body["graph"] == "model-chainer" and body["version"] == 1
    assert body["environment"] == {"id": local_env.pk, "name": "local"}
    assert body["seed"] == 7 and body["attempt"] == 0 and body["created_by"] == "alice"
    assert body["request"] == {
        "body": {"instances": [[1, 2]]},
        "content_type": "application/json",
        "headers": {},
    }
    assert body["response"]["status_code"] is None and body["steps"] == []
    assert response["Location"] == f"/api/runs/{body['id']}/"
    assert enqueued == [{"args": [body["id"]], "kwargs": None, "options": enqueued[0]["options"]}]
    assert enqueued[0]["options"]["time_limit"] > enqueued[0]["options"]["soft_time_limit"] > 60
    assert list(RunEvent.objects.filter(run_id=body["id"]).values_list("seq", "type")) == [(1, "run.queued")]


def test_a_seed_is_generated_when_missing_so_runs_are_replayable(
    api: APIClient, graph: Any, local_env: Any
) -> None:
    seeds = {start(api).json()["seed"] for _ in range(3)}
    assert len(seeds) == 3 and all(isinstance(s, int) for s in seeds)


def test_version_defaults_to_the_latest_and_can_be_chosen(
    api: APIClient, graph: Any, user: Any, manifest: dict, local_env: Any
) -> None:
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    graph_services.graph_version_create(
        graph=graph, manifest=changed, layout={}, author=user, message="", base_version=1
    )
    assert start(api).json()["version"] == 2
    assert start(api, version=1).json()["version"] == 1
    missing = start(api, version=9)
    assert missing.status_code == 404 and "no version 9" in missing.json()["detail"]


def test_an_invalid_version_answers_422_with_its_issues(api: APIClient, user: Any, local_env: Any) -> None:
    broken = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": "broken"},
        "spec": {"nodes": {"root": {"routerType": "Bogus", "steps": []}}},
    }
    graph_services.graph_create(owner=user, manifest=broken)
    response = start(api, "broken")
    assert response.status_code == 422
    assert response.json()["issues"] and any(i["severity"] == "error" for i in response.json()["issues"])
    assert not Run.objects.exists()


def test_unknown_graph_and_environment(api: APIClient, graph: Any, local_env: Any) -> None:
    assert start(api, "nope").status_code == 404
    response = start(api, environment="nowhere")
    assert response.status_code == 400 and response.json()["issues"][0]["code"] == "run.environment-unknown"
    assert start(api, environment=str(local_env.pk)).status_code == 202
    assert start(api, environment="local").status_code == 202


def test_a_raw_string_payload_is_stored_as_sent(api: APIClient, graph: Any, local_env: Any) -> None:
    body = start(api, payload="not json {").json()
    assert body["request"]["body"] == "not json {" and body["request"]["content_type"].startswith(
        "text/plain"
    )
    body = start(api, payload='{"a": 1}').json()
    assert body["request"]["body"] == {"a": 1} and Run.objects.get(pk=body["id"]).request_body == '{"a": 1}'
    body = start(api, payload="a,b", content_type="text/csv").json()
    assert body["request"] == {"body": "a,b", "content_type": "text/csv", "headers": {}}


def test_idempotency_key_returns_the_same_run(
    api: APIClient,
    bob_api: APIClient,
    graph: Any,
    local_env: Any,
    enqueued: list,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = start(api, http_headers={"HTTP_IDEMPOTENCY_KEY": "abc"})
        again = start(api, http_headers={"HTTP_IDEMPOTENCY_KEY": "abc"})
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"] and Run.objects.count() == 1 and len(enqueued) == 1
    # Keys are per user: bob's "abc" is another run.
    assert start(bob_api, http_headers={"HTTP_IDEMPOTENCY_KEY": "abc"}).json()["id"] != first.json()["id"]
    conflict = start(api, payload={"other": True}, http_headers={"HTTP_IDEMPOTENCY_KEY": "abc"})
    assert conflict.status_code == 409 and conflict.json()["run"] == first.json()["id"]
    assert Run.objects.count() == 2


def test_secret_headers_are_stored_redacted_and_kept_in_redis_for_the_worker(
    api: APIClient, graph: Any, local_env: Any, redis_url: str
) -> None:
    headers = {
        "Authorization": "Bearer s3cret-value",
        "X-Request-Id": "r-1",
        "X-My-Token": "tok",
        "Cookie": "session=abc",
        "X-Api-Key": "k",
        "X-Password-Hint": "pw",
    }
    body = start(api, headers=headers).json()
    assert body["request"]["headers"] == {
        "Authorization": "Bearer ***",
        "X-Request-Id": "r-1",
        "X-My-Token": "***",
        "Cookie": "***",
        "X-Api-Key": "***",
        "X-Password-Hint": "***",
    }
    run = Run.objects.get(pk=body["id"])
    assert "s3cret" not in json.dumps(run.request_headers)
    assert not any("s3cret" in json.dumps(e.data) for e in RunEvent.objects.filter(run=run))
    stored = redis.Redis.from_url(redis_url).get(bus.secret_headers_key(run.pk))
    assert json.loads(stored)["Authorization"] == "Bearer s3cret-value"
    assert 0 < redis.Redis.from_url(redis_url).ttl(bus.secret_headers_key(run.pk)) <= 3600


def test_every_header_not_known_to_be_harmless_is_redacted(
    api: APIClient, graph: Any, local_env: Any, redis_url: str
) -> None:
    """An allow list, not a guess by name: X-Credentials, X-Session or Signature hold secrets too."""
    headers = {
        "X-Credentials": "user:pass",
        "X-Session": "s-1",
        "Signature": "sig",
        "X-Request-Id": "r-1",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "Accept": "application/json",
        "User-Agent": "curl/8",
    }
    body = start(api, headers=headers).json()
    assert body["request"]["headers"] == {
        "X-Credentials": run_request.REDACTED,
        "X-Session": run_request.REDACTED,
        "Signature": run_request.REDACTED,
        "X-Request-Id": "r-1",
        "traceparent": headers["traceparent"],
        "Accept": "application/json",
        "User-Agent": "curl/8",
    }
    run = Run.objects.get(pk=body["id"])
    assert sorted(run.secret_header_names) == ["Signature", "X-Credentials", "X-Session"]
    stored = json.loads(redis.Redis.from_url(redis_url).get(bus.secret_headers_key(run.pk)))
    assert stored == {"X-Credentials": "user:pass", "X-Session": "s-1", "Signature": "sig"}


def test_an_environment_marks_more_headers_as_secret(
    api: APIClient,
    graph: Any,
    local_env: Any,
    redis_url: str,
    enqueued: list,
    django_capture_on_commit_callbacks: Any,
) -> None:
    local_env.secret_headers = ["x-request-id"]
    local_env.save()
    with django_capture_on_commit_callbacks(execute=True):
        first = start(api, headers={"X-Request-Id": "tenant-7", "Accept": "*/*"}).json()
        again = api.post(f"/api/runs/{first['id']}/rerun/").json()
    assert first["request"]["headers"] == {"X-Request-Id": run_request.REDACTED, "Accept": "*/*"}
    # the rerun carries the real value along, never the redacted one as a value
    assert json.loads(redis.Redis.from_url(redis_url).get(bus.secret_headers_key(again["id"]))) == {
        "X-Request-Id": "tenant-7"
    }


def test_redaction_is_spelled_the_same_in_storage_and_in_the_engine_trace() -> None:
    from execution.engine.config import REDACTED

    assert run_request.REDACTED == REDACTED
    assert run_request.redact_value("Bearer abc") == f"Bearer {REDACTED}"


def test_bad_headers_are_refused(api: APIClient, graph: Any, local_env: Any) -> None:
    response = start(api, headers={"Bad Name": "x"})
    assert response.status_code == 400 and not Run.objects.exists()


def test_list_is_paginated_and_filtered(api: APIClient, graph: Any, local_env: Any, user: Any) -> None:
    other = Environment.objects.create(name="other", owner=user)
    first = start(api).json()["id"]
    start(api, environment="other")
    runs.run_cancel(run=Run.objects.get(pk=first), user=user)
    listing = api.get("/api/graphs/model-chainer/runs/").json()
    assert listing["count"] == 2 and {"next", "previous", "results"} <= set(listing)
    assert "steps" not in listing["results"][0]
    assert api.get("/api/graphs/model-chainer/runs/?status=cancelled").json()["results"][0]["id"] == first
    assert api.get("/api/graphs/model-chainer/runs/?environment=other").json()["count"] == 1
    assert api.get(f"/api/graphs/model-chainer/runs/?environment={other.pk}").json()["count"] == 1
    assert api.get("/api/graphs/model-chainer/runs/?version=1").json()["count"] == 2
    assert api.get("/api/graphs/model-chainer/runs/?version=2").json()["count"] == 0
    assert api.get("/api/graphs/model-chainer/runs/?status=bogus").status_code == 400


def test_detail_and_missing_run(api: APIClient, bob_api: APIClient, graph: Any, local_env: Any) -> None:
    run_id = start(api).json()["id"]
    assert bob_api.get(f"/api/runs/{run_id}/").json()["id"] == run_id  # runs are readable by everyone
    assert api.get("/api/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_rerun_repeats_the_request_as_a_new_run(
    api: APIClient,
    graph: Any,
    local_env: Any,
    enqueued: list,
    redis_url: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = start(api, seed=3, headers={"Authorization": "Bearer abc", "X-Request-Id": "1"}).json()
        response = api.post(f"/api/runs/{first['id']}/rerun/")
    assert response.status_code == 202
    again = response.json()
    assert again["id"] != first["id"] and again["rerun_of"] == first["id"]
    assert (again["request"], again["seed"], again["version"]) == (first["request"], 3, 1)
    stored = redis.Redis.from_url(redis_url).get(bus.secret_headers_key(again["id"]))
    assert json.loads(stored) == {"Authorization": "Bearer abc"}
    assert len(enqueued) == 2


def test_a_rerun_by_someone_else_does_not_replay_the_secrets(
    api: APIClient, bob_api: APIClient, graph: Any, local_env: Any, redis_url: str
) -> None:
    first = start(api, headers={"Authorization": "Bearer abc", "X-Request-Id": "1"}).json()
    again = bob_api.post(f"/api/runs/{first['id']}/rerun/").json()
    assert again["created_by"] == "bob" and again["request"]["headers"] == {"X-Request-Id": "1"}
    assert redis.Redis.from_url(redis_url).get(bus.secret_headers_key(again["id"])) is None


def test_cancelling_a_queued_run_cancels_it_at_once(api: APIClient, graph: Any, local_env: Any) -> None:
    run_id = start(api).json()["id"]
    response = api.post(f"/api/runs/{run_id}/cancel/")
    assert response.status_code == 202 and response.json()["status"] == "cancelled"
    assert response.json()["finished_at"] is not None
    assert list(RunEvent.objects.filter(run_id=run_id).values_list("type", flat=True)) == [
        "run.queued",
        "run.finished",
    ]
    assert RunEvent.objects.get(run_id=run_id, type="run.finished").data["status"] == "cancelled"
    # The task arriving later returns at once; cancelling again changes nothing.
    assert worker.run_execute(run_id=run_id) == "not-claimed"
    assert api.post(f"/api/runs/{run_id}/cancel/").json()["status"] == "cancelled"
    assert RunEvent.objects.filter(run_id=run_id).count() == 2


def test_cancelling_a_running_run_flags_it_for_its_worker(
    api: APIClient, graph: Any, local_env: Any, redis_url: str
) -> None:
    run_id = start(api).json()["id"]
    Run.objects.filter(pk=run_id).update(status=Run.Status.RUNNING, attempt=1)
    pubsub = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(bus.control_channel(run_id))
    body = api.post(f"/api/runs/{run_id}/cancel/").json()
    assert body["status"] == "running" and body["cancel_requested"] is True
    assert RunEvent.objects.filter(run_id=run_id).last().type == "run.cancel_requested"
    # The test's transaction never commits, so on_commit never fires; publish the way it would.
    bus.publish_cancel(run_id)
    message = None
    for _ in range(20):  # the first reads return the (ignored) subscribe confirmation
        message = message or pubsub.get_message(timeout=0.1)
    assert message and message["data"] == b"cancel"


def test_only_the_starter_graph_writers_or_staff_may_cancel(
    api: APIClient, bob_api: APIClient, graph: Any, local_env: Any, other_user: Any
) -> None:
    run_id = start(api).json()["id"]
    response = bob_api.post(f"/api/runs/{run_id}/cancel/")
    assert response.status_code == 403
    assert Run.objects.get(pk=run_id).status == "queued"
    graph_services.graph_member_add(graph=graph, user=other_user, actor=graph.owner)
    assert bob_api.post(f"/api/runs/{run_id}/cancel/").json()["status"] == "cancelled"


def _private(owner: Any, name: str = "alices-lab") -> Environment:
    return environments.environment_create(
        owner=owner,
        name=name,
        allow_loopback=True,
        url_template=("http://127.0.0.1:9/v1/models/{name}:predict"),
    )


def test_a_run_may_not_use_another_users_private_environment(
    api: APIClient, bob_api: APIClient, graph: Any, user: Any, local_env: Any
) -> None:
    lab = _private(user)
    for ref in ("alices-lab", str(lab.pk)):  # answered as a missing one: its existence is not told
        response = start(bob_api, environment=ref)
        assert response.status_code == 400, response.json()
        assert response.json()["issues"][0]["code"] == "run.environment-unknown"
        assert response.json()["detail"] == f"There is no environment {ref!r}."
    assert not Run.objects.exists()
    mine = start(api, environment="alices-lab")
    assert mine.status_code == 202 and mine.json()["environment"] == {"id": lab.pk, "name": "alices-lab"}


def test_a_rerun_may_not_borrow_the_first_runs_private_environment(
    api: APIClient, bob_api: APIClient, graph: Any, user: Any, local_env: Any
) -> None:
    _private(user)
    first = start(api, environment="alices-lab").json()["id"]
    response = bob_api.post(f"/api/runs/{first}/rerun/")  # a run bob may not see (its environment)
    assert response.status_code == 404, response.json()
    assert Run.objects.count() == 1


def test_staff_may_use_any_environment(
    bob_api: APIClient, other_user: Any, graph: Any, user: Any, local_env: Any
) -> None:
    _private(user)
    other_user.is_staff = True
    other_user.save()
    assert start(bob_api, environment="alices-lab").status_code == 202


def test_runs_without_an_environment_go_to_the_system_default_created_on_first_use(
    api: APIClient, bob_api: APIClient, graph: Any, settings: Any
) -> None:
    """No ``local`` exists (a fresh docker-compose deployment): nobody can take the name first, and
    the first default run creates the system's own, owned by no user."""
    squat = api.post(
        "/api/environments/", {"name": "local", "url_template": "http://evil.test/{name}"}, format="json"
    )
    assert squat.status_code == 400 and not Environment.objects.exists()
    response = start(bob_api)
    assert response.status_code == 202, response.json()
    environment = Environment.objects.get()
    assert (environment.name, environment.owner, environment.system) == ("local", None, True)
    assert environment.url_template == settings.MOCKMODELS_URL + "/v1/models/{name}:predict"
    assert response.json()["environment"] == {"id": environment.pk, "name": "local"}
    assert start(api).json()["environment"]["id"] == environment.pk


@pytest.mark.parametrize(
    "query",
    [
        "environment=" + "9" * 25,
        "environment=" + str(2**63),
        "version=" + "9" * 25,
        "version=%C2%B2",  # "²": str.isdigit() says yes, int() says no
    ],
)
def test_run_list_filters_refuse_numbers_the_database_cannot_hold(
    api: APIClient, graph: Any, query: str
) -> None:
    response = api.get(f"/api/graphs/model-chainer/runs/?{query}")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["issues"][0]["code"] == "request.invalid-number"


@pytest.mark.parametrize("last", ["9" * 25, "\u00b2", "-1", "x"])
def test_an_event_number_that_is_not_a_number_is_a_400(
    api: APIClient, graph: Any, local_env: Any, last: str
) -> None:
    run_id = start(api).json()["id"]
    by_query = api.get(f"/api/runs/{run_id}/events/", {"last_event_id": last})
    assert by_query.status_code == 400
    assert by_query.json()["issues"][0]["code"] == "request.invalid-number"
    if last.isascii():  # a header value is Latin-1 on the wire
        assert api.get(f"/api/runs/{run_id}/events/", HTTP_LAST_EVENT_ID=last).status_code == 400
