"""A run whose message the broker refused or lost is sent again within seconds, not after
RUN_QUEUED_TIMEOUT: the process that was refused retries as soon as the broker takes messages, and
the reaper sends again the runs never sent and those sent before the broker last started."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from execution.devtools import demo
from execution.models import Run, RunEvent
from execution.services import dispatch as run_tasks
from execution.services import reaper, runs
from graphs.models import Graph

# The real ones: tests/conftest.py's ``enqueued`` (every test here) replaces them with "no broker".
BROKER_STARTED_AT = run_tasks.broker_started_at
BROKER_QUEUE_EMPTY = run_tasks.broker_queue_empty

pytestmark = pytest.mark.django_db(transaction=True)  # the resender reads from its own thread


class Broker:
    """``run_graph_task.apply_async`` of a broker that is down until :meth:`back`."""

    def __init__(self) -> None:
        self.up = False
        self.sent: list[str] = []
        self.refused = 0

    def __call__(self, args: Any = None, kwargs: Any = None, **options: Any) -> None:
        if not self.up:
            self.refused += 1
            raise ConnectionRefusedError("the broker is down")
        self.sent.append(args[0])


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> Broker:
    fake = Broker()
    monkeypatch.setattr(run_tasks.run_task(), "apply_async", fake)
    monkeypatch.setattr(run_tasks, "broker_started_at", lambda: None, raising=False)
    monkeypatch.setattr(run_tasks, "broker_queue_empty", lambda: None, raising=False)
    return fake


@pytest.fixture
def create(db: Any, mock_server: Any) -> Any:
    list(demo.seed())
    graph = Graph.objects.get(name="cat-dog-breed")
    version = graph.latest_version
    assert version is not None

    def create() -> Run:
        run, _ = runs.run_create(
            graph=graph,
            version=version,
            user=graph.owner,
            payload={"instances": [{"animal": "cat"}]},
        )
        return run

    return create


def wait_for(check: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def test_a_refused_send_marks_the_run_unsent_and_is_sent_once_the_broker_is_back(
    broker: Broker, create: Any
) -> None:
    run = create()  # the request answers: the refusal is logged, never raised
    assert Run.objects.get(pk=run.pk).enqueued_at is None  # known unsent, in the database
    wait_for(lambda: broker.refused >= 3)  # tried again and again while the broker is down
    assert broker.sent == []
    broker.up = True
    wait_for(lambda: broker.sent == [str(run.pk)], seconds=run_tasks.Resender.max_interval + 3)
    assert Run.objects.get(pk=run.pk).enqueued_at is not None
    wait_for(lambda: run_tasks.RESENDER.pending() == 0)
    assert broker.sent == [str(run.pk)]  # once
    assert Run.objects.get(pk=run.pk).requeues == 0


def test_a_run_not_queued_any_more_is_not_sent_again(broker: Broker, create: Any) -> None:
    run = create()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
    broker.up = True
    wait_for(lambda: run_tasks.RESENDER.pending() == 0)
    assert broker.sent == []


def test_the_reaper_sends_an_unsent_run_at_once_without_counting_it(broker: Broker, create: Any) -> None:
    run = create()
    run_tasks.RESENDER._runs.clear()  # as if the refused process had died
    broker.up = True
    report = reaper.reap_runs()
    assert report.resent == [str(run.pk)] and broker.sent == [str(run.pk)]
    fresh = Run.objects.get(pk=run.pk)
    assert fresh.enqueued_at is not None and fresh.requeues == 0 and fresh.status == "queued"
    assert reaper.reap_runs().resent == []  # sent now: nothing known lost


def test_the_reaper_resends_at_once_what_the_broker_lost_in_a_restart(
    broker: Broker, create: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    broker.up = True
    before, after = create(), None
    restarted = timezone.now() + timedelta(milliseconds=50)
    time.sleep(0.1)
    after = create()  # sent to the broker's new process
    monkeypatch.setattr(run_tasks, "broker_started_at", lambda: restarted, raising=False)
    broker.sent.clear()
    report = reaper.reap_runs()
    assert report.resent == [str(before.pk)] and broker.sent == [str(before.pk)]
    assert RunEvent.objects.filter(run=before, type="run.requeued").count() == 1
    assert Run.objects.get(pk=before.pk).requeues == 0
    assert not RunEvent.objects.filter(run=after, type="run.requeued").exists()
    assert reaper.reap_runs().resent == []  # once per loss


def test_the_broker_start_is_read_from_redis(settings: Any, redis_url: str) -> None:
    from config.celery_app import app

    previous = app.conf.broker_url
    app.conf.broker_url = redis_url
    try:
        started = BROKER_STARTED_AT()
    finally:
        app.conf.broker_url = previous
    assert started is not None and started <= timezone.now()
    app.conf.broker_url = "memory://"
    try:
        assert BROKER_STARTED_AT() is None
    finally:
        app.conf.broker_url = previous


@pytest.mark.parametrize("queue_empty", [True, False, None])
def test_the_reaper_resends_a_run_queued_a_while_when_the_broker_holds_nothing_for_it(
    broker: Broker, create: Any, monkeypatch: pytest.MonkeyPatch, settings: Any, queue_empty: bool | None
) -> None:
    """Taken by a worker that stopped before claiming it: unacknowledged, given back by the broker
    only after its visibility timeout. With messages waiting (False), the run is behind them; with
    no answer (None), nothing is known: both are left to RUN_QUEUED_TIMEOUT."""
    # The project's default, not the quick timeout of the session's worker settings (run_settings).
    settings.RUN_QUEUED_TIMEOUT = 600
    broker.up = True
    run = create()
    broker.sent.clear()
    monkeypatch.setattr(run_tasks, "broker_queue_empty", lambda: queue_empty, raising=False)
    soon = timezone.now() + timedelta(seconds=settings.RUN_QUEUED_RESEND_SECONDS - 1)
    assert reaper.reap_runs(now=soon).resent == []
    later = timezone.now() + timedelta(seconds=settings.RUN_QUEUED_RESEND_SECONDS + 1)
    assert settings.RUN_QUEUED_RESEND_SECONDS + 1 < settings.RUN_QUEUED_TIMEOUT
    resent = reaper.reap_runs(now=later).resent
    assert resent == ([str(run.pk)] if queue_empty else [])
    assert broker.sent == resent
    assert Run.objects.get(pk=run.pk).requeues == 0
    if queue_empty:
        assert reaper.reap_runs(now=later).resent == []  # once per window


def test_the_broker_queue_is_read_from_redis(redis_url: str) -> None:
    import redis

    from config.celery_app import app

    # A database of its own: a session's worker consuming from the test Redis would take the message.
    url = redis_url.rsplit("/", 1)[0] + "/7"
    previous = app.conf.broker_url
    app.conf.broker_url = url
    client = redis.Redis.from_url(url)
    client.delete("celery")
    try:
        assert BROKER_QUEUE_EMPTY() is True
        client.rpush("celery", "{}")
        assert BROKER_QUEUE_EMPTY() is False
    finally:
        client.delete("celery")
        app.conf.broker_url = previous


def test_a_process_that_is_not_a_worker_finds_the_run_task_to_send() -> None:
    """The web process and the commands send runs by the task's registered name: Celery's
    autodiscovery imports task modules only in a worker, so the app registers them itself."""
    import subprocess
    import sys

    code = (
        "import django; django.setup(); "
        "from execution.services import dispatch; "
        "print(dispatch.run_task().name)"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.strip() == run_tasks.RUN_TASK
