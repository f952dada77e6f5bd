"""The task that runs one load test. It takes the load test's id only and calls one service;
receiving it twice is harmless (the claim is conditional)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from execution.loadtests import services


@shared_task(
    name="execution.run_load_test",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    # Backstops: the load's own loop stops at LOAD_TEST_MAX_SECONDS, its requests at their deadline.
    soft_time_limit=settings.LOAD_TEST_MAX_SECONDS + 2 * settings.RUN_MAX_DEADLINE,
    time_limit=settings.LOAD_TEST_MAX_SECONDS + 3 * settings.RUN_MAX_DEADLINE,
)
def run_load_test_task(load_id: str) -> str:
    """Run one queued load test. Idempotent: one that is not queued any more returns at once."""
    return services.load_test_execute(load_id=load_id)
