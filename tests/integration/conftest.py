"""Real parts on loopback for the integration tests: the session Redis server, Celery worker
(threads pool) and mock model server are shared with the browser tests and live in
``tests/conftest.py`` (``redis_url``, ``mock_server``, ``run_settings``, ``celery_app``,
``worker``). Tests that use them need ``@pytest.mark.django_db(transaction=True)``: the worker's
threads open their own database connections and must see committed rows.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def local_env(run_settings: None, db: Any) -> Any:
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


@pytest.fixture
def demo_graphs(run_settings: None, db: Any) -> list[str]:
    """The demo user, the local environment and the demo graphs, through ``demo.seed()``."""
    from execution.devtools import demo

    return list(demo.seed())
