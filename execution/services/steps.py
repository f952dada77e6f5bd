"""The RunStep rows of one attempt, folded from the engine's trace events as the worker stores them.

A batch of events (what one write stores) costs one insert for the steps it starts and one update
per step it changes: the recorder knows which rows of its attempt are stored (it is their only
writer while the attempt runs). A write that is tried again (the database was busy) first puts the
recorder back as it was (:meth:`StepRecorder.saved` / :meth:`StepRecorder.restore`), so storing
the same events twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from execution.engine import TraceEvent
from execution.models import Run, RunStep
from execution.rawinsert import insert_rows


def _dt(timestamp: float | None) -> datetime | None:
    return datetime.fromtimestamp(timestamp, tz=UTC) if timestamp is not None else None


@dataclass
class StepRecorder:
    """Folds trace events into the steps of ``run``'s ``attempt``.

    A Switch's ``route.decided`` may arrive before the chosen step's row exists (the engine decides,
    then starts it); the route waits in :attr:`pending_routes` until that row is written.
    """

    run: Run
    attempt: int
    pending_routes: dict[str, dict[str, Any]] = field(default_factory=dict)
    stored: set[str] = field(default_factory=set)  # call ids whose row this attempt has written
    pending: set[str] = field(default_factory=set)  # of those, the ones still in flight (outcome pending)
    _new: dict[str, RunStep] = field(default_factory=dict)  # rows of the batch being stored

    def saved(self) -> tuple[dict[str, dict[str, Any]], set[str], set[str]]:
        return dict(self.pending_routes), set(self.stored), set(self.pending)

    def restore(self, state: tuple[dict[str, dict[str, Any]], set[str], set[str]]) -> None:
        self.pending_routes, self.stored, self.pending = dict(state[0]), set(state[1]), set(state[2])

    def store(self, trace: list[TraceEvent]) -> None:
        """Fold a batch of trace events into the RunStep rows (events not about a step are ignored)."""
        self._new = {}
        folds = {
            "step.started": self._started,
            "step.finished": self._finished,
            "step.skipped": self._skipped,
            "route.decided": self._route_decided,
        }
        for event in trace:
            fold = folds.get(event.type)
            if fold is not None:
                fold(event)
        if self._new:
            insert_rows(RunStep, list(self._new.values()))
            self.stored.update(self._new)
        self._new = {}

    def _key(self, call_id: str) -> dict[str, Any]:
        return {"run": self.run, "attempt": self.attempt, "call_id": call_id}

    @staticmethod
    def _common(event: TraceEvent) -> dict[str, Any]:
        return {
            "parent_call_id": event.parent_call_id,
            "node": event.node or "",
            "step_index": event.step_index,
            "step_name": event.step_name,
            "target": event.target or "",
        }

    def _set(self, call_id: str, values: dict[str, Any], *, create: dict[str, Any] | None = None) -> None:
        """Give the step ``call_id`` these ``values``: on its row of this batch, or with an update of
        its stored row; a step not seen yet gets a new row (``create``, else ``values``)."""
        row = self._new.get(call_id)
        if row is not None:
            for name, value in values.items():
                setattr(row, name, value)
        elif call_id in self.stored:
            RunStep.objects.filter(run=self.run, attempt=self.attempt, call_id=call_id).update(**values)
        else:
            row = self._new[call_id] = RunStep(
                **self._key(call_id), **(create if create is not None else values)
            )
        outcome = row.outcome if row is not None else values.get("outcome")
        if outcome == RunStep.Outcome.PENDING:
            self.pending.add(call_id)
        elif outcome is not None:
            self.pending.discard(call_id)

    def _with_pending_route(self, call_id: str, values: dict[str, Any]) -> dict[str, Any]:
        route = self.pending_routes.pop(call_id, None)
        if route is not None:
            values["route"] = route
        return values

    def _started(self, event: TraceEvent) -> None:
        data = event.data
        values = {
            **self._common(event),
            "order": event.seq,
            "kind": data.get("kind", ""),
            "request_headers": data.get("headers") or [],
            "request": data.get("request"),
            "condition": data.get("condition"),
            "started_at": _dt(event.timestamp),
            "outcome": RunStep.Outcome.PENDING,
        }
        self._set(event.call_id, self._with_pending_route(event.call_id, values))

    def _finished(self, event: TraceEvent) -> None:
        data = event.data
        finished = _dt(event.timestamp)
        values = {
            "status_code": data.get("status"),
            "response": data.get("response"),
            "content_type": data.get("content_type"),
            "outcome": data.get("outcome") or "error",
            "error": data.get("error") or "",
            "finished_at": finished,
            "duration_ms": data.get("duration_ms"),
        }
        # Should the step's start not be stored, the finish makes the whole row, started when it finished.
        create = {**values, **self._common(event), "order": event.seq, "started_at": finished}
        self._set(event.call_id, values, create=create)

    def _skipped(self, event: TraceEvent) -> None:
        values = {
            **self._common(event),
            "order": event.seq,
            "outcome": RunStep.Outcome.SKIPPED,
            "error": event.data.get("reason") or "",
            "condition": event.data.get("condition"),
        }
        self._set(event.call_id, self._with_pending_route(event.call_id, values))

    def _route_decided(self, event: TraceEvent) -> None:
        data = event.data
        index = data.get("chosen", data.get("step_index"))
        if index is None:
            return
        target = f"{event.call_id}/{index}"
        if target in self._new or target in self.stored:
            self._set(target, {"route": dict(data)})
        else:
            self.pending_routes[target] = dict(data)
