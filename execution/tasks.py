"""Celery tasks of test runs. Each takes ids only and calls one service (STYLE.md §11-12)."""

from __future__ import annotations

import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_shutting_down
from django.conf import settings
from django.db import OperationalError, connection

from execution import services

# The backstop limits of a run's task (per-run values are passed at enqueue time from the run's
# deadline). Celery's thread pool does not enforce them; the run's own deadline and the reaper do.
_SOFT_LIMIT = settings.RUN_MAX_DEADLINE + settings.RUN_DEADLINE_GRACE
_HARD_LIMIT = settings.RUN_MAX_DEADLINE + 2 * settings.RUN_DEADLINE_GRACE


@shared_task(
    name="execution.run_graph",
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
    """Run one queued run. Idempotent: a run that is not QUEUED any more returns at once."""
    return services.run_execute(run_id=run_id)


@shared_task(
    name="execution.reap_runs", ignore_result=True, acks_late=True, soft_time_limit=60, time_limit=90
)
def reap_runs_task() -> dict[str, Any]:
    """Fail, cancel or requeue runs whose worker died and re-send queued runs nobody picked up."""
    return services.reap_runs().as_dict()


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
            services.worker_stopping(reason=f"{sig or 'a signal'} ({(how or 'warm').lower()} shutdown)")
        finally:
            connection.close()

    thread = threading.Thread(target=record, name="announce-worker-stop", daemon=True)
    thread.start()
    thread.join(_ANNOUNCE_TIMEOUT)
