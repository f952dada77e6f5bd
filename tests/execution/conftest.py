"""Fixtures of the execution API and service tests: a real Redis (event fan-out, secret headers) and
the real mock model server on loopback; the broker is replaced by a recorder of enqueued run ids,
because no worker runs here (the integration tests have one)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from execution import localredis, mockmodels


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    port = _free_port()
    proc = localredis.start(port)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def mock_server() -> Iterator[mockmodels.MockModelServer]:
    server = mockmodels.serve_in_thread()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def run_settings(settings: Any, redis_url: str, mock_server: mockmodels.MockModelServer) -> None:
    settings.RUN_EVENTS_REDIS_URL = redis_url
    settings.MOCKMODELS_URL = mock_server.url
    settings.RUN_HEARTBEAT_SECONDS = 0.2
    settings.RUN_SSE_KEEPALIVE_SECONDS = 0.5
    settings.RUN_SSE_POLL_SECONDS = 0.1


@pytest.fixture(autouse=True)
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every task message the services send, instead of sending it: ``[{"args", "kwargs"}]``."""
    from execution.tasks import run_graph_task

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
def local_env(db: Any, mock_server: mockmodels.MockModelServer) -> Any:
    from execution import services

    environment, _ = services.ensure_local_environment()
    return environment


@pytest.fixture
def graph(user: Any, manifest: dict[str, Any]) -> Any:
    """``model-chainer`` (tests/conftest.py's manifest) owned by alice, version 1."""
    from graphs import services as graph_services

    return graph_services.graph_create(owner=user, manifest=manifest)
