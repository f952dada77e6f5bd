"""A busy database (SQLite's single write lock held by another process, as a long import did) must
not make a worker run a graph twice: its writes wait and retry instead of failing, and a worker that
does give up on its run stops the run's engine before it lets go (attack report item 7)."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from execution.services import environments, reaper, runs, worker
from graphs import services as graph_services
from tests.stepserver import Reply, StepServer

pytestmark = pytest.mark.django_db(transaction=True)

LOCK_AFTER = 0.3  # seconds into the run: the step call is in flight
LOCK_FOR = 1.5  # seconds: longer than the busy timeout below, shorter than the heartbeat timeout
BUSY_TIMEOUT_MS = 200  # SQLite's wait for the lock before "database is locked"


@pytest.fixture
def sqlite_only() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's single write lock is what this test holds")


@pytest.fixture
def slow_step() -> Iterator[StepServer]:
    with StepServer() as server:
        server.route("/slow", Reply(json={"predictions": [1]}, delay=1.0))
        yield server


def hold_write_lock(path: str, after: float, seconds: float) -> threading.Thread:
    """Another process's writer: takes SQLite's write lock ``after`` s from now for ``seconds``."""

    def hold() -> None:
        time.sleep(after)
        other = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            time.sleep(seconds)
            other.execute("COMMIT")
        finally:
            other.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


def test_a_locked_database_does_not_run_a_graph_twice(
    sqlite_only: None, slow_step: StepServer, user: Any, settings: Any
) -> None:
    settings.RUN_HEARTBEAT_SECONDS = 0.1
    environment = environments.environment_create(
        owner=user,
        name="slow",
        service_urls={"slow": slow_step.url("/slow")},
        allow_loopback=True,
    )
    graph = graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "slow-chain"},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "slow"}]}}},
        },
    )
    run, _ = runs.run_create(
        graph=graph, version=graph.latest_version, user=user, payload={"x": 1}, environment=environment
    )
    connection.ensure_connection()
    connection.connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    locker = hold_write_lock(connection.settings_dict["NAME"], LOCK_AFTER, LOCK_FOR)
    try:
        outcome = worker.run_execute(run_id=str(run.pk))
    finally:
        locker.join()
    assert outcome == "done"
    run.refresh_from_db()
    assert (run.status, run.attempt) == ("succeeded", 1)
    # Nothing left for the reaper to retry, and the model was called exactly once.
    later = timezone.now() + timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT + 1)
    assert reaper.reap_runs(now=later).requeued == []
    time.sleep(1.2)  # an orphaned engine would have called the model again by now
    assert len(slow_step.received("/slow")) == 1


def test_the_task_tries_a_busy_claim_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim that found the database locked is retried, not dropped until the reaper re-sends it."""
    from django.db import OperationalError

    from execution.tasks.runs import run_graph_task

    calls: list[str] = []

    def claim(*, run_id: str) -> str:
        calls.append(run_id)
        if len(calls) == 1:
            raise OperationalError("database is locked")
        return "done"

    monkeypatch.setattr(worker, "run_execute", claim)
    run_id = str(uuid.uuid4())  # a run id (the task then looks for the run's suite run: none)
    result = run_graph_task.apply(args=[run_id])
    assert result.get() == "done" and calls == [run_id, run_id]
