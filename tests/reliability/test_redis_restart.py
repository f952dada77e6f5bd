"""Redis crashing and coming back mid-run: workers consume again and no run is lost.

Redis runs without persistence (as ``make run`` and the compose file start it), so a crash loses
every message it held. The database is the source of truth: runs in flight finish, and runs whose
message was lost (queued in Redis at the crash, or created while Redis was down) are re-sent by
the reaper and complete.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from faultkit import QUEUED_TIMEOUT, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

CONSUME_AGAIN_LIMIT = 30.0  # seconds: the requirement for workers after a Redis restart
STEP_LATENCY_MS = 600


def test_a_redis_restart_mid_run_loses_no_run_and_workers_consume_again(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, fault_redis: Any, record_figure: Any
) -> None:
    from execution.models import Environment, Run, RunEvent
    from execution.services import reaper

    graph = make_graph("redis-restart", [{"serviceName": "success-200"}, {"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="slow-redis",
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=fault_mock.url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_LATENCY_MS),
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    worker = start_worker(concurrency=2)
    warm = start_run(graph, environment)
    wait_until(
        lambda: Run.objects.get(pk=warm.pk).status == "succeeded",
        timeout=60,
        what=f"the first run on a fresh worker\n{worker.log_tail()}",
    )

    # Two runs fill the worker's two slots; a third waits in Redis's queue.
    in_flight = [start_run(graph, environment).pk for _ in range(2)]
    wait_until(
        lambda: Run.objects.filter(pk__in=in_flight, status="running").count() == 2,
        timeout=20,
        what="two runs in flight",
    )
    queued_in_redis = start_run(graph, environment).pk

    fault_redis.stop()
    down_while_created = start_run(graph, environment).pk  # its message cannot be sent
    time.sleep(1.5)  # the in-flight runs finish (and fail to ack) while Redis is down
    fault_redis.start()
    back = time.monotonic()

    after_restart = start_run(graph, environment).pk
    consumed = wait_until(
        lambda: Run.objects.filter(pk=after_restart).exclude(status="queued").exists() and time.monotonic(),
        timeout=CONSUME_AGAIN_LIMIT,
        interval=0.05,
        what=f"the worker consuming a new run after the restart\n{worker.log_tail()}",
    )
    record_figure("redis_restart_consume_again_s", round(consumed - back, 2))

    everything = [*in_flight, queued_in_redis, down_while_created, after_restart]
    deadline = time.monotonic() + QUEUED_TIMEOUT + 30
    while Run.objects.filter(pk__in=everything).exclude(status__in=Run.TERMINAL).exists():
        assert time.monotonic() < deadline, list(
            Run.objects.filter(pk__in=everything).values_list("pk", "status", "requeues")
        )
        reaper.reap_runs()  # what beat does every RUN_REAPER_SECONDS
        time.sleep(0.25)
    record_figure("redis_restart_runs_recovered", f"{len(everything)}/{len(everything)}")

    runs = {run.pk: run for run in Run.objects.filter(pk__in=everything)}
    assert all(run.status == "succeeded" for run in runs.values()), {
        pk: (run.status, run.error) for pk, run in runs.items()
    }
    # The two whose message died with Redis were re-sent by the reaper, once, and ran once.
    for pk in (queued_in_redis, down_while_created):
        assert runs[pk].requeues == 1 and runs[pk].attempt == 1, (runs[pk].requeues, runs[pk].attempt)
        assert RunEvent.objects.filter(run_id=pk, type="run.requeued").count() == 1
    for pk in (*in_flight, after_restart):
        assert runs[pk].requeues == 0 and runs[pk].attempt == 1
    assert worker.alive()
