"""A run that crashes its worker (a poison run) ends failed after that first crash: the reaper does
not requeue it into a second worker, which keeps running other runs (security issue #16, item 1).

The worker is tests/reliability/crashworker.py: a real Celery worker process that dies of SIGSEGV
when a step answers a marked body. A worker that is asked to stop (SIGTERM) and then killed is the
other case, tests/reliability/test_worker_kill.py: its runs are retried.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import stepserver, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

CRASHWORKER = Path(__file__).resolve().parent / "crashworker.py"
# Unacked task messages come back this many seconds after their worker died (Redis transport's
# visibility timeout), so the test also sees the poison run's message delivered again.
VISIBILITY_TIMEOUT_S = 2


@pytest.fixture
def step_server() -> Iterator[Any]:
    from crashworker import POISON

    with stepserver.StepServer() as server:
        # Answered after a moment: the step is stored as started (in flight) before the answer kills
        # the worker, as a slow model would leave it; an instant answer may come in the same batch.
        server.route("/poison", stepserver.Reply(body=POISON.encode(), content_type="text/plain", delay=0.3))
        server.route("/ok", stepserver.Reply(json={"predictions": [1]}))
        yield server


def test_a_run_that_crashes_its_worker_fails_after_the_first_crash_and_is_never_requeued(
    start_worker: Any, start_run: Any, make_graph: Any, step_server: Any, record_figure: Any
) -> None:
    from execution.models import Environment, Run, RunStep
    from execution.services import reaper

    environment = Environment.objects.create(
        name="poison", visibility="shared", allow_loopback=True, step_timeout=10, deadline=30
    )
    poison = make_graph("poison", [{"name": "poison", "serviceUrl": step_server.url("/poison")}])
    healthy = make_graph("healthy", [{"name": "ok", "serviceUrl": step_server.url("/ok")}])
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S)}
    first = start_worker(launcher=CRASHWORKER, **env)
    run = start_run(poison, environment)
    wait_until(
        lambda: not first.alive(), timeout=60, what=f"the poison run to crash its worker\n{first.log_tail()}"
    )
    assert first.proc is not None and first.proc.returncode == -signal.SIGSEGV, first.log_tail()
    assert Run.objects.get(pk=run.pk).status == "running"  # claimed, and its worker is gone

    # A second worker, as crashable as the first: it would die too if the run came back to it.
    second = start_worker(launcher=CRASHWORKER, **env)
    deadline = time.monotonic() + 30
    while Run.objects.get(pk=run.pk).status == "running":  # beat's job, every 0.25 s
        assert time.monotonic() < deadline, "the reaper did not settle the crashed run"
        reaper.reap_runs()
        time.sleep(0.25)
    time.sleep(VISIBILITY_TIMEOUT_S * 3)  # let the unacked message come back and be refused

    settled = Run.objects.get(pk=run.pk)
    assert settled.status == "failed" and settled.attempt == 1, (settled.status, settled.attempt)
    assert "The worker running this run died" in settled.error and "not retried" in settled.error
    step = RunStep.objects.get(run=settled)
    assert step.attempt == 1 and step.outcome == "error" and "not retried" in step.error
    assert second.alive(), second.log_tail()
    after = start_run(healthy, environment)  # and the second worker still works
    wait_until(
        lambda: Run.objects.get(pk=after.pk).status in Run.TERMINAL,
        timeout=60,
        what=f"a healthy run on the second worker\n{second.log_tail()}",
    )
    assert Run.objects.get(pk=after.pk).status == "succeeded"
    crashes = sum(1 for worker in (first, second) if not worker.alive())
    assert crashes == 1
    record_figure("poison_run_worker_crashes", crashes)
