"""The reaper: no run stays running or queued forever (the ``execution.reap_runs`` task)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from execution import events
from execution.models import Run, RunEvent
from execution.services import dispatch, endings
from execution.services.worker import STOP_ANNOUNCED


def _stop_announced(run: Run) -> bool:
    return RunEvent.objects.filter(run_id=run.pk, type=STOP_ANNOUNCED, data__attempt=run.attempt).exists()


@dataclass
class ReapReport:
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "requeued": self.requeued,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "resent": self.resent,
        }


def reap_runs(*, now: datetime | None = None) -> ReapReport:
    """Make sure no run stays running or queued forever. Safe to run anywhere, any number of times.

    - RUNNING with no heartbeat for ``RUN_HEARTBEAT_TIMEOUT`` s (its worker died): cancelled if a
      cancel was asked for. Else, if its worker had been asked to stop during this attempt
      (:func:`worker_stopping`: an operator's SIGTERM, a deploy, a scale-down), re-queued while
      attempts < ``RUN_MAX_ATTEMPTS`` (the next claim is the next attempt, with its own steps),
      then failed. A worker that died *unannounced* (a crash, the OOM killer, a bare SIGKILL) may
      have been killed by the run itself (a poison run); the run is failed at once with the reason,
      never requeued into the same crash. This is Kubernetes' Job rule with a pod failure policy:
      a disruption does not count against the retries, a crash fails the Job (backoffLimit 0);
      not Celery's ``reject_on_worker_lost``, which redelivers a poison message forever.
    - QUEUED whose message is known lost (the broker refused it, or restarted since it was sent):
      sent again at once, as often as that happens (:func:`_resend_lost`).
    - QUEUED since ``RUN_QUEUED_TIMEOUT`` s (its message was lost some other way, or no worker
      runs): re-sent once, then failed.

    Each change is conditional on the row still being what was read, so a worker that beats its
    heartbeat in between keeps its run.
    """
    now = now or timezone.now()
    report = ReapReport()
    stale = now - timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT)
    dead = Run.objects.filter(status=Run.Status.RUNNING).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    )
    for run in dead.only("pk", "attempt", "heartbeat_at", "cancel_requested", "started_at", "config"):
        same = Run.objects.filter(
            pk=run.pk, status=Run.Status.RUNNING, attempt=run.attempt, heartbeat_at=run.heartbeat_at
        )
        silent = f"no heartbeat for over {settings.RUN_HEARTBEAT_TIMEOUT:g} s"
        with transaction.atomic():
            if run.cancel_requested:
                reason = f"Cancelled; its worker had stopped responding ({silent})."
                if same.update(status=Run.Status.CANCELLED, finished_at=now, heartbeat_at=None, error=reason):
                    endings.close_pending_steps(run, run.attempt, Run.Status.CANCELLED, reason)
                    endings.emit_ended_without_response(run, Run.Status.CANCELLED, reason)
                    report.cancelled.append(str(run.pk))
            elif not _stop_announced(run):
                reason = (
                    f"The worker running this run died during attempt {run.attempt} ({silent}) "
                    "without being asked to stop; not retried, since the run itself may have "
                    "crashed it. Rerun it to try again."
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, heartbeat_at=None, error=reason):
                    endings.close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    endings.emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
            elif run.attempt < settings.RUN_MAX_ATTEMPTS:
                reason = (
                    f"The worker running attempt {run.attempt} was asked to stop and then "
                    f"stopped responding ({silent})."
                )
                if same.update(status=Run.Status.QUEUED, heartbeat_at=None, enqueued_at=now):
                    endings.close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    events.emit(
                        run.pk,
                        "run.requeued",
                        {"reason": reason, "attempt": run.attempt, "next_attempt": run.attempt + 1},
                    )
                    transaction.on_commit(functools.partial(dispatch.enqueue, run))
                    report.requeued.append(str(run.pk))
            else:
                reason = (
                    f"The worker running attempt {run.attempt} was asked to stop and then "
                    f"stopped responding ({silent}); giving up after {run.attempt} attempts."
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, heartbeat_at=None, error=reason):
                    endings.close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    endings.emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
    _resend_lost(now, report)
    waited = now - timedelta(seconds=settings.RUN_QUEUED_TIMEOUT)
    for run in Run.objects.filter(status=Run.Status.QUEUED, enqueued_at__lt=waited).only(
        "pk", "requeues", "enqueued_at", "attempt", "config"
    ):
        same = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED, enqueued_at=run.enqueued_at)
        with transaction.atomic():
            if run.requeues < 1:
                if same.update(requeues=F("requeues") + 1, enqueued_at=now):
                    events.emit(
                        run.pk,
                        "run.requeued",
                        {
                            "reason": f"No worker started it within {settings.RUN_QUEUED_TIMEOUT:g} s; "
                            "sent again.",
                            "attempt": run.attempt,
                            "next_attempt": run.attempt + 1,
                        },
                    )
                    transaction.on_commit(functools.partial(dispatch.enqueue, run))
                    report.resent.append(str(run.pk))
            else:
                reason = (
                    f"No worker started the run (waited twice {settings.RUN_QUEUED_TIMEOUT:g} s); "
                    "is a Celery worker running?"
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, error=reason):
                    endings.emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
    return report


def _resend_lost(now: datetime, report: ReapReport) -> None:
    """Send again, at once, the queued runs whose message is known lost: never sent (the broker
    refused it, and the process that was to retry may be gone: ``enqueued_at`` is empty), or sent
    before the broker's current process started (a Redis without persistence loses its queue in
    a restart); and, after ``RUN_QUEUED_RESEND_SECONDS``, those whose message the broker does not
    hold (taken by a worker that stopped before claiming it: unacknowledged). Not counted as the
    reaper's re-sends (``requeues``, which end in failing the run): a lost message says nothing
    about whether a worker runs. A message that was not lost after all is received twice, which
    is harmless (only a queued run can be claimed)."""
    unsent = Run.objects.filter(status=Run.Status.QUEUED, enqueued_at__isnull=True)
    for run in unsent.only("pk", "attempt", "config"):
        if dispatch.resend_unsent(run):
            report.resent.append(str(run.pk))
    started = dispatch.broker_started_at()
    if started is not None:
        lost = Run.objects.filter(status=Run.Status.QUEUED, enqueued_at__lt=started)
        _resend(lost, now, report, "Its message was lost when the broker restarted; sent again.")
    # Nothing waits in the broker, yet the run has been queued a while: it is behind no other run.
    # A worker took its message and stopped before claiming it (the message comes back only after
    # the broker's visibility timeout), or the message was lost some other way.
    idle = now - timedelta(seconds=settings.RUN_QUEUED_RESEND_SECONDS)
    stuck = Run.objects.filter(status=Run.Status.QUEUED, cancel_requested=False, enqueued_at__lt=idle)
    if stuck.exists() and dispatch.broker_queue_empty():
        _resend(
            stuck,
            now,
            report,
            f"No worker started it within {settings.RUN_QUEUED_RESEND_SECONDS:g} s and the broker "
            "held no message for it (the worker that took it stopped first?); sent again.",
        )


def _resend(runs: QuerySet[Run], now: datetime, report: ReapReport, reason: str) -> None:
    for run in runs.only("pk", "attempt", "enqueued_at", "config"):
        same = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED, enqueued_at=run.enqueued_at)
        with transaction.atomic():
            if same.update(enqueued_at=now):
                events.emit(
                    run.pk,
                    "run.requeued",
                    {"reason": reason, "attempt": run.attempt, "next_attempt": run.attempt + 1},
                )
                transaction.on_commit(functools.partial(dispatch.enqueue, run))
                report.resent.append(str(run.pk))
