"""Runs executed at the same time by one worker have their writes committed together
(execution/services/writes.py); each run's event stream still delivers every event of that run,
in order, once, live, and its steps agree with its events."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from runhelpers import parse_sse, wait_for_run

from execution import demo
from execution.models import Environment, Run, RunEvent, RunStep

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_concurrent_runs_stream_every_event_in_order_while_their_writes_are_grouped(
    worker: Any, demo_graphs: list, api: APIClient, user: Any, mock_server: Any
) -> None:
    Environment.objects.create(
        name="grouped",
        visibility="shared",
        url_template=mock_server.url + "/v1/models/{name}:predict?latency_ms=60",
        allow_loopback=True,
    )
    ids = []
    for _ in range(4):  # the session worker runs 4 at a time: their step events land together
        response = api.post(
            "/api/graphs/face-recognition/runs/",
            {"payload": demo.demo_request("face-recognition"), "environment": "grouped"},
            format="json",
        )
        assert response.status_code == 202
        ids.append(response.json()["id"])
    streams: dict[str, list[tuple[int, str, float]]] = {}

    token = Token.objects.get(user=user).key

    def follow(run_id: str) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        response = client.get(f"/api/runs/{run_id}/events/", HTTP_ACCEPT="text/event-stream")
        streams[run_id] = [
            (int(e["id"]), e["event"], time.time())
            for e in parse_sse(response.streaming_content)
            if "id" in e
        ]

    followers = [threading.Thread(target=follow, args=(run_id,)) for run_id in ids]
    for thread in followers:
        thread.start()
    for thread in followers:
        thread.join(30)
    for run_id in ids:
        run = wait_for_run(run_id)
        assert run.status == "succeeded", run.error
        stored = list(RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("seq", "type"))
        assert [seq for seq, _ in stored] == list(range(1, run.event_seq + 1))
        assert [(seq, kind) for seq, kind, _ in streams[run_id]] == stored
        assert stored[-1][1] == "run.finished"
        finished = [t for seq, kind, t in streams[run_id] if kind == "step.finished"]
        # live: the first step's end reached the stream before the run was over (not replayed after)
        assert run.finished_at is not None and finished[0] < run.finished_at.timestamp()
        rows = {row.call_id: row.outcome for row in RunStep.objects.filter(run_id=run_id)}
        ends = RunEvent.objects.filter(run_id=run_id, type="step.finished").values_list("data", flat=True)
        assert {data["call_id"]: data["outcome"] for data in ends} == rows
        assert set(rows.values()) == {"ok"}
    assert Run.objects.filter(pk__in=ids, status="succeeded").count() == len(ids)
