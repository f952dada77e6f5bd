"""The event log of an owner that is not a run (a suite run, a load test): its events persisted,
numbered and published like a run's (``execution.events``) on the channel ``{OWNER}:{id}``, read
back a page at a time and streamed the same way. Each owner's module binds one :class:`OwnedEventLog`
(``execution.suites.events``, ``execution.loadtests.events``)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Generic, TypeVar

from django.db import models

from execution import bus, events
from execution.loggedevent import LoggedEvent

E = TypeVar("E", bound=LoggedEvent)
Owner = uuid.UUID | str


class OwnedEventLog(Generic[E]):
    """The log of ``event_model`` rows kept for ``owner`` rows (its ``event_seq`` counter and its
    ``TERMINAL`` statuses), ending with ``final_event``; ``hub_name`` names this process's one
    subscription to every such owner's channel."""

    def __init__(
        self, owner: type[models.Model], event_model: type[E], final_event: str, hub_name: str
    ) -> None:
        self.owner = owner
        self.event_model = event_model
        self.final_event = final_event
        self.hub_name = hub_name
        self.prefix = event_model.OWNER

    def emit_many(self, owner_id: Owner, items: list[tuple[str, dict[str, Any]]]) -> list[E]:
        """Persist the next events (in the caller's transaction) and publish them once it commits."""
        return events.append_events(self.owner, self.event_model, owner_id, items)

    def emit(self, owner_id: Owner, type_: str, data: dict[str, Any]) -> E:
        return self.emit_many(owner_id, [(type_, data)])[0]

    def stored_after(
        self, owner_id: Owner, after: int, before: int | None = None, limit: int | None = None
    ) -> Sequence[E]:
        """The stored events after ``after`` (and before ``before``), the first ``limit``."""
        qs = self.event_model._default_manager.filter(**{f"{self.prefix}__pk": owner_id, "seq__gt": after})
        if before is not None:
            qs = qs.filter(seq__lt=before)
        qs = qs.order_by("seq")
        return events.released(list(qs[:limit] if limit is not None else qs))

    def is_finished(self, owner_id: Owner) -> bool:
        """Whether the final event is stored."""
        manager = self.event_model._default_manager
        return manager.filter(**{f"{self.prefix}__pk": owner_id, "type": self.final_event}).exists()

    def total(self, owner_id: Owner) -> int:
        """How many events the owner has stored (its last ``seq``); 0 when there is no such owner."""
        stored = self.owner._default_manager.filter(pk=owner_id).values_list("event_seq", flat=True)
        return int(stored.first() or 0)

    def is_terminal(self, owner_id: Owner) -> bool:
        """Whether the owner has ended (its status is terminal), whatever its log holds yet."""
        owner: Any = self.owner
        return events.released(owner._default_manager.filter(pk=owner_id, status__in=owner.TERMINAL).exists())

    def _owner_id(self, channel: str) -> str | None:
        prefix, _, owner_id = channel.partition(":")
        return owner_id if prefix == self.prefix and ":" not in owner_id else None

    def hub(self) -> bus.ChannelListener:
        """This process's one subscription to every owner's event channel (``{OWNER}:*``)."""
        return bus.listener(f"{self.prefix}:*", self._owner_id, self.hub_name)

    def log(self, owner_id: Owner) -> events.EventLog:
        return events.EventLog(
            hub=self.hub,
            key=str(owner_id),
            stored_after=functools.partial(self.stored_after, owner_id),
            is_terminal=functools.partial(self.is_terminal, owner_id),
            final_event=self.final_event,
        )

    def open_stream(self, owner_id: Owner, last_seq: int, *, user_id: int) -> Iterator[str]:
        """The events as SSE text, counted against this process's stream limits
        (``execution.events.StreamLimitReached`` when none is left)."""
        return events.open_log_stream(self.log(owner_id), last_seq, user_id=user_id)
