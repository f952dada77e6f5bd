"""Fixtures shared by the Django-side tests: users, authenticated API clients, manifests."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

# Django and DRF are imported inside the fixtures: the pure-core suites (tests/graphs/spec,
# tests/engine) share this conftest and must run without Django settings (-p no:django).

SEQUENCE_MANIFEST: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "model-chainer"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "sklearn-iris", "serviceName": "sklearn-iris"},
                    {"name": "xgboost-iris", "serviceName": "xgboost-iris", "data": "$request"},
                ],
            }
        }
    },
}


@pytest.fixture
def manifest() -> dict[str, Any]:
    """A valid two-step Sequence (KServe's docs/samples/graph/sequence.yaml)."""
    return copy.deepcopy(SEQUENCE_MANIFEST)


@pytest.fixture
def user(db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("bob", password="bob-password-1")


def client_for(user: Any) -> Any:
    """An APIClient authenticated with ``user``'s DRF token."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api(user: Any) -> Any:
    """An API client authenticated as ``alice`` with a DRF token."""
    return client_for(user)


@pytest.fixture
def bob_api(other_user: Any) -> Any:
    return client_for(other_user)


@pytest.fixture
def anon() -> Any:
    from rest_framework.test import APIClient

    return APIClient()


# ---- the run stack: real Redis, Celery worker and mock model server on loopback ------------------
# Shared by tests/integration and tests/e2e (one of each per session). tests/execution overrides
# ``redis_url``, ``mock_server`` and ``run_settings`` with its own (no worker there).


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    from execution.devtools import localredis

    port = free_port()
    proc = localredis.start(port)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def mock_server() -> Iterator[Any]:
    from execution.devtools import mockmodels

    server = mockmodels.serve_in_thread()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def run_settings(redis_url: str, mock_server: Any) -> Iterator[None]:
    """Point the broker and the event fan-out at the test Redis; make heartbeats and streams quick."""
    from django.test import override_settings

    with override_settings(
        RUN_EVENTS_REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        MOCKMODELS_URL=mock_server.url,
        RUN_HEARTBEAT_SECONDS=0.2,
        RUN_HEARTBEAT_TIMEOUT=2.0,
        RUN_QUEUED_TIMEOUT=5.0,
        RUN_SSE_KEEPALIVE_SECONDS=0.5,
        RUN_SSE_POLL_SECONDS=0.2,
        RUN_DEADLINE_GRACE=2.0,
    ):
        yield


@pytest.fixture(scope="session")
def celery_app(run_settings: None, redis_url: str) -> Any:
    from config.celery_app import app

    app.conf.update(broker_url=redis_url, broker_connection_retry_on_startup=False, task_always_eager=False)
    return app


@pytest.fixture(scope="session")
def worker(celery_app: Any, django_db_setup: Any, django_db_blocker: Any) -> Iterator[Any]:
    """A real Celery worker (threads pool) consuming from the test Redis."""
    from celery.contrib.testing.worker import start_worker

    import deploys.tasks  # noqa: F401 - registers the tasks with the app
    import execution.tasks  # noqa: F401

    with (
        django_db_blocker.unblock(),
        start_worker(
            celery_app,
            pool="threads",
            concurrency=4,
            perform_ping_check=False,
            loglevel="WARNING",
            shutdown_timeout=30,
        ) as w,
    ):
        yield w


# ---- runs without a worker (service and API tests) ---------------------------------------------


@pytest.fixture
def quick_run_settings(settings: Any, redis_url: str, mock_server: Any) -> None:
    """The session's Redis for events and secret headers, its mock model server, quick heartbeats
    and streams; for service and API tests that run without a worker (with :func:`enqueued`)."""
    settings.RUN_EVENTS_REDIS_URL = redis_url
    settings.MOCKMODELS_URL = mock_server.url
    settings.RUN_HEARTBEAT_SECONDS = 0.2
    settings.RUN_SSE_KEEPALIVE_SECONDS = 0.5
    settings.RUN_SSE_POLL_SECONDS = 0.1


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every task message the services send, instead of sending it: ``[{"args", "kwargs"}]``."""
    from execution.services import dispatch as run_tasks
    from execution.tasks.runs import run_graph_task

    # No broker to ask, either: whatever Redis the default broker URL finds is none of the test's.
    monkeypatch.setattr(run_tasks, "broker_started_at", lambda: None)
    monkeypatch.setattr(run_tasks, "broker_queue_empty", lambda: None)
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(
        run_graph_task,
        "apply_async",
        lambda args=None, kwargs=None, **options: sent.append(
            {"args": args, "kwargs": kwargs, "options": options}
        ),
    )
    return sent


@pytest.fixture
def local_env(db: Any, mock_server: Any) -> Any:
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


@pytest.fixture
def graph(user: Any, manifest: dict[str, Any]) -> Any:
    """``model-chainer`` (tests/conftest.py's manifest) owned by alice, version 1."""
    from graphs import services as graph_services

    return graph_services.graph_create(owner=user, manifest=manifest)


# ---- the demo's real models: KServe's model server with models/ on loopback (one per session) ---


@pytest.fixture(scope="session")
def real_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of models/server.py, started with .venv-models' interpreter as `make run` starts it
    (skipped where that virtualenv is missing, failed in CI: tests/modelkit.py)."""
    from modelkit import model_server

    with model_server(tmp_path_factory.mktemp("models") / "server.log") as url:
        yield url
