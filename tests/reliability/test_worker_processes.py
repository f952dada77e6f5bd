"""Several worker processes on one database, as ``make run`` starts them (one per core), and a
worker killed while its runs' writes are in flight.

The writes of a worker's runs are committed in groups (execution/services/writes.py); on SQLite the
processes take turns on an advisory lock beside the database file. Two processes must share the
database without a "database is locked" error, and a worker killed at any moment must leave each
run's log whole: its events numbered 1..n without a gap, each stored step event with its step row
(a batch is committed whole or not at all), and a replay that shows every one of them in order.
"""

from __future__ import annotations

import os
import random
import signal
import time
from typing import Any

import pytest
from faultkit import HEARTBEAT_TIMEOUT, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

STEPS = 6  # many short steps: many writes per run


def _environment(mock: Any, name: str, latency_ms: int) -> Any:
    from execution.models import Environment

    return Environment.objects.create(
        name=name,
        visibility="shared",
        url_template=mock.url + "/v1/models/{name}:predict?latency_ms=" + str(latency_ms),
        allow_loopback=True,
        step_timeout=10,
        deadline=60,
    )


def _chain(make_graph: Any, name: str) -> Any:
    return make_graph(
        name, [{"serviceName": "echo"}] + [{"serviceName": "echo", "data": "$response"}] * (STEPS - 1)
    )


def _assert_whole_log(run: Any) -> list[tuple[int, str]]:
    """The run's stored events are 1..n in order, and its step rows agree with its step events."""
    from execution.models import RunEvent, RunStep

    stored = list(RunEvent.objects.filter(run_id=run.pk).order_by("seq").values_list("seq", "type", "data"))
    assert [seq for seq, _, _ in stored] == list(range(1, run.event_seq + 1)), run.pk
    started = {data["call_id"] for _, kind, data in stored if kind == "step.started"}
    finished = {data["call_id"]: data["outcome"] for _, kind, data in stored if kind == "step.finished"}
    rows = {row.call_id: row for row in RunStep.objects.filter(run=run, attempt=1)}
    assert started <= set(rows), (run.pk, started, set(rows))
    for call_id, outcome in finished.items():
        assert rows[call_id].outcome == outcome, (run.pk, call_id)
    # A step row whose step finished was written with its step.finished event, in the same batch.
    engine_done = {c for c, row in rows.items() if row.outcome == "ok"}
    assert engine_done <= set(finished), (run.pk, engine_done - set(finished))
    assert not [row for row in rows.values() if row.outcome == "pending"] or not run.is_terminal
    return [(seq, kind) for seq, kind, _ in stored]


def test_two_worker_processes_share_one_database_without_locked_errors(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any
) -> None:
    from execution.models import Run

    graph = _chain(make_graph, "two-workers")
    environment = _environment(fault_mock, "two-workers", 20)
    run_ids = [start_run(graph, environment).pk for _ in range(24)]  # queued before the workers start
    # A short busy timeout: two processes that wrote at the same moment would fail with "database
    # is locked" (and retry) instead of waiting on SQLite's lock; they must take turns instead.
    workers = [start_worker(concurrency=4, STUDIO_SQLITE_TIMEOUT="0.02") for _ in range(2)]
    wait_until(
        lambda: not Run.objects.filter(pk__in=run_ids).exclude(status__in=Run.TERMINAL).exists(),
        timeout=90,
        what="every run ends\n" + "\n".join(w.log_tail() for w in workers),
    )
    for run in Run.objects.filter(pk__in=run_ids):
        assert (run.status, run.attempt) == ("succeeded", 1), (run.pk, run.status, run.error)
        log = _assert_whole_log(run)
        assert log[0][1] == "run.queued" and log[-1][1] == "run.finished"
        assert [kind for _, kind in log].count("step.finished") == STEPS
    for worker in workers:
        assert worker.alive()
        assert "database is locked" not in worker.log_tail(200_000)


def test_a_worker_killed_mid_write_leaves_every_run_log_whole_and_replayable(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, user: Any
) -> None:
    from django.test import Client

    from execution.models import Run, RunEvent
    from execution.services import reaper

    graph = _chain(make_graph, "killed-mid-write")
    environment = _environment(fault_mock, "killed-mid-write", 5)
    worker = start_worker(concurrency=6)
    run_ids = [start_run(graph, environment).pk for _ in range(6)]
    wait_until(
        lambda: RunEvent.objects.filter(run_id__in=run_ids, type="step.finished").count() >= 6,
        timeout=30,
        what="the runs are under way\n" + worker.log_tail(),
    )
    time.sleep(random.Random(os.getpid()).uniform(0.0, 0.05))  # anywhere between two writes, or in one
    os.kill(worker.pid, signal.SIGKILL)
    assert worker.proc is not None
    worker.proc.wait(10)
    deadline = time.monotonic() + HEARTBEAT_TIMEOUT + 20
    while Run.objects.filter(pk__in=run_ids).exclude(status__in=Run.TERMINAL).exists():
        assert time.monotonic() < deadline, "runs not settled after the kill"
        reaper.reap_runs()
        time.sleep(0.25)
    client = Client()
    client.force_login(user)
    for run in Run.objects.filter(pk__in=run_ids):
        log = _assert_whole_log(run)
        assert log[-1][1] == "run.finished" and [k for _, k in log].count("run.finished") == 1
        replay = client.get(f"/api/runs/{run.pk}/events/?format=json")
        assert replay.status_code == 200
        body = replay.json()
        assert body["finished"] is True
        assert [(item["seq"], item["type"]) for item in body["events"]] == log
