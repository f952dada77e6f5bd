"""Fixtures of the execution API and service tests: the session's real Redis (event fan-out, secret
headers) and mock model server from tests/conftest.py; the broker is replaced by a recorder of
enqueued run ids, because no worker runs here (the integration tests have one)."""

from __future__ import annotations

from typing import Any

import pytest

from execution import mockmodels


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
    from execution.tasks.runs import run_graph_task

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
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


@pytest.fixture
def graph(user: Any, manifest: dict[str, Any]) -> Any:
    """``model-chainer`` (tests/conftest.py's manifest) owned by alice, version 1."""
    from graphs import services as graph_services

    return graph_services.graph_create(owner=user, manifest=manifest)
