"""Runs executed at the same time by one worker have their writes committed together
(execution/services/writes.py); each run's event stream still delivers every event of that run,
in order, once, while the run goes on, and its steps agree with its events."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from runhelpers import parse_sse, wait_for_run
from stepserver import Dynamic, Recorded, Reply, StepServer

from execution.models import Environment, Run, RunEvent, RunStep
from graphs import services as graph_services

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

RUNS = 4  # the session worker runs 4 at a time: their step events land together
GATE_SECONDS = 20.0


@pytest.fixture
def steps() -> Iterator[StepServer]:
    with StepServer() as server:
        yield server


def test_concurrent_runs_stream_every_event_in_order_while_their_writes_are_grouped(
    worker: Any, api: APIClient, user: Any, steps: StepServer
) -> None:
    # Every run's middle step waits until every stream has delivered its run's first step end: a
    # stream that held its events back, or replayed them only at the end, keeps the gate shut
    # (the steps then answer after GATE_SECONDS and the test fails), whatever the machine's load.
    seen_first_end: set[str] = set()
    gate = threading.Event()

    def wait_at_gate(_: Recorded) -> Reply:
        gate.wait(GATE_SECONDS)
        return Reply(json={"stage": "gate"})

    steps.route("/first", Reply(json={"stage": "first"}))
    steps.route("/gate", Dynamic(wait_at_gate))
    steps.route("/last", Reply(json={"stage": "last"}))
    Environment.objects.create(
        name="grouped", visibility="shared", url_template=steps.url("/{name}"), allow_loopback=True
    )
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "gated"},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"serviceName": name, "data": "$response"} for name in ("first", "gate", "last")
                        ],
                    }
                }
            },
        },
    )
    ids = []
    for _ in range(RUNS):
        response = api.post(
            "/api/graphs/gated/runs/", {"payload": {}, "environment": "grouped"}, format="json"
        )
        assert response.status_code == 202, response.json()
        ids.append(response.json()["id"])
    streams: dict[str, list[tuple[int, str]]] = {}
    lock = threading.Lock()
    token = Token.objects.get(user=user).key

    def follow(run_id: str) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        response = client.get(f"/api/runs/{run_id}/events/", HTTP_ACCEPT="text/event-stream")
        received = streams.setdefault(run_id, [])
        for event in parse_sse(response.streaming_content):
            if "id" not in event:
                continue
            received.append((int(event["id"]), event["event"]))
            if event["event"] == "step.finished":
                with lock:
                    seen_first_end.add(run_id)
                    if len(seen_first_end) == RUNS:
                        gate.set()

    followers = [threading.Thread(target=follow, args=(run_id,)) for run_id in ids]
    for thread in followers:
        thread.start()
    for thread in followers:
        thread.join(GATE_SECONDS + 30)
    assert gate.is_set(), f"only {len(seen_first_end)} of {RUNS} streams delivered a step end mid-run"
    for run_id in ids:
        run = wait_for_run(run_id)
        assert run.status == "succeeded", run.error
        stored = list(RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("seq", "type"))
        assert [seq for seq, _ in stored] == list(range(1, run.event_seq + 1))
        assert streams[run_id] == stored
        assert stored[-1][1] == "run.finished"
        rows = {row.call_id: row.outcome for row in RunStep.objects.filter(run_id=run_id)}
        ends = RunEvent.objects.filter(run_id=run_id, type="step.finished").values_list("data", flat=True)
        assert {data["call_id"]: data["outcome"] for data in ends} == rows
        assert set(rows.values()) == {"ok"} and len(rows) == 3
    assert Run.objects.filter(pk__in=ids, status="succeeded").count() == len(ids)
    assert len(steps.received("/gate")) == RUNS
