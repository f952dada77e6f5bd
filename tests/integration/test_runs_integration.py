"""Runs end to end through the real pieces: API -> Redis broker -> Celery worker (threads) ->
engine -> mock model server over HTTP, with events over Redis pub/sub and the SSE endpoint."""

from __future__ import annotations

import hashlib
import json
import random
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient
from runhelpers import parse_sse, wait_for_run

from execution import events
from execution.devtools import demo, demomodels, mockmodels
from execution.models import Environment, Run, RunEvent, RunStep
from execution.services import dispatch as run_tasks
from execution.services import reaper, runs
from execution.services.worker import STOP_ANNOUNCED
from graphs import services as graph_services

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def start(api: APIClient, name: str, payload: Any, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/graphs/{name}/runs/", {"payload": payload, **body}, format="json")
    assert response.status_code == 202, response.json()
    return response.json()


def graph_of(user: Any, name: str, steps: list[dict[str, Any]], router: str = "Sequence") -> None:
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": name},
            "spec": {"nodes": {"root": {"routerType": router, "steps": steps}}},
        },
    )


def slow_env(mock: mockmodels.MockModelServer, name: str, latency_ms: int, **extra: Any) -> Environment:
    return Environment.objects.create(
        name=name,
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=mock.url + "/v1/models/{name}:predict?latency_ms=" + str(latency_ms),
        allow_loopback=True,
        **extra,
    )


def face_recognition_expected(request: Any) -> Any:
    features = demomodels.feature_extractor(demomodels.face_detector(request))
    return demomodels.result_merger(
        {
            "db-employees": demomodels.MODELS["face-db-employees"](features),
            "db-visitors": demomodels.MODELS["face-db-visitors"](features),
        }
    )


def test_every_demo_graph_runs_to_the_expected_body_and_trace(
    worker: Any, demo_graphs: list, api: APIClient
) -> None:
    dog = {"instances": [{"animal": "dog", "image": "rex.jpg"}]}
    cat = {"instances": [{"animal": "cat", "image": "tom.jpg"}]}
    face = demo.demo_request("face-recognition")
    cases = [
        (
            "face-recognition",
            face,
            None,
            face_recognition_expected(face),
            ["root/0", "root/1", "root/2", "match#1/0", "match#1/1", "root/3"],
        ),
        ("cat-dog-breed", dog, None, demomodels.MODELS["dog-breed-classifier"](dog), ["root/0", "root/1"]),
        ("cat-dog-breed", cat, None, {"predictions": ["cat"]}, ["root/0", "root/1"]),
        ("animal-switch", cat, None, demomodels.MODELS["cat-breed-classifier"](cat), ["root/0"]),
        ("animal-switch", dog, None, demomodels.MODELS["dog-breed-classifier"](dog), ["root/1"]),
        ("canary", {"instances": [{"text": "hi"}]}, 5, None, None),
    ]
    started = [
        (start(api, name, payload, **({"seed": seed} if seed is not None else {}))["id"], case)
        for case in cases
        for name, payload, seed, *_ in [case]
    ]
    for run_id, (name, _payload, seed, expected, call_ids) in started:
        wait_for_run(run_id)
        body = api.get(f"/api/runs/{run_id}/").json()
        assert body["status"] == "succeeded", (name, body["error"], body["steps"])
        assert body["response"]["status_code"] == 200
        if name == "canary":
            draw = random.Random(seed).randrange(100)
            version = "v1" if draw < 90 else "v2"
            assert body["response"]["body"]["predictions"][0]["model_version"] == version
            assert body["steps"][0]["route"]["draw"] == draw
            continue
        assert body["response"]["body"] == expected, name
        assert [s["call_id"] for s in body["steps"]] == call_ids, name
        assert all(s["attempt"] == 1 for s in body["steps"])
    face_run = api.get(f"/api/runs/{started[0][0]}/").json()
    assert face_run["steps"][2]["kind"] == "node" and face_run["steps"][3]["parent_call_id"] == "root/2"
    assert face_run["steps"][1]["request"]["body"] == face_run["steps"][0]["response"]["body"]  # $response


