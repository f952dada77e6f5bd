"""The event log of a load test: persisted, numbered and published like a run's (``execution.events``),
on the channel ``load_test:{id}``, and streamed the same way.

Event types (their data, declared in ``execution.eventschema.LOAD_EVENTS``): ``load.queued``,
``load.started``, ``load.progress`` (about twice a second) and the final ``load.finished``.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Final

from execution import bus, events
from execution.eventschema import LOAD_EVENTS
from execution.loadtests.models import LoadTest, LoadTestEvent

FINAL_EVENT: Final = LOAD_EVENTS.terminal


def emit_many(load_id: uuid.UUID | str, items: list[tuple[str, dict[str, Any]]]) -> list[LoadTestEvent]:
    """Persist the next events of a load test (in the caller's transaction) and publish them once
    it commits."""
    return events.append_events(LoadTest, LoadTestEvent, load_id, items)


def emit(load_id: uuid.UUID | str, type_: str, data: dict[str, Any]) -> LoadTestEvent:
    return emit_many(load_id, [(type_, data)])[0]


def stored_after(
    load_id: uuid.UUID | str, after: int, before: int | None = None, limit: int | None = None
) -> Sequence[LoadTestEvent]:
    qs = LoadTestEvent.objects.filter(load_test__pk=load_id, seq__gt=after)
    if before is not None:
        qs = qs.filter(seq__lt=before)
    qs = qs.order_by("seq")
    return events.released(list(qs[:limit] if limit is not None else qs))


def is_finished(load_id: uuid.UUID | str) -> bool:
    return LoadTestEvent.objects.filter(load_test__pk=load_id, type=FINAL_EVENT).exists()


def _is_terminal(load_id: uuid.UUID | str) -> bool:
    return events.released(LoadTest.objects.filter(pk=load_id, status__in=LoadTest.TERMINAL).exists())


def _load_id(channel: str) -> str | None:
    prefix, _, load_id = channel.partition(":")
    return load_id if prefix == "load_test" and ":" not in load_id else None


def load_hub() -> bus.ChannelListener:
    """This process's one subscription to every load test's event channel (``load_test:*``)."""
    return bus.listener("load_test:*", _load_id, "load-event-hub")


def load_log(load_id: uuid.UUID | str) -> events.EventLog:
    return events.EventLog(
        hub=load_hub,
        key=str(load_id),
        stored_after=functools.partial(stored_after, load_id),
        is_terminal=functools.partial(_is_terminal, load_id),
        final_event=FINAL_EVENT,
    )


def open_stream(load_id: uuid.UUID | str, last_seq: int, *, user_id: int) -> Iterator[str]:
    """The load test's events as SSE text, counted against this process's stream limits."""
    return events.open_log_stream(load_log(load_id), last_seq, user_id=user_id)
