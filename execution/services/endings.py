"""What every way a run can end writes: its pending steps closed, its final ``run.finished`` event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from execution import events
from execution.models import Run, RunStep


def finished_data(fields: Mapping[str, Any], attempt: int) -> dict[str, Any]:
    return {
        "status": fields["status"],
        "status_code": fields.get("response_status"),
        "content_type": fields.get("response_content_type"),
        "error": fields.get("error", ""),
        "duration_ms": fields.get("duration_ms"),
        "attempt": attempt,
    }


def emit_ended_without_response(run: Run, status: str, error: str, **extra: Any) -> None:
    """The final ``run.finished`` event of a run that ended before its graph answered."""
    events.emit(
        run.pk,
        "run.finished",
        {"status": status, "status_code": None, "error": error, "attempt": run.attempt, **extra},
    )


def close_pending_steps(run: Run, attempt: int, status: str, error: str) -> None:
    """Steps still in flight when a run ends are marked as the run ended (cancelled or error)."""
    outcome = RunStep.Outcome.CANCELLED if status == Run.Status.CANCELLED else RunStep.Outcome.ERROR
    RunStep.objects.filter(run=run, attempt=attempt, outcome=RunStep.Outcome.PENDING).update(
        outcome=outcome, error=error, finished_at=timezone.now()
    )
