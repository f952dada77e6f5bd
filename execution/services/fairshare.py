"""One user's fair share of the workers: how many runs and suite runs a user may have queued or
running at once (``RUN_MAX_IN_FLIGHT_PER_USER``, ``SUITE_MAX_IN_FLIGHT_PER_USER``), and load tests
(``LOAD_TEST_MAX_IN_FLIGHT_PER_USER``).

The workers take runs first come, first served; without a cap, one user's burst of slow runs
queues everybody else's behind it. The check and the insert it allows are one transaction that
holds the user's row (``SELECT … FOR UPDATE`` on PostgreSQL; on SQLite every write transaction
begins ``IMMEDIATE``, so they already run one at a time): two requests at once cannot both take
the last slot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet

from execution.errors import TooManyInFlight
from execution.loadtests.models import LoadTest
from execution.models import Run
from execution.suites.models import SuiteRun
from graphs.language import issue_dict

# Seconds a refused client waits before it asks again: a test run usually ends within a few
# seconds (its step calls), a suite run takes its cases' runs, a few at a time, so longer.
RUN_RETRY_AFTER = 5
SUITE_RETRY_AFTER = 15
LOAD_RETRY_AFTER = 30  # a load test runs for up to LOAD_TEST_MAX_SECONDS


def _hold_user(user: User) -> None:
    """Lock ``user``'s row until the surrounding transaction ends: the user's own starts take turns."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a fair-share check must run inside the transaction that inserts")
    list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))


def runs_in_flight(user: User) -> QuerySet[Run]:
    """``user``'s runs queued or running that are not a suite run's cases (those count towards
    the suite runs' own cap)."""
    return Run.objects.filter(
        created_by_id=user.pk,
        status__in=(Run.Status.QUEUED, Run.Status.RUNNING),
        suite_results__isnull=True,
    )


def suites_in_flight(user: User) -> QuerySet[SuiteRun]:
    return SuiteRun.objects.filter(
        created_by_id=user.pk, status__in=(SuiteRun.Status.QUEUED, SuiteRun.Status.RUNNING)
    )


def ensure_run_slot(user: User) -> None:
    """Raise TooManyInFlight (429) when ``user`` has ``RUN_MAX_IN_FLIGHT_PER_USER`` runs queued or
    running already (0: no limit). Call inside the transaction that then stores the run."""
    _ensure_slot(
        user,
        setting="RUN_MAX_IN_FLIGHT_PER_USER",
        in_flight=runs_in_flight,
        slots=1,
        what="runs",
        code="run.too-many-in-flight",
        retry_after=RUN_RETRY_AFTER,
    )


def ensure_suite_slots(user: User, slots: int = 1) -> None:
    """Raise TooManyInFlight (429) unless ``user`` may have ``slots`` more suite runs queued or
    running (``SUITE_MAX_IN_FLIGHT_PER_USER``; 0: no limit). Call inside the transaction that then
    stores the (first) suite run."""
    _ensure_slot(
        user,
        setting="SUITE_MAX_IN_FLIGHT_PER_USER",
        in_flight=suites_in_flight,
        slots=slots,
        what="suite runs",
        code="suite.too-many-in-flight",
        retry_after=SUITE_RETRY_AFTER,
    )


def loads_in_flight(user: User) -> QuerySet[LoadTest]:
    return LoadTest.objects.filter(
        created_by_id=user.pk, status__in=(LoadTest.Status.QUEUED, LoadTest.Status.RUNNING)
    )


def ensure_load_slot(user: User) -> None:
    """Raise TooManyInFlight (429) when ``user`` has ``LOAD_TEST_MAX_IN_FLIGHT_PER_USER`` load tests
    queued or running already (0: no limit). Call inside the transaction that then stores it."""
    _ensure_slot(
        user,
        setting="LOAD_TEST_MAX_IN_FLIGHT_PER_USER",
        in_flight=loads_in_flight,
        slots=1,
        what="load tests",
        code="load.too-many-in-flight",
        retry_after=LOAD_RETRY_AFTER,
    )


def _ensure_slot(
    user: User,
    *,
    setting: str,
    in_flight: Callable[[User], QuerySet[Any]],
    slots: int,
    what: str,
    code: str,
    retry_after: int,
) -> None:
    cap = int(getattr(settings, setting))
    if cap <= 0:
        return
    _hold_user(user)
    count = in_flight(user).count()
    if count + slots <= cap:
        return
    message = (
        f"You have {count} {what} queued or running; one user may have at most {cap} at once "
        f"({setting}). Wait for one to finish (or cancel one) and try again."
    )
    if slots > 1:
        message = (
            f"This starts {slots} {what} and you have {count} queued or running; one user may have "
            f"at most {cap} at once ({setting}). Wait for one to finish (or cancel one) and try again."
        )
    raise TooManyInFlight(
        message,
        retry_after=retry_after,
        issues=[issue_dict(code, f"{setting} is {cap}")],
        extra={"limit": cap, "in_flight": count, "setting": setting},
    )
