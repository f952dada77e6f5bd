"""Real Git servers on loopback (tests/gitservers.py) and deploy targets pointing at them.

The API tests deploy through the session's real Celery worker (tests/conftest.py ``worker``),
so they need ``@pytest.mark.django_db(transaction=True)``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gitservers import GitServers


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[GitServers]:
    with GitServers(tmp_path) as running:
        running.create("deploys")
        yield running


@pytest.fixture
def deploy_settings(settings: Any, servers: GitServers) -> None:
    settings.DEPLOY_FILE_ROOTS = [str(servers.root)]
    settings.DEPLOY_GIT_TIMEOUT = 10.0
    settings.DEPLOY_WAIT_SECONDS = 30.0


@pytest.fixture
def deploy_worker(deploy_settings: None, worker: Any) -> Any:
    return worker
