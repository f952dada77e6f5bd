"""What every way a run can end writes: its pending steps closed, its final ``run.finished`` event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils import timezone

from execution import bodies, events
from execution.engine.config import DEFAULT_DEADLINE_S
from execution.eventschema import RUN_EVENTS
from execution.models import Run, RunStep
from graphs import language


def finished_data(
    fields: Mapping[str, Any], attempt: int, engine: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The data of a run's terminal event (execution/eventschema.py) from the run's final fields:
    the engine's own report (outcome, deadline, warnings, …) when there is one, with the run's
    status, and its answer as the run API shows it (``response``; None when it ended without one)."""
    response = None
    if "response_body" in fields:
        response = bodies.response_view(
            status_code=fields.get("response_status"),
            content_type=fields.get("response_content_type"),
            body=fields["response_body"],
            encoding=fields.get("response_encoding", "utf-8"),
            size=fields.get("response_size"),
            truncated=bool(fields.get("response_truncated")),
        )
    report = dict(engine or {})
    return {
        **report,
        "attempt": attempt,
        "status": fields["status"],
        "status_code": fields.get("response_status"),
        "content_type": fields.get("response_content_type"),
        "response": response,
        "error": fields.get("error", ""),
        "duration_ms": fields.get("duration_ms"),
        "warnings": list(report.get("warnings") or []),
    }


def emit_ended_without_response(run: Run, status: str, error: str, **extra: Any) -> None:
    """The terminal event of a run that ended before its graph answered."""
    final = finished_data({"status": status, "error": error}, run.attempt)
    events.emit(run.pk, RUN_EVENTS.terminal, {**final, **extra})


def close_pending_steps(run: Run, attempt: int, status: str, error: str) -> None:
    """Steps still in flight when a run ends are marked as the run ended (cancelled or error)."""
    outcome = RunStep.Outcome.CANCELLED if status == Run.Status.CANCELLED else RunStep.Outcome.ERROR
    RunStep.objects.filter(run=run, attempt=attempt, outcome=RunStep.Outcome.PENDING).update(
        outcome=outcome, error=error, finished_at=timezone.now()
    )


def deadline_source(manifest: language.Manifest, config: dict[str, Any]) -> str:
    """What set a run's deadline (the tighter of the environment's and the graph's
    ``routerTimeouts.serverWrite``, else KServe's default), as its error names it."""
    timeouts = manifest.spec.router_timeouts
    server_write = float(timeouts.server_write) if timeouts and timeouts.server_write else None
    chosen = config.get("deadline")
    if server_write is not None and (chosen is None or server_write <= float(chosen)):
        return "the graph's routerTimeouts.serverWrite"
    if chosen is not None:
        return f"the environment's deadline, at most RUN_MAX_DEADLINE ({settings.RUN_MAX_DEADLINE:g} s)"
    return f"KServe's default of {DEFAULT_DEADLINE_S:g} s"
