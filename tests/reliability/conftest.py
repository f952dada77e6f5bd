"""Fault-injection fixtures: a Redis that can be restarted on the same port, real Celery worker
*processes* (``celery -A config.celery_app worker --pool=threads``) that can be SIGKILLed, the real
mock model server, tiny hostile step servers, and a recorder of the figures ``make reliability``
prints (bench/reliability.py). Everything listens on loopback only.

The worker processes share the test database with this process, so tests that use them need
``@pytest.mark.django_db(transaction=True)`` (rows must be committed to be seen) and a database a
second process can open: config/test_settings.py puts SQLite's test database in a file, whose path
(``connection.settings_dict["NAME"]``) goes to the worker as ``DATABASE_URL``; on PostgreSQL the
worker gets the test database's name the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    HEARTBEAT_SECONDS,
    HEARTBEAT_TIMEOUT,
    QUEUED_TIMEOUT,
    RedisServer,
    WorkerProcess,
    database_url,
    point_producer,
)

# --- figures for make reliability ----------------------------------------------------------------


@pytest.fixture(scope="session")
def record_figure() -> Callable[[str, Any], None]:
    """``record_figure(name, value)``: append a measurement to ``$RELIABILITY_FIGURES`` (JSON lines).

    Tests never assert speed (docs/architecture.md, "Tests and figures"); they only hand what they
    measured to the report.
    Without the variable, nothing is written.
    """
    target = os.environ.get("RELIABILITY_FIGURES")

    def record(name: str, value: Any) -> None:
        if target:
            with open(target, "a", encoding="utf-8") as out:
                out.write(json.dumps({"name": name, "value": value}) + "\n")

    return record


@pytest.fixture(scope="session")
def fault_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def fault_mock() -> Iterator[Any]:
    from execution.devtools import mockmodels

    server = mockmodels.serve_in_thread()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fault_settings(settings: Any, fault_redis: RedisServer, fault_mock: Any) -> Iterator[Any]:
    """This process talks to the fault Redis (broker and events) with the fast timeouts."""
    from config.celery_app import app

    settings.RUN_EVENTS_REDIS_URL = fault_redis.url
    settings.CELERY_BROKER_URL = fault_redis.url
    settings.MOCKMODELS_URL = fault_mock.url
    settings.RUN_HEARTBEAT_SECONDS = HEARTBEAT_SECONDS
    settings.RUN_HEARTBEAT_TIMEOUT = HEARTBEAT_TIMEOUT
    settings.RUN_QUEUED_TIMEOUT = QUEUED_TIMEOUT
    settings.RUN_DEADLINE_GRACE = 2.0
    previous = app.conf.broker_url
    point_producer(app, fault_redis.url)
    try:
        yield settings
    finally:
        point_producer(app, previous)


@pytest.fixture
def worker_env(fault_settings: Any, fault_redis: RedisServer, fault_mock: Any) -> dict[str, str]:
    """The environment of a worker process: this test's database, the fault Redis, fast beats."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "RUN_", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_SECRET_KEY="test-only-key-not-secret",
        DJANGO_DEBUG="0",
        DJANGO_LOG_LEVEL="WARNING",
        DATABASE_URL=database_url(),
        REDIS_URL=fault_redis.url,
        CELERY_BROKER_URL=fault_redis.url,
        RUN_EVENTS_REDIS_URL=fault_redis.url,
        MOCKMODELS_URL=fault_mock.url,
        RUN_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
        RUN_HEARTBEAT_TIMEOUT=str(HEARTBEAT_TIMEOUT),
        RUN_QUEUED_TIMEOUT=str(QUEUED_TIMEOUT),
        RUN_DEADLINE_GRACE="2",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def start_worker(worker_env: dict[str, str]) -> Iterator[Callable[..., WorkerProcess]]:
    """``start_worker(concurrency=4, launcher=None, **env)`` starts a worker process (``launcher``:
    see WorkerProcess; ``env``: more environment variables); every one is stopped afterwards."""
    started: list[WorkerProcess] = []

    def start(concurrency: int = 4, launcher: Path | None = None, **env: str) -> WorkerProcess:
        worker = WorkerProcess({**worker_env, **env}, concurrency, launcher).start()
        started.append(worker)
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.stop()
        for worker in started:
            worker.log.unlink(missing_ok=True)


# --- runs ----------------------------------------------------------------------------------------


@pytest.fixture
def make_graph(user: Any) -> Callable[..., Any]:
    """``make_graph(name, steps, router="Sequence")`` saves a one-node graph owned by ``user``."""
    from graphs import services as graph_services

    def make(name: str, steps: list[dict[str, Any]], router: str = "Sequence") -> Any:
        return graph_services.graph_create(
            owner=user,
            manifest={
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "InferenceGraph",
                "metadata": {"name": name},
                "spec": {"nodes": {"root": {"routerType": router, "steps": steps}}},
            },
        )

    return make


@pytest.fixture
def start_run(user: Any, fault_settings: Any) -> Callable[..., Any]:
    """``start_run(graph, environment, payload={})`` queues a run through the real service."""
    from execution.services import runs

    def start(graph: Any, environment: Any, payload: Any = None) -> Any:
        run, _ = runs.run_create(
            graph=graph,
            version=graph.latest_version,
            user=user,
            payload=payload if payload is not None else {"instances": [{"text": "hi"}]},
            environment=environment,
        )
        return run

    return start
