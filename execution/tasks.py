"""Celery tasks of test runs. Each takes ids only and calls one service (STYLE.md §11-12)."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

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
