"""The RunStep rows of one attempt, folded from the engine's trace events as the worker stores them.

Each event becomes an ``update_or_create`` keyed by (run, attempt, call id), so storing the same
event twice (a write retried after the database was busy) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from execution.engine import TraceEvent
from execution.models import Run, RunStep


def _dt(timestamp: float | None) -> datetime | None:
    return datetime.fromtimestamp(timestamp, tz=UTC) if timestamp is not None else None


@dataclass
class StepRecorder:
    """Folds trace events into the steps of ``run``'s ``attempt``.

    A Switch's ``route.decided`` may arrive before the chosen step's row exists (the engine decides,
    then starts it); the route waits in :attr:`pending_routes` until that row is written. Callers
    that retry a failed transaction restore :attr:`pending_routes` first.
    """

    run: Run
    attempt: int
    pending_routes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, event: TraceEvent) -> None:
        """Fold one trace event into the RunStep rows; events that are not about a step are ignored."""
        fold = {
            "step.started": self._started,
            "step.finished": self._finished,
            "step.skipped": self._skipped,
            "route.decided": self._route_decided,
        }.get(event.type)
        if fold is not None:
            fold(event)

    def _key(self, event: TraceEvent) -> dict[str, Any]:
        return {"run": self.run, "attempt": self.attempt, "call_id": event.call_id}

    @staticmethod
    def _common(event: TraceEvent) -> dict[str, Any]:
        return {
            "parent_call_id": event.parent_call_id,
            "node": event.node or "",
            "step_index": event.step_index,
            "step_name": event.step_name,
            "target": event.target or "",
        }

    def _with_pending_route(self, event: TraceEvent, defaults: dict[str, Any]) -> dict[str, Any]:
        route = self.pending_routes.pop(event.call_id, None)
        if route is not None:
            defaults["route"] = route
        return defaults

    def _started(self, event: TraceEvent) -> None:
        data = event.data
        defaults = {
            **self._common(event),
            "order": event.seq,
            "kind": data.get("kind", ""),
            "request_headers": data.get("headers") or [],
            "request": data.get("request"),
            "condition": data.get("condition"),
            "started_at": _dt(event.timestamp),
            "outcome": RunStep.Outcome.PENDING,
        }
        RunStep.objects.update_or_create(
            **self._key(event), defaults=self._with_pending_route(event, defaults)
        )

    def _finished(self, event: TraceEvent) -> None:
        data = event.data
        finished = _dt(event.timestamp)
        defaults = {
            "status_code": data.get("status"),
            "response": data.get("response"),
            "content_type": data.get("content_type"),
            "outcome": data.get("outcome") or "error",
            "error": data.get("error") or "",
            "finished_at": finished,
            "duration_ms": data.get("duration_ms"),
        }
        # Should the step's start not be stored, the finish makes the whole row, started when it finished.
        RunStep.objects.update_or_create(
            **self._key(event),
            defaults=defaults,
            create_defaults={**defaults, **self._common(event), "order": event.seq, "started_at": finished},
        )

    def _skipped(self, event: TraceEvent) -> None:
        defaults = {
            **self._common(event),
            "order": event.seq,
            "outcome": RunStep.Outcome.SKIPPED,
            "error": event.data.get("reason") or "",
            "condition": event.data.get("condition"),
        }
        RunStep.objects.update_or_create(
            **self._key(event), defaults=self._with_pending_route(event, defaults)
        )

    def _route_decided(self, event: TraceEvent) -> None:
        data = event.data
        index = data.get("chosen", data.get("step_index"))
        if index is None:
            return
        target = f"{event.call_id}/{index}"
        if not RunStep.objects.filter(run=self.run, attempt=self.attempt, call_id=target).update(
            route=dict(data)
        ):
            self.pending_routes[target] = dict(data)
