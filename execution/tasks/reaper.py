"""The periodic task of the reaper (Celery beat sends it every ``RUN_REAPER_SECONDS``)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from execution.loadtests import services as load_services
from execution.services import reaper
from execution.suites import services as suite_services


@shared_task(
    name="execution.reap_runs", ignore_result=True, acks_late=True, soft_time_limit=60, time_limit=90
)
def reap_runs_task() -> dict[str, Any]:
    """Fail, cancel or requeue runs whose worker died and re-send queued runs nobody picked up;
    then move along the suite runs whose cases those runs were, and fail the load tests whose
    worker died."""
    report: dict[str, Any] = reaper.reap_runs().as_dict()
    report["suites"] = suite_services.suite_reap()
    report["load_tests"] = load_services.load_reap()
    return report