def test_the_event_stream_delivers_every_event_in_order_live_and_resumes(
    worker: Any, demo_graphs: list, api: APIClient, mock_server: Any
) -> None:
    slow_env(mock_server, "slow", 150)
    run_id = start(api, "face-recognition", demo.demo_request("face-recognition"), environment="slow")["id"]
    response = api.get(f"/api/runs/{run_id}/events/", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    received = []
    arrival: dict[int, float] = {}
    for event in parse_sse(response.streaming_content):
        if "id" in event:
            received.append(event)
            arrival[int(event["id"])] = time.monotonic()
    run = Run.objects.get(pk=run_id)
    stored = list(RunEvent.objects.filter(run_id=run_id).values_list("seq", "type"))
    assert [(int(e["id"]), e["event"]) for e in received] == stored
    assert [s for s, _ in stored] == list(range(1, run.event_seq + 1))
    assert stored[0][1] == "run.queued" and stored[-1][1] == "run.finished"
    assert {"run.started", "node.started", "step.started", "step.finished", "node.finished"} <= {
        t for _, t in stored
    }
    # Live, not replayed at the end: the first step finished well before the run did.
    first_step = next(int(e["id"]) for e in received if e["event"] == "step.finished")
    assert arrival[stored[-1][0]] - arrival[first_step] > 0.3
    resumed = [
        e
        for e in parse_sse(api.get(f"/api/runs/{run_id}/events/", HTTP_LAST_EVENT_ID="5").streaming_content)
        if "id" in e
    ]
    assert [int(e["id"]) for e in resumed] == [s for s, _ in stored[5:]]


def test_a_stream_opened_mid_run_with_last_event_id_misses_nothing(
    worker: Any, demo_graphs: list, api: APIClient, mock_server: Any
) -> None:
    slow_env(mock_server, "slow2", 200)
    run_id = start(api, "face-recognition", demo.demo_request("face-recognition"), environment="slow2")["id"]
    wait_for_run(run_id, statuses=("running",))
    time.sleep(0.3)
    seen = RunEvent.objects.filter(run_id=run_id).count()
    events = [
        e for e in parse_sse(api.get(f"/api/runs/{run_id}/events/?last_event_id={seen}").streaming_content)
    ]
    ids = [int(e["id"]) for e in events if "id" in e]
    assert ids == list(range(seen + 1, Run.objects.get(pk=run_id).event_seq + 1))
    assert any("comment" in e for e in events) or len(ids) > 0


def test_cancelling_a_slow_run_stops_it_within_a_second(
    worker: Any, demo_graphs: list, api: APIClient, mock_server: Any
) -> None:
    slow_env(mock_server, "very-slow", 10_000)
    run_id = start(api, "cat-dog-breed", {"instances": [{"animal": "dog"}]}, environment="very-slow")["id"]
    deadline = time.monotonic() + 10
    while not RunStep.objects.filter(run_id=run_id, outcome="pending").exists():
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.02)
    asked = time.monotonic()
    assert api.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_for_run(run_id, timeout=5)
    took = time.monotonic() - asked
    assert run.status == "cancelled" and took < 1.5, took
    step = run.steps.get(call_id="root/0")
    assert step.outcome == "cancelled" and step.finished_at is not None
    types = list(RunEvent.objects.filter(run_id=run_id).values_list("type", flat=True))
    assert "run.cancel_requested" in types and types[-1] == "run.finished"
    assert RunEvent.objects.filter(run_id=run_id).last().data["status"] == "cancelled"


def test_a_hanging_step_hits_its_timeout(
    worker: Any, demo_graphs: list, api: APIClient, mock_server: Any
) -> None:
    slow_env(mock_server, "hanging", 30_000, step_timeout=0.5)
    began = time.monotonic()
    run_id = start(api, "canary", {"instances": [{"text": "x"}]}, environment="hanging")["id"]
    run = wait_for_run(run_id, timeout=10)
    assert time.monotonic() - began < 5
    assert run.status == "failed" and run.response_status == 500
    step = run.steps.get()
    assert step.outcome == "error" and "timeout" in step.error.lower(), step.error


