"""The event log of a suite run: persisted, numbered and published like a run's
(``execution.eventlogs``), on the channel ``suite:{id}``, and streamed the same way.

Event types (their data): ``suite.started`` (total), ``case.started`` (case, name, run),
``case.finished`` (case, name, outcome, run, failures, error, duration_ms, counts) and the final
``suite.finished`` (status, counts, duration_ms, budgets: the latency budgets' verdict), also sent when a suite run is cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Final

from execution.eventlogs import OwnedEventLog
from execution.eventschema import SUITE_EVENTS
from execution.suites.models import SuiteEvent, SuiteRun

FINAL_EVENT: Final = SUITE_EVENTS.terminal
LOG: Final = OwnedEventLog(SuiteRun, SuiteEvent, FINAL_EVENT, "suite-event-hub")

emit_many = LOG.emit_many
emit = LOG.emit
stored_after = LOG.stored_after
is_finished = LOG.is_finished
open_stream = LOG.open_stream


def emit_for(suite: SuiteRun, type_: str, data: dict[str, Any]) -> None:
    """Emit an event of ``suite``, or, inside :func:`batched`, add it to the events written together
    at its end (one counter update and one insert for a verdict and the next case's start)."""
    outbox: list[tuple[str, dict[str, Any]]] | None = getattr(suite, "_outbox", None)
    if outbox is None:
        emit(suite.pk, type_, data)
    else:
        outbox.append((type_, data))


@contextlib.contextmanager
def batched(suite: SuiteRun, first: Sequence[tuple[str, dict[str, Any]]] = ()) -> Iterator[None]:
    """The events of ``suite`` emitted inside (after ``first``), written together, in order, when it
    ends normally."""
    outbox: list[tuple[str, dict[str, Any]]] = list(first)
    suite._outbox = outbox  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del suite._outbox  # type: ignore[attr-defined]
    emit_many(suite.pk, outbox)
