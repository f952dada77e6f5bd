"""The worker's liveness file (config/worker_liveness.py): a real ``celery worker`` process, as the
Kubernetes manifests start it, keeps the file fresh while its consumer runs.

The worker is a process of its own, not a worker thread inside the test process: a second Celery
worker started in one process inherits the first one's event loop (kombu's current hub), so what
its consumer's timer does there says nothing about a worker in a pod.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import override_settings
from faultkit import wait_until

from config import worker_liveness

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def test_a_worker_process_replaces_a_stale_file_and_keeps_it_fresh(start_worker: Any, tmp_path: Path) -> None:
    alive = tmp_path / "worker-alive"
    alive.touch()
    os.utime(alive, (1, 1))  # left by a previous container in the pod: must not count

    worker = start_worker(concurrency=1, STUDIO_WORKER_ALIVE_FILE=str(alive))
    wait_until(
        lambda: alive.exists() and alive.stat().st_mtime > 1,
        timeout=60,
        what="the worker touches its alive file",
    )
    first = alive.stat().st_mtime_ns
    wait_until(
        lambda: alive.stat().st_mtime_ns > first,
        timeout=worker_liveness.ALIVE_FILE_INTERVAL * 3,
        what="the consumer's timer touches the file again",
    )
    assert worker.alive(), worker.log_tail()


def test_without_the_setting_the_step_is_off(tmp_path: Path) -> None:
    with override_settings(WORKER_ALIVE_FILE=""):
        step = worker_liveness.AliveFile(SimpleNamespace(), enabled=True)
    assert step.enabled is False and step.path is None
    with override_settings(WORKER_ALIVE_FILE=str(tmp_path / "alive")):
        step = worker_liveness.AliveFile(SimpleNamespace(), enabled=True)
    assert step.enabled is True
    step.touch()
    assert time.time() - (tmp_path / "alive").stat().st_mtime < 60
