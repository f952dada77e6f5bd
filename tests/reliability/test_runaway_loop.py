"""A graph that loops (``root`` -> ``b`` -> ``root`` …, fed a new answer every round, so no cycle
is ever closed) on a real worker: the run ends at its deadline or at a per-run limit, its error
names the limit, the reaper never takes the busy worker's run for dead, and what the run stores
grows linearly with its step calls.

Before: such a run went on past its deadline, stored gigabytes (every event repeated the whole
call path) and grew its worker by gigabytes; its task thread, flooded by events, stopped beating
the heartbeat and the reaper failed it while it was still running.

The last test runs the loop under the default settings on the built-in mock model server, the run
that was seen, and hands its figures to ``make reliability``.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import stepserver

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

MB = 1024 * 1024
# Stored bytes (events and step rows) per step call of the loop: its events carry short bodies
# (under 200 bytes) and a short call id; a path in each id made this grow with the depth.
BYTES_PER_CALL_LIMIT = 4096


@pytest.fixture
def counter_server() -> Iterator[Any]:
    """A step server whose ``/next`` answers ``{"predictions": [n]}``, n counting its calls."""
    numbers = itertools.count(1)
    lock = threading.Lock()

    def answer(_recorded: Any) -> Any:
        with lock:
            n = next(numbers)
        return stepserver.Reply(json={"predictions": [n]})

    with stepserver.StepServer() as server:
        server.route("/next", stepserver.Dynamic(answer))
        yield server


def loop_graph(user: Any, name: str, url: str) -> Any:
    from graphs import services as graph_services

    def node(target: str) -> dict[str, Any]:
        return {
            "routerType": "Sequence",
            "steps": [
                {"name": "model", "serviceUrl": url},
                {"name": "next", "nodeName": target, "data": "$response"},
            ],
        }

    return graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": name},
            "spec": {"nodes": {"root": node("b"), "b": node("root")}},
        },
    )


def environment(deadline: float) -> Any:
    from execution.models import Environment

    return Environment.objects.create(
        name=f"loop-{deadline:g}",
        visibility="shared",
        allow_loopback=True,
        step_timeout=10,
        deadline=deadline,
    )


def follow(run: Any, worker: Any, *, timeout: float) -> tuple[Any, float]:
    """Wait for the run to end, calling the reaper all along (it must leave a live run alone);
    returns the ended run and how long it took from the claim."""
    from execution.models import Run
    from execution.services.reaper import reap_runs

    began = time.monotonic()
    while True:
        current = Run.objects.get(pk=run.pk)
        if current.status in Run.TERMINAL:
            break
        assert time.monotonic() - began < timeout, f"the loop did not end\n{worker.log_tail()}"
        report = reap_runs()
        assert str(run.pk) not in report.failed, f"the reaper failed a live run\n{worker.log_tail()}"
        time.sleep(0.1)
    assert current.finished_at is not None and current.started_at is not None
    took = (current.finished_at - current.started_at).total_seconds()
    return current, took


def stored_bytes(run: Any) -> int:
    from execution.models import RunEvent, RunStep

    events = sum(len(json.dumps(d)) for d in RunEvent.objects.filter(run=run).values_list("data", flat=True))
    steps = sum(len(json.dumps(row, default=str)) for row in RunStep.objects.filter(run=run).values())
    return events + steps


def test_a_loop_stops_at_the_step_call_cap_and_stores_linearly(
    start_worker: Any, start_run: Any, user: Any, counter_server: Any
) -> None:
    from execution.models import RunStep

    worker = start_worker(concurrency=2, RUN_MAX_STEP_CALLS="600")
    graph = loop_graph(user, "loop-cap", counter_server.url("/next"))
    run, _ = follow(start_run(graph, environment(60)), worker, timeout=120)
    assert run.status == "failed" and run.response_status == 500, (run.status, run.error)
    assert run.error == "stopped after 600 step calls (RUN_MAX_STEP_CALLS)"
    assert len(counter_server.received("/next")) <= 300  # every other call is a nodeName step
    calls = RunStep.objects.filter(run=run).count()
    assert calls == 600
    assert max(len(c) for c in RunStep.objects.filter(run=run).values_list("call_id", flat=True)) < 12
    per_call = stored_bytes(run) / calls
    assert per_call < BYTES_PER_CALL_LIMIT, per_call


def test_a_loop_stops_at_its_deadline_which_the_error_names(
    start_worker: Any, start_run: Any, user: Any, counter_server: Any
) -> None:
    worker = start_worker(concurrency=2)
    counter_server.route("/slow", stepserver.Reply(json={"predictions": [1]}))
    graph = loop_graph(user, "loop-deadline", counter_server.url("/next"))
    run, took = follow(start_run(graph, environment(3)), worker, timeout=60)
    assert run.status == "failed" and run.response_status == 504, (run.status, run.error)
    assert run.error.startswith("graph deadline of 3 s exceeded (deadline: the environment's deadline")
    # The deadline, plus at most the RUN_DEADLINE_GRACE (2 s here) and the last write.
    assert took < 3 + 2 + 2, took


def test_a_loop_stops_at_the_event_byte_cap(
    start_worker: Any, start_run: Any, user: Any, counter_server: Any
) -> None:
    worker = start_worker(concurrency=2, RUN_MAX_EVENT_BYTES=str(MB))
    graph = loop_graph(user, "loop-bytes", counter_server.url("/next"))
    run, _ = follow(start_run(graph, environment(60)), worker, timeout=120)
    assert run.status == "failed" and run.response_status == 500, (run.status, run.error)
    assert run.error == "stopped after its trace events passed 1 MiB (RUN_MAX_EVENT_BYTES)"
    assert stored_bytes(run) < 3 * MB


def _database_bytes() -> int:
    from django.db import connection

    name = str(connection.settings_dict["NAME"])
    return sum(os.path.getsize(p) for p in (name, name + "-wal") if Path(p).exists())


def test_the_runaway_loop_under_the_default_settings(
    start_worker: Any, start_run: Any, user: Any, fault_mock: Any, record_figure: Any, settings: Any
) -> None:
    """The run that was seen: the loop on the built-in mock model server (its ``echo`` model told
    to answer 503 with the request count, so every answer differs), with every run setting at its
    default, the heartbeat's too (the fault suite's 1.5 s silence would take a worker busy storing
    the flood on a loaded machine for dead). Measured for ``make reliability``: duration, step
    calls, database growth, the worker's memory after, and the time to read the events back
    through the API."""
    from django.db import connection
    from rest_framework.test import APIClient

    from execution.models import RunEvent, RunStep

    if connection.vendor == "sqlite":  # WAL is what the file database of runs uses (settings)
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    heartbeat = {"RUN_HEARTBEAT_SECONDS": 2.0, "RUN_HEARTBEAT_TIMEOUT": 20.0}  # config/settings.py
    for name, value in heartbeat.items():
        setattr(settings, name, value)  # the reaper this test calls
    worker = start_worker(concurrency=2, **{name: str(value) for name, value in heartbeat.items()})
    url = fault_mock.url.rstrip("/") + "/v1/models/echo:predict?error_status=503"
    graph = loop_graph(user, "runaway-loop", url)
    before = _database_bytes()
    run, took = follow(start_run(graph, environment(60)), worker, timeout=180)
    time.sleep(1.0)  # the worker returns freed memory after it stores the outcome
    rss_after = worker.rss_bytes()
    growth = _database_bytes() - before
    calls = RunStep.objects.filter(run=run).count()
    events = RunEvent.objects.filter(run=run).count()
    client = APIClient()
    client.force_authenticate(user)
    began = time.monotonic()
    answer = client.get(f"/api/runs/{run.pk}/events/?format=json")
    read_back = time.monotonic() - began
    assert answer.status_code == 200
    assert run.status == "failed", (run.status, run.error)
    assert "RUN_MAX_STEP_CALLS" in run.error or "RUN_MAX_EVENT_BYTES" in run.error or "deadline" in run.error
    record_figure("runaway_duration_s", round(took, 1))
    record_figure("runaway_step_calls", calls)
    record_figure("runaway_events", events)
    record_figure("runaway_stored_mb", round(stored_bytes(run) / MB, 1))
    record_figure("runaway_db_growth_mb", round(growth / MB, 1))
    record_figure("runaway_worker_rss_after_mb", round(rss_after / MB, 1))
    record_figure("runaway_events_read_s", round(read_back, 2))
    record_figure("runaway_error", run.error)
