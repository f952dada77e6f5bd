"""The task that runs one run, and what a stopping worker records.

The task takes the run id only and calls the services that run it and say what follows its end;
receiving it twice is harmless (docs/architecture.md). Services send it by its registered name
(``execution.services.dispatch``): no service imports this module."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_shutting_down
from django.conf import settings
from django.db import OperationalError, connection

from execution.services import worker
from execution.services.dispatch import RUN_TASK
from execution.suites import chain

logger = logging.getLogger(__name__)

# The backstop limits of a run's task (per-run values are passed at enqueue time from the run's
# deadline). Celery's thread pool does not enforce them; the run's own deadline and the reaper do.
_SOFT_LIMIT = settings.RUN_MAX_DEADLINE + settings.RUN_DEADLINE_GRACE
_HARD_LIMIT = settings.RUN_MAX_DEADLINE + 2 * settings.RUN_DEADLINE_GRACE


@shared_task(
    name=RUN_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=_SOFT_LIMIT,
    time_limit=_HARD_LIMIT,
    # A database too busy to take the claim: try again in 1, 2, 4… s instead of leaving the run
    # queued until the reaper re-sends it. Safe because the claim is conditional: a retry of a
    # run that was claimed returns "not-claimed".
    autoretry_for=(OperationalError,),
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=True,
    max_retries=5,
)
def run_graph_task(run_id: str) -> str:
    """Run one queued run, then move its suite run along if it is a case of one
    (:func:`execution.suites.chain.case_run_ended`: the next cases may run in this thread).
    Idempotent: a run that is not QUEUED any more returns at once (its suite run is still moved
    along: it may have been cancelled or reaped meanwhile)."""
    try:
        return worker.run_execute(run_id=run_id)
    finally:
        _after_run(run_id)


def _after_run(run_id: str) -> None:
    """What follows a run's end, done or not: a failure here must not undo the run's outcome. It is
    logged, and the reaper's next pass moves the suite run along instead."""
    try:
        chain.case_run_ended(run_id)
    except Exception:
        logger.exception("run %s ended but its suite run could not be moved along here", run_id)


@worker_shutting_down.connect
def stop_chaining(**_: Any) -> None:
    """A stopping worker starts no more runs in its own threads: the next cases go to the broker."""
    chain.stop_chaining()


# How long the shutdown signal handler waits for the stop to be recorded: a database that does not
# answer within this must not hold the worker's exit (the reaper then treats its runs as crashed).
_ANNOUNCE_TIMEOUT = 5.0


@worker_shutting_down.connect
def announce_worker_stop(sig: str = "", how: str = "", **_: Any) -> None:
    """The worker was asked to stop (SIGTERM, SIGINT, SIGQUIT): mark the runs it is executing, so
    that the reaper retries them rather than failing them as possible poison runs.

    Celery calls this from the main process's signal handler; the writes happen on a thread of
    their own (with its own database connection, closed after) so the handler never waits on a
    lock the interrupted main thread might hold, and never for more than ``_ANNOUNCE_TIMEOUT``.
    """

    def record() -> None:
        try:
            worker.worker_stopping(reason=f"{sig or 'a signal'} ({(how or 'warm').lower()} shutdown)")
        finally:
            connection.close()

    thread = threading.Thread(target=record, name="announce-worker-stop", daemon=True)
    thread.start()
    thread.join(_ANNOUNCE_TIMEOUT)