def test_the_guard_refuses_metadata_addresses_before_connecting(
    worker: Any, demo_graphs: list, api: APIClient, user: Any
) -> None:
    graph_of(
        user,
        "metadata-probe",
        [
            {"name": "imds", "serviceUrl": "http://169.254.169.254/latest/meta-data/"},
            {"name": "decimal", "serviceUrl": "http://2852039166/latest/meta-data/"},
        ],
        router="Ensemble",
    )
    Environment.objects.filter(name="local").update(allow_private=True, allow_networks=["0.0.0.0/0"])
    run = wait_for_run(start(api, "metadata-probe", {})["id"])
    assert run.status == "failed" and run.response_status == 500
    errors = {s.step_name: s.error for s in run.steps.all() if s.outcome == "error"}
    # The metadata address is the guard's to refuse; the decimal spelling of it Go's dialer refuses
    # itself (neither an IP address nor a domain name to Go), as KServe does. Neither connects.
    assert "blocked by URL guard" in errors["imds"] and "metadata" in errors["imds"], errors
    assert errors["decimal"].endswith("dial tcp: lookup 2852039166: no such host"), errors
    assert all(s.status_code is None for s in run.steps.all())


def test_secret_headers_reach_the_step_but_never_the_database(
    worker: Any, demo_graphs: list, api: APIClient, user: Any
) -> None:
    graph_of(user, "headers", [{"serviceName": "echo-headers"}])
    secret = "Bearer top-s3cret-token"
    run_id = start(api, "headers", {}, headers={"Authorization": secret, "X-Request-Id": "req-1"})["id"]
    run = wait_for_run(run_id)
    got = json.loads(run.response_body)["headers"]
    assert got["authorization"] == "sha256:" + hashlib.sha256(secret.encode()).hexdigest()[:16]
    assert got["x-request-id"] == "req-1"
    dumped = json.dumps(
        [
            run.request_headers,
            list(RunEvent.objects.filter(run=run).values_list("data", flat=True)),
            list(RunStep.objects.filter(run=run).values_list("request_headers", flat=True)),
        ]
    )
    assert "top-s3cret" not in dumped and "Bearer ***" in dumped


def test_a_dead_worker_leaves_no_run_stuck(
    worker: Any, demo_graphs: list, user: Any, monkeypatch: Any
) -> None:
    """A claimed run whose worker was asked to stop and then fell silent is requeued once (attempt 2
    runs on the real worker), and failed with a reason when its last attempt dies too."""
    graph = graph_services.graph_create(
        owner=user,
        name="dead-worker",
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "dead-worker"},
            "spec": {
                "nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "success-200"}]}}
            },
        },
    )
    monkeypatch.setattr(run_tasks, "enqueue", lambda run: None)  # the message of attempt 1 is "lost"
    started = [
        runs.run_create(graph=graph, version=graph.latest_version, user=user, payload={})[0] for _ in range(2)
    ]
    monkeypatch.undo()
    stale = timezone.now() - timedelta(seconds=30)
    for run, attempt in zip(started, (1, 2), strict=True):  # a worker claimed it, then died
        Run.objects.filter(pk=run.pk).update(
            status="running", attempt=attempt, started_at=stale, heartbeat_at=stale
        )
        RunStep.objects.create(run=run, attempt=attempt, call_id="root/0")
        events.emit(run.pk, STOP_ANNOUNCED, {"attempt": attempt, "reason": "SIGTERM"})
    report = reaper.reap_runs()
    assert report.requeued == [str(started[0].pk)] and report.failed == [str(started[1].pk)]
    again = wait_for_run(started[0].pk)
    assert again.status == "succeeded" and again.attempt == 2
    assert sorted(again.steps.values_list("attempt", "outcome")) == [(1, "error"), (2, "ok")]
    dead = Run.objects.get(pk=started[1].pk)
    assert dead.status == "failed" and "stopped responding" in dead.error


def test_concurrent_runs_are_isolated(worker: Any, demo_graphs: list, api: APIClient) -> None:
    payloads = [{"instances": [{"image": f"cam-{i}.jpg"}]} for i in range(6)]
    ids = [start(api, "face-recognition", p)["id"] for p in payloads]  # the worker runs 4 at a time
    for run_id, payload in zip(ids, payloads, strict=True):
        assert json.loads(wait_for_run(run_id, timeout=20).response_body) == face_recognition_expected(
            payload
        )
