"""Redis crashing and coming back mid-run: workers consume again and no run is lost.

Redis runs without persistence (as ``make run`` and the compose file start it), so a crash loses
every message it held. The database is the source of truth: runs in flight finish, and runs whose
message was lost (queued in Redis at the crash, or created while Redis was down) are sent again
within seconds of Redis coming back (the reaper, asked by the worker as it reconnects; the process
whose send Redis refused) and complete.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from faultkit import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

CONSUME_AGAIN_LIMIT = 30.0  # seconds: the requirement for workers after a Redis restart
STEP_LATENCY_MS = 600


def test_a_redis_restart_mid_run_loses_no_run_and_workers_consume_again(
    start_worker: Any,
    start_run: Any,
    make_graph: Any,
    fault_mock: Any,
    fault_redis: Any,
    fault_settings: Any,
    record_figure: Any,
) -> None:
    from execution.models import Environment, Run, RunEvent
    from execution.services import reaper

    # The production value: no run below may need the reaper's timeout to be sent again.
    fault_settings.RUN_QUEUED_TIMEOUT = 300.0

    graph = make_graph("redis-restart", [{"serviceName": "success-200"}, {"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="slow-redis",
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=fault_mock.url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_LATENCY_MS),
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    worker = start_worker(concurrency=2, RUN_QUEUED_TIMEOUT="300")
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
    deadline = time.monotonic() + 30
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
    # The two whose message died with Redis were sent again at once (not after RUN_QUEUED_TIMEOUT,
    # so not counted as the reaper's re-sends) and ran once: the one Redis lost by the reaper,
    # which says so; the one Redis refused by this process as soon as Redis took messages again.
    for pk in (queued_in_redis, down_while_created):
        assert runs[pk].requeues == 0 and runs[pk].attempt == 1, (runs[pk].requeues, runs[pk].attempt)
    reasons = RunEvent.objects.filter(run_id=queued_in_redis, type="run.requeued").values_list(
        "data__reason", flat=True
    )
    assert list(reasons) == ["Its message was lost when the broker restarted; sent again."]
    assert not RunEvent.objects.filter(run_id=down_while_created, type="run.requeued").exists()
    for pk in (*in_flight, after_restart):
        assert runs[pk].requeues == 0 and runs[pk].attempt == 1
    assert worker.alive()


BACK_WITHIN = 15.0  # seconds after Redis is back by which every run below has finished


def test_runs_and_suite_runs_accepted_while_redis_is_down_finish_within_seconds_of_its_return(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, fault_redis: Any, fault_settings: Any
) -> None:
    """With the production RUN_QUEUED_TIMEOUT (300 s) and no reaper pass by the test: the run whose
    message died in Redis, the run created while Redis was down and a suite run started then all
    finish within seconds of Redis coming back, each run claimed once."""
    from django.contrib.auth import get_user_model

    from execution.devtools import demo
    from execution.models import Environment, Run
    from execution.suites import services as suites
    from execution.suites.models import SuiteRun
    from graphs.models import Graph

    fault_settings.RUN_QUEUED_TIMEOUT = 300.0
    list(demo.seed())
    animals = Graph.objects.get(name="animal-switch")
    demo_user = get_user_model().objects.get(username=demo.DEMO_USER)
    graph = make_graph("redis-down", [{"serviceName": "success-200"}, {"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="slow-redis-down",
        visibility="shared",
        url_template=fault_mock.url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_LATENCY_MS),
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    worker = start_worker(concurrency=2, RUN_QUEUED_TIMEOUT="300")
    warm = start_run(graph, environment)
    wait_until(
        lambda: Run.objects.get(pk=warm.pk).status == "succeeded",
        timeout=60,
        what=f"the first run on a fresh worker\n{worker.log_tail()}",
    )
    in_flight = [start_run(graph, environment).pk for _ in range(2)]
    wait_until(
        lambda: Run.objects.filter(pk__in=in_flight, status="running").count() == 2,
        timeout=20,
        what="two runs in flight",
    )
    queued_in_redis = start_run(graph, environment).pk  # both slots are busy: it waits in Redis

    fault_redis.stop()
    down_while_created = start_run(graph, environment).pk
    suite = suites.suite_start(graph=animals, version=animals.versions.get(number=1), user=demo_user)
    time.sleep(1.5)
    fault_redis.start()
    back = time.monotonic()

    def settled() -> bool:
        return (
            not Run.objects.filter(pk__in=[*in_flight, queued_in_redis, down_while_created])
            .exclude(status__in=Run.TERMINAL)
            .exists()
            and SuiteRun.objects.get(pk=suite.pk).status != "running"
        )

    wait_until(
        settled,
        timeout=BACK_WITHIN,
        interval=0.1,
        what=f"every run finished after Redis came back\n{worker.log_tail()}",
    )
    runs = {
        run.pk: run for run in Run.objects.filter(pk__in=[*in_flight, queued_in_redis, down_while_created])
    }
    assert all(run.status == "succeeded" and run.attempt == 1 for run in runs.values()), {
        pk: (run.status, run.attempt, run.error) for pk, run in runs.items()
    }
    suite.refresh_from_db()
    assert suite.status == "passed", (suite.status, suite.passed, suite.failed)
    assert Run.objects.filter(suite_results__suite=suite).exclude(attempt=1).count() == 0
    assert time.monotonic() - back < BACK_WITHIN


OUTAGE_SECONDS = 21.0  # Celery's own reconnection would next try at 30 s (after 2, 4, 6, 8, 10 s)
RECONNECT_WITHIN = 5.0


def test_a_worker_consumes_again_within_seconds_of_a_long_outage_ending(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, fault_redis: Any
) -> None:
    from execution.models import Environment, Run

    graph = make_graph("redis-outage", [{"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="outage",
        visibility="shared",
        url_template=fault_mock.url + "/v1/models/{name}:predict",
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    worker = start_worker(concurrency=1)
    warm = start_run(graph, environment)
    wait_until(
        lambda: Run.objects.get(pk=warm.pk).status == "succeeded",
        timeout=60,
        what=f"the first run on a fresh worker\n{worker.log_tail()}",
    )
    fault_redis.stop()
    time.sleep(OUTAGE_SECONDS)
    fault_redis.start()
    back = time.monotonic()
    run = start_run(graph, environment)
    wait_until(
        lambda: Run.objects.filter(pk=run.pk).exclude(status="queued").exists(),
        timeout=RECONNECT_WITHIN,
        interval=0.05,
        what=f"the worker consuming again after a {OUTAGE_SECONDS:g} s outage\n{worker.log_tail()}",
    )
    assert time.monotonic() - back < RECONNECT_WITHIN
    assert worker.alive()


STALLWORKER = Path(__file__).resolve().parent / "stallworker.py"


def test_a_run_whose_worker_died_before_claiming_it_is_sent_again_within_seconds(
    start_worker: Any, start_run: Any, make_graph: Any, fault_mock: Any, fault_redis: Any, fault_settings: Any
) -> None:
    """The message is neither in the queue nor lost: the killed worker took it and never
    acknowledged it (Redis keeps it for CELERY_VISIBILITY_TIMEOUT, 600 s). With nothing waiting in
    the queue, the reaper sends the run again after RUN_QUEUED_RESEND_SECONDS, not RUN_QUEUED_TIMEOUT."""
    import redis

    from execution.models import Environment, Run, RunEvent
    from execution.services import reaper

    fault_settings.RUN_QUEUED_TIMEOUT = 300.0
    fault_settings.RUN_QUEUED_RESEND_SECONDS = 2.0
    # A worker asks for a reaper pass when it connects (ReapOnConnect): with the same settings.
    timeouts = {"RUN_QUEUED_TIMEOUT": "300", "RUN_QUEUED_RESEND_SECONDS": "2"}
    graph = make_graph("stalled-claim", [{"serviceName": "echo"}])
    environment = Environment.objects.create(
        name="stalled",
        visibility="shared",
        url_template=fault_mock.url + "/v1/models/{name}:predict",
        allow_loopback=True,
        step_timeout=10,
        deadline=30,
    )
    broker = redis.Redis.from_url(fault_redis.url)
    # Other tests of this session kill workers too and leave their messages unacknowledged: what
    # this test waits for is its own run's message (its id is in the message's headers).
    broker.hset("unacked", "left-by-an-earlier-test", '[{"headers": {}}, "", "celery"]')
    stalled = start_worker(concurrency=1, launcher=STALLWORKER, **timeouts)
    run = start_run(graph, environment)

    def taken_not_claimed() -> bool:
        held = any(str(run.pk).encode() in message for message in broker.hvals("unacked"))
        return held and Run.objects.get(pk=run.pk).status == "queued"

    wait_until(  # taken, not claimed: in Redis's unacknowledged messages
        taken_not_claimed,
        timeout=60,
        what=f"the stalling worker holding the run's message\n{stalled.log_tail()}",
    )
    stalled.kill()
    healthy = start_worker(concurrency=1, **timeouts)
    deadline = time.monotonic() + 30
    while Run.objects.get(pk=run.pk).status != "succeeded":
        assert time.monotonic() < deadline, (Run.objects.get(pk=run.pk).status, healthy.log_tail())
        reaper.reap_runs()  # what beat does every RUN_REAPER_SECONDS
        time.sleep(0.5)
    done = Run.objects.get(pk=run.pk)
    assert done.attempt == 1 and done.requeues == 0
    reasons = list(
        RunEvent.objects.filter(run=run, type="run.requeued").values_list("data__reason", flat=True)
    )
    assert len(reasons) == 1 and "held no message" in reasons[0], reasons
    broker.hdel("unacked", "left-by-an-earlier-test")
