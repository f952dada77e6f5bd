"""The event log of a suite run: persisted, numbered and published like a run's
(``execution.events``), on the channel ``suite:{id}``, and streamed the same way.

Event types (their data): ``suite.started`` (total), ``case.started`` (case, name, run),
``case.finished`` (case, name, outcome, run, failures, error, duration_ms, counts) and the final
``suite.finished`` (status, counts, duration_ms, budgets: the latency budgets' verdict), also sent when a suite run is cancelled.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Final

from execution import bus, events
from execution.eventschema import SUITE_EVENTS
from execution.suites.models import SuiteEvent, SuiteRun

FINAL_EVENT: Final = SUITE_EVENTS.terminal


def emit_many(suite_id: uuid.UUID | str, items: list[tuple[str, dict[str, Any]]]) -> list[SuiteEvent]:
    """Persist the next events of a suite run (in the caller's transaction) and publish them once
    it commits."""
    return events.append_events(SuiteRun, SuiteEvent, suite_id, items)


def emit(suite_id: uuid.UUID | str, type_: str, data: dict[str, Any]) -> SuiteEvent:
    return emit_many(suite_id, [(type_, data)])[0]


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


def stored_after(
    suite_id: uuid.UUID | str, after: int, before: int | None = None, limit: int | None = None
) -> Sequence[SuiteEvent]:
    """The suite run's stored events after ``after`` (and before ``before``), the first ``limit``."""
    qs = SuiteEvent.objects.filter(suite__pk=suite_id, seq__gt=after)
    if before is not None:
        qs = qs.filter(seq__lt=before)
    qs = qs.order_by("seq")
    return events.released(list(qs[:limit] if limit is not None else qs))


def is_finished(suite_id: uuid.UUID | str) -> bool:
    """Whether the suite run's terminal event is stored."""
    return SuiteEvent.objects.filter(suite__pk=suite_id, type=FINAL_EVENT).exists()


def _is_terminal(suite_id: uuid.UUID | str) -> bool:
    return events.released(SuiteRun.objects.filter(pk=suite_id, status__in=SuiteRun.TERMINAL).exists())


def _suite_id(channel: str) -> str | None:
    prefix, _, suite_id = channel.partition(":")
    return suite_id if prefix == "suite" and ":" not in suite_id else None


def suite_hub() -> bus.ChannelListener:
    """This process's one subscription to every suite run's event channel (``suite:*``)."""
    return bus.listener("suite:*", _suite_id, "suite-event-hub")


def suite_log(suite_id: uuid.UUID | str) -> events.EventLog:
    return events.EventLog(
        hub=suite_hub,
        key=str(suite_id),
        stored_after=functools.partial(stored_after, suite_id),
        is_terminal=functools.partial(_is_terminal, suite_id),
        final_event=FINAL_EVENT,
    )


def open_stream(suite_id: uuid.UUID | str, last_seq: int, *, user_id: int) -> Iterator[str]:
    """The suite run's events as SSE text, counted against this process's stream limits
    (``execution.events.StreamLimitReached`` when none is left)."""
    return events.open_log_stream(suite_log(suite_id), last_seq, user_id=user_id)
