"""Sending a run to the workers: the run task's message, a broker that refuses it, and what the
broker can tell about lost messages (for the reaper).

The task itself (``execution.tasks.runs``) sits above the services and calls them; the services
send it from here by its registered name, so no service imports a task module.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

import redis
from celery import Task
from django.conf import settings
from django.db import connection
from django.utils import timezone

from config.celery_app import app as studio_app
from execution.models import Run

logger = logging.getLogger(__name__)

# The name the run task is registered under (``execution.tasks.runs.run_graph_task``).
RUN_TASK = "execution.run_graph"


def run_task() -> Task:
    """The run task as the studio's Celery app registered it (the execution app imports its task
    modules in every process, not only in workers). The studio's app, not Celery's current one:
    another app made current in the same process must not change where runs are sent."""
    return studio_app.tasks[RUN_TASK]


def enqueue(run: Run) -> bool:
    """Send the run's task to the broker; True once the broker took it.

    A broker that cannot take it (down, restarting) loses nothing: the run is marked unsent (its
    ``enqueued_at`` cleared, while it is still queued) and this process sends it again within
    seconds of the broker coming back (:data:`RESENDER`); should this process die first, the
    reaper's next pass sends it (``execution.services.reaper``). A message sent twice is harmless:
    only a queued run can be claimed."""
    if _send(run):
        return True
    _mark_unsent(run)
    RESENDER.add(run)
    return False


def _mark_unsent(run: Run) -> None:
    try:
        Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(enqueued_at=None)
    except Exception:  # the database too: the reaper's timeout re-sends it (never a 500 here)
        logger.exception("could not mark run %s unsent", run.pk)


def _send(run: Run, *, retry: bool = False) -> bool:
    """Hand the run's message to the broker; False if it refused. ``retry``: a retry of a refused
    send, logged without the traceback the first refusal already logged."""
    limit = float((run.config or {}).get("deadline") or settings.RUN_MAX_DEADLINE)
    try:
        run_task().apply_async(
            args=[str(run.pk)],
            soft_time_limit=limit + settings.RUN_DEADLINE_GRACE,
            time_limit=limit + 2 * settings.RUN_DEADLINE_GRACE,
        )
    except Exception:  # kombu raises several unrelated types; the run stays queued either way
        logger.warning(
            "could not send run %s to the broker; sending it again shortly", run.pk, exc_info=not retry
        )
        return False
    return True


def resend_unsent(run: Run, *, retry: bool = False) -> bool | None:
    """Send a run marked unsent, unless someone else already has: the mark is taken with a
    conditional update (unsent -> now), so of the processes that try at once (this one's
    :data:`RESENDER`, the reaper) one sends it. Returns None when there was nothing to send (sent
    by someone else, or not queued any more), else whether the broker took it; a refusal marks
    the run unsent again."""
    taken = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED, enqueued_at__isnull=True).update(
        enqueued_at=timezone.now()
    )
    if not taken:
        return None
    if _send(run, retry=retry):
        return True
    _mark_unsent(run)
    return False


def broker_started_at() -> datetime | None:
    """When the broker's current process started, if it is a Redis that says so (INFO's
    ``uptime_in_seconds``); None for another broker or one that does not answer. A message sent
    before then was lost with the previous process when Redis keeps no persistence (``make run``
    and the compose file start it without): the reaper sends those runs again at once."""
    client = _redis_broker()
    if client is None:
        return None
    try:
        uptime = float(client.info("server")["uptime_in_seconds"])
    except (redis.RedisError, OSError, KeyError, ValueError):
        return None
    finally:
        client.close()
    # Whole seconds: the start is up to 1 s earlier than this. Taking the earliest, a run sent just
    # after the start is never taken for lost; a run sent in the last second before a restart that
    # took under a second is left to RUN_QUEUED_TIMEOUT.
    return timezone.now() - timedelta(seconds=uptime + 1)


def _redis_broker() -> redis.Redis | None:
    url = str(studio_app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    return redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=2.0)


def broker_queue_empty() -> bool | None:
    """Whether the broker holds no run message waiting for a worker (Redis: the run task's queue,
    with the lists kombu keeps for its priorities, are empty); None for another broker or one that
    does not answer. A run queued for a while with nothing waiting is not behind other runs: a
    worker took its message and stopped before claiming it (the message stays unacknowledged until
    the broker's visibility timeout), or the message was lost."""
    client = _redis_broker()
    if client is None:
        return None
    task = run_task()
    queue = str(getattr(task, "queue", None) or studio_app.conf.task_default_queue)
    try:
        with client.pipeline(transaction=False) as pipe:
            for name in (queue, *(f"{queue}\x06\x16{priority}" for priority in (3, 6, 9))):
                pipe.llen(name)
            return not any(pipe.execute())
    except (redis.RedisError, OSError):
        return None
    finally:
        client.close()


class Resender:
    """The runs this process could not send, sent again as soon as the broker takes messages.

    One daemon thread per process, started by the first refusal and ended once nothing is left:
    it tries every :attr:`interval` s (doubling up to :attr:`max_interval`), and a pass stops at
    the first refusal, so a broker that is down costs one failed connection per pass however many
    runs wait. The database is the source of truth: a run this process forgets (it exits) is
    still marked unsent, and the reaper sends it."""

    interval = 0.25  # seconds: the first retry, soon after the broker's blip
    max_interval = 2.0  # seconds: the longest a run waits after the broker is back

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        self._thread: threading.Thread | None = None

    def add(self, run: Run) -> None:
        with self._lock:
            self._runs[str(run.pk)] = run
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="resend-runs", daemon=True)
                self._thread.start()

    def pending(self) -> int:
        with self._lock:
            return len(self._runs)

    def _loop(self) -> None:
        delay = self.interval
        try:
            while True:
                time.sleep(delay)
                with self._lock:
                    waiting = list(self._runs.values())
                refused = False
                for run in waiting:
                    try:
                        sent = resend_unsent(run, retry=True)
                    except Exception:  # the database is down too: keep it, try again later
                        logger.warning("could not resend run %s", run.pk, exc_info=True)
                        sent = False
                    if sent is False:
                        refused = True
                        break
                    with self._lock:
                        self._runs.pop(str(run.pk), None)
                with self._lock:
                    if not self._runs:
                        self._thread = None
                        return
                delay = min(delay * 2, self.max_interval) if refused else self.interval
        finally:
            connection.close()


RESENDER = Resender()
