"""Stopping the worker process mid-run the way an operator or Kubernetes does, twenty times: no run
is lost or stuck.

Each round starts slow runs on a real worker process, sends it SIGTERM while every run is in its
first step (the worker records on each run that it was asked to stop), then SIGKILLs it before the
runs finish, as a termination grace period running out would. A fresh worker starts and the
reaper runs the way beat would (every 0.25 s): it requeues the silent runs, the new worker runs
them again as attempt 2, and every run ends. (A worker that dies *without* being asked to stop may
have been crashed by its run: tests/reliability/test_poison_run.py.)
"""

from __future__ import annotations

import signal
import statistics
import time
from typing import Any

import pytest
from faultkit import HEARTBEAT_TIMEOUT, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

KILLS = 20
RUNS_PER_KILL = 2
STEP_LATENCY_MS = 500  # long enough that a kill lands mid-step, short enough for 20 rounds
# A killed run must be settled by this long after the kill: the heartbeat timeout, a new worker's
# start (about 2 s here) and attempt 2 itself (two steps), with room for a busy machine.
SETTLE_DEADLINE = HEARTBEAT_TIMEOUT + 25.0


def _in_first_step(run_ids: list[Any]) -> bool:
    from execution.models import Run, RunStep

    running = Run.objects.filter(pk__in=run_ids, status="running").count()
    in_flight = RunStep.objects.filter(
        run_id__in=run_ids, attempt=1, call_id="root/0", outcome="pending"
    ).count()
    return running == len(run_ids) and in_flight == len(run_ids)


def _stop_announced(run_ids: list[Any]) -> bool:
    from execution.models import RunEvent
    from execution.services import worker

    marked = RunEvent.objects.filter(run_id__in=run_ids, type=worker.STOP_ANNOUNCED, data__attempt=1)
    return marked.count() == len(run_ids)


def _reap_until_settled(run_ids: list[Any], timeout: float) -> None:
    """Call the reaper every 0.25 s (beat's job) until every run is terminal."""
    from execution.models import Run
    from execution.services import reaper

    deadline = time.monotonic() + timeout
    while Run.objects.filter(pk__in=run_ids).exclude(status__in=Run.TERMINAL).exists():
        if time.monotonic() > deadline:
            stuck = list(
                Run.objects.filter(pk__in=run_ids)
                .exclude(status__in=Run.TERMINAL)
                .values_list("pk", "status", "attempt")
            )
            raise AssertionError(f"runs still not settled {timeout} s after the kill: {stuck}")
        reaper.reap_runs()
        time.sleep(0.25)


def test_twenty_worker_stops_mid_run_leave_no_run_stuck_and_rerun_as_attempt_two(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, record_figure: Any
) -> None:
    from execution.models import Environment, Run, RunStep

    graph = make_graph("killed-worker", [{"serviceName": "success-200"}, {"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="slow-kill",
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=fault_mock.url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_LATENCY_MS),
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    worker = start_worker()
    all_runs: list[Any] = []
    settle_times: list[float] = []
    for round_no in range(KILLS):
        run_ids = [start_run(graph, environment).pk for _ in range(RUNS_PER_KILL)]
        all_runs += run_ids
        wait_until(
            lambda run_ids=run_ids: _in_first_step(run_ids),
            timeout=30,
            what=f"round {round_no}: runs in their first step\n{worker.log_tail()}",
        )
        worker.send(signal.SIGTERM)
        wait_until(
            lambda run_ids=run_ids: _stop_announced(run_ids),
            timeout=10,
            what=f"round {round_no}: the worker records that it was asked to stop\n{worker.log_tail()}",
        )
        killed = time.monotonic()
        worker.kill()
        worker = start_worker()  # boots while the reaper waits out the heartbeat timeout
        _reap_until_settled(run_ids, SETTLE_DEADLINE)
        settle_times.append(time.monotonic() - killed)
        stopped = worker.log_tail()
        for run in Run.objects.filter(pk__in=run_ids):
            assert run.status == "succeeded", (round_no, run.status, run.error, stopped)
            assert run.attempt == 2, (round_no, run.attempt)
    assert len(all_runs) == KILLS * RUNS_PER_KILL
    assert not Run.objects.filter(pk__in=all_runs).exclude(status__in=Run.TERMINAL).exists()
    # The re-executed steps are there as a second attempt; the first attempt's in-flight step was
    # closed by the reaper with the reason, none is left pending.
    steps = RunStep.objects.filter(run_id__in=all_runs)
    assert steps.filter(attempt=2, outcome="ok").count() == 2 * len(all_runs)
    assert steps.filter(attempt=1, call_id="root/0", outcome="error").count() == len(all_runs)
    assert not steps.filter(outcome="pending").exists()
    reasons = set(steps.filter(attempt=1, outcome="error").values_list("error", flat=True))
    assert all("stopped responding" in reason for reason in reasons), reasons
    record_figure("reaper_settle_median_s", round(statistics.median(settle_times), 2))
    record_figure("reaper_settle_max_s", round(max(settle_times), 2))
    record_figure("worker_kills", KILLS)
    record_figure("killed_runs_settled", len(all_runs))
