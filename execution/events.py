"""Run events: persisted first, then fanned out through Redis pub/sub, and streamed as SSE.

The database is the source of truth. :func:`emit` numbers an event (``seq`` 1, 2, 3… per run, from a
counter on the run row, so two writers serialise on that row) and inserts it; only after the
transaction commits is it published on the channel ``run:{id}``. A stream subscribes to the channel
*before* it reads the stored backlog, so nothing falls in between; it drops what it has already
sent (by ``seq``) and fills any gap from the database. When Redis is unreachable, publishing is
skipped (logged) and streams poll the database instead: slower, never wrong.

Streams do not each subscribe: one hub per process (:func:`event_hub`, a
:class:`~execution.bus.ChannelListener`) holds ONE pub/sub connection (a pattern subscription to
every run's channel) and hands each message to the streams of that run.
200 open streams used to hold 200 connections of the process's pool (redis-py's default cap: 100)
and starve everything else. A process also serves at most ``RUN_SSE_MAX_STREAMS`` streams, and
``RUN_SSE_MAX_STREAMS_PER_USER`` per user (:class:`StreamSlots`; the API answers 429 beyond).

The Redis clients, channels and the run's cancel channel and secret headers are :mod:`execution.bus`'s.
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import redis
from django import db
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.db.models import F

from execution import bus, metrics
from execution.eventschema import RUN_EVENTS
from execution.models import LoggedEvent, Run, RunEvent
from execution.rawinsert import insert_rows

logger = logging.getLogger(__name__)
E = TypeVar("E", bound=LoggedEvent)
T = TypeVar("T")

FINAL_EVENT = RUN_EVENTS.terminal


def event_payload(event: LoggedEvent) -> dict[str, Any]:
    """The JSON of one event, as published, as sent in an SSE ``data:`` line and as listed by
    ``GET /api/runs/{id}/events/?format=json`` (or a suite run's): the stored event as it is."""
    return event.payload()


def _dumps(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False)


def publish(event: LoggedEvent) -> None:
    """Send a stored event to the live subscribers; a Redis failure is logged, never raised."""
    try:
        bus.get_redis().publish(event.channel(), _dumps(event.payload()))
    except redis.RedisError as exc:
        logger.warning("could not publish event %s on %s: %s", event.seq, event.channel(), exc)


def emit(run_id: uuid.UUID | str, type_: str, data: dict[str, Any] | None = None) -> RunEvent:
    """Persist the next event of a run and publish it once the surrounding transaction commits.

    Safe to call concurrently from several processes: the counter update locks the run row until
    commit, so events get distinct, gap-free, increasing ``seq`` values in commit order.
    """
    return emit_many(run_id, [(type_, data or {})])[0]


def emit_many(run_id: uuid.UUID | str, items: list[tuple[str, dict[str, Any]]]) -> list[RunEvent]:
    """:func:`emit` for several events at once: one counter update and one insert for all of them."""
    return append_events(Run, RunEvent, run_id, items)


def append_events(
    owner: type[models.Model], event_model: type[E], owner_id: Any, items: list[tuple[str, dict[str, Any]]]
) -> list[E]:
    """Number and store the next events of one log (``owner`` holds the ``event_seq`` counter,
    ``event_model`` the rows) and publish them once the surrounding transaction commits.

    The counter update locks the owner's row until commit, so concurrent writers get distinct,
    gap-free, increasing ``seq`` values in commit order.
    """
    if not items:
        return []
    key = f"{event_model.OWNER}_id"
    with transaction.atomic(savepoint=False):
        first = _take_seqs(owner, owner_id, len(items))
        rows = [
            event_model(**{key: owner_id}, seq=first + i, type=t, data=d) for i, (t, d) in enumerate(items)
        ]
        insert_rows(event_model, rows)  # one INSERT of our own: bulk_create's bookkeeping cost more
        transaction.on_commit(functools.partial(_publish_all, rows))
    return rows


def _take_seqs(owner: type[models.Model], owner_id: Any, n: int) -> int:
    """Add ``n`` to the owner's ``event_seq`` counter (locking its row until commit); the first of
    the ``n`` numbers taken. One ``UPDATE … RETURNING`` where the database has it (SQLite 3.35+,
    PostgreSQL), else the update and a read."""
    if db.connection.vendor in ("sqlite", "postgresql"):
        table = db.connection.ops.quote_name(owner._meta.db_table)
        pk = db.connection.ops.quote_name(owner._meta.pk.column)
        with db.connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET event_seq = event_seq + %s WHERE {pk} = %s RETURNING event_seq",  # noqa: S608
                [n, owner._meta.pk.get_db_prep_value(owner_id, db.connection)],
            )
            row = cursor.fetchone()
        if row is None:
            raise owner.DoesNotExist(f"{owner.__name__} {owner_id} does not exist")  # type: ignore[attr-defined]
        return int(row[0]) - n + 1
    manager = owner._default_manager
    manager.filter(pk=owner_id).update(event_seq=F("event_seq") + n)
    return int(manager.filter(pk=owner_id).values_list("event_seq", flat=True).get()) - n + 1


def _publish_all(created: Sequence[LoggedEvent]) -> None:
    if len(created) == 1:
        publish(created[0])
        return
    try:
        with bus.get_redis().pipeline(transaction=False) as pipe:
            for event in created:
                pipe.publish(event.channel(), _dumps(event.payload()))
            pipe.execute()
    except redis.RedisError as exc:
        logger.warning("could not publish %d events on %s: %s", len(created), created[0].channel(), exc)


# --- the event hub: one pub/sub connection per process for every stream ---------------------------


class Subscription:
    """The live events of one log (a run's, a suite run's) for one stream, as its hub receives
    them (JSON text each)."""

    def __init__(self, hub: bus.ChannelListener, key: str) -> None:
        self.hub = hub
        self.key = key
        self.queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._watch = hub.add(key, self.queue.put)

    @property
    def live(self) -> bool:
        """False while the hub has no Redis connection: the stream must poll the database."""
        return self.hub.connected

    def get(self, timeout: float) -> str | None:
        try:
            return self.queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def close(self) -> None:
        self._watch.close()


def _event_run_id(name: str) -> str | None:
    prefix, _, run_id = name.partition(":")
    return run_id if prefix == "run" and ":" not in run_id else None  # not run:{id}:control


def event_hub() -> bus.ChannelListener:
    """This process's one subscription to every run's event channel (``run:*``)."""
    return bus.listener(bus.channel("*"), _event_run_id, "run-event-hub")


def subscribe(run_id: uuid.UUID | str, timeout: float = 1.0) -> Subscription:
    """A subscription to the run's events; waits up to ``timeout`` s for the hub to be live.

    Once this returns with ``live`` true, every event published afterwards reaches it.
    """
    return subscribe_on(event_hub(), str(run_id), timeout)


def subscribe_on(hub: bus.ChannelListener, key: str, timeout: float = 1.0) -> Subscription:
    """:func:`subscribe` to the log ``key`` of any hub (``execution.suites.events``' for suite runs)."""
    subscription = Subscription(hub, key)
    subscription.hub.wait_connected(timeout)
    return subscription


class StreamSlots:
    """How many event streams this process serves, in total and per user.

    Each open stream holds a server thread (gunicorn gthread) for up to ``RUN_SSE_MAX_SECONDS``, so
    the total must stay below the server's threads, and one user must not take them all.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._per_user: dict[int, int] = {}

    def acquire(self, user_id: int) -> str | None:
        """Take a slot; None on success, else why not (the limit that was reached)."""
        with self._lock:
            total = sum(self._per_user.values())
            if total >= settings.RUN_SSE_MAX_STREAMS:
                return f"this server already serves its limit of {settings.RUN_SSE_MAX_STREAMS} event streams"
            mine = self._per_user.get(user_id, 0)
            if mine >= settings.RUN_SSE_MAX_STREAMS_PER_USER:
                return f"you already have {mine} event streams open, the limit per user"
            self._per_user[user_id] = mine + 1
            return None

    def release(self, user_id: int) -> None:
        with self._lock:
            left = self._per_user.get(user_id, 0) - 1
            if left > 0:
                self._per_user[user_id] = left
            else:
                self._per_user.pop(user_id, None)

    def open_count(self) -> int:
        with self._lock:
            return sum(self._per_user.values())


_slots = StreamSlots()


def stream_slots() -> StreamSlots:
    return _slots


class StreamLimitReached(Exception):
    """No stream slot is free for this user on this process; ``str()`` says which limit."""


class _HeldStream:
    """An event stream that holds its slot until closed. Django closes a streaming response's
    content when the response ends, also when it was never iterated (a client gone at once)."""

    def __init__(self, inner: Iterator[str], release: Callable[[], None]) -> None:
        self._inner = inner
        self._release = release
        self._closed = False

    def __iter__(self) -> _HeldStream:
        return self

    def __next__(self) -> str:
        return next(self._inner)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._inner, "close", None)
            if close is not None:
                close()
        finally:
            self._release()


def open_stream(run_id: uuid.UUID | str, last_seq: int, *, user_id: int) -> Iterator[str]:
    """:func:`stream`, counted against this process's stream limits until the caller closes it.

    Raises :class:`StreamLimitReached` when the process or the user has no slot left.
    """
    return open_log_stream(run_log(run_id), last_seq, user_id=user_id)


def open_log_stream(log: EventLog, last_seq: int, *, user_id: int) -> Iterator[str]:
    """:func:`open_stream` for any event log (a suite run's: ``execution.suites.events``)."""
    slots = stream_slots()
    refused = slots.acquire(user_id)
    if refused is not None:
        raise StreamLimitReached(refused)
    metrics.record_streams_open(slots.open_count())

    def release() -> None:
        slots.release(user_id)
        metrics.record_streams_open(slots.open_count())

    return _HeldStream(log_stream(log, last_seq), release)


# --- Server-Sent Events --------------------------------------------------------------------------


def format_sse(payload: dict[str, Any]) -> str:
    return f"id: {payload['seq']}\nevent: {payload['type']}\ndata: {_dumps(payload)}\n\n"


def _release_db() -> None:
    """Give back this thread's database connection between a stream's reads: an open stream mostly
    waits, and 200 of them holding one each would exhaust PostgreSQL's connections. The next read
    opens one again. (Inside a transaction, as in some tests, the connection stays.)"""
    if not db.connection.in_atomic_block:
        db.connection.close()


def released(value: T) -> T:
    """``value``, once this thread's database connection is given back (:func:`_release_db`)."""
    _release_db()
    return value


def _stored_after(run_id: uuid.UUID | str, after: int, before: int | None = None) -> list[RunEvent]:
    qs = RunEvent.objects.filter(run_id=run_id, seq__gt=after)
    if before is not None:
        qs = qs.filter(seq__lt=before)
    return released(list(qs.order_by("seq")))


def _run_is_terminal(run_id: uuid.UUID | str) -> bool:
    return released(Run.objects.filter(pk=run_id, status__in=Run.TERMINAL).exists())


@dataclass(frozen=True)
class EventLog:
    """A persisted event log that streams follow: the hub and key of its live events, its stored
    events after a seq (and before another), whether its owner has ended, its final event type."""

    hub: Callable[[], bus.ChannelListener]
    key: str
    stored_after: Callable[[int, int | None], Sequence[LoggedEvent]]
    is_terminal: Callable[[], bool]
    final_event: str


def run_log(run_id: uuid.UUID | str) -> EventLog:
    return EventLog(
        hub=event_hub,
        key=str(run_id),
        stored_after=functools.partial(_stored_after, run_id),
        is_terminal=functools.partial(_run_is_terminal, run_id),
        final_event=FINAL_EVENT,
    )


@dataclass
class _Sent:
    """What a stream has sent so far: events up to ``last`` (seq), and whether the final one."""

    log: EventLog
    last: int
    finished: bool = False
    sent: bool = False  # anything since the caller last cleared it

    def stored(self, before: int | None = None) -> Iterator[str]:
        """The stored events after ``last`` (and before ``before``), up to the final one.

        Read ``RUN_SSE_REPLAY_CHUNK`` seqs at a time (a log's seqs are gap-free, so a range of
        seqs is a bounded number of rows): a stream that replays a 30,000-event run from its
        start holds one chunk in memory, never the whole backlog."""
        chunk = max(1, settings.RUN_SSE_REPLAY_CHUNK)
        while True:
            upper = self.last + chunk + 1
            if before is not None:
                upper = min(upper, before)
            if upper <= self.last + 1:
                return
            start = self.last
            for event in self.log.stored_after(self.last, upper):
                self.last = event.seq
                self.sent = True
                yield format_sse(event.payload())
                if event.type == self.log.final_event:
                    self.finished = True
                    return
            if self.last - start < upper - start - 1:
                return  # the range was not full: nothing more is stored (yet)

    def live(self, data: str | None) -> Iterator[str]:
        """A published event, unless already sent; a gap before it is filled from the database
        (the events before it are committed: it was published after its own commit). The next
        event in sequence goes out without a query: one event, followed by hundreds of streams,
        must not cost each of them a database read."""
        if data is None:
            return
        payload = json.loads(data)
        seq = int(payload["seq"])
        if seq <= self.last:
            return
        if seq > self.last + 1:
            yield from self.stored(before=seq)
            if self.finished:
                return
        self.last = seq
        self.sent = True
        yield format_sse(payload)
        self.finished = payload["type"] == self.log.final_event

    def nothing_left(self) -> bool:
        """The owner is terminal and every stored event was sent: never leave a client hanging."""
        return self.log.is_terminal() and not self.log.stored_after(self.last, self.last + 2)


class _Recheck:
    """When a stream next reads the database: every ``poll`` seconds without Redis, and with Redis
    up as a safety net, since a publish can be lost (Redis restarted between a commit and its
    publish). A read that finds nothing doubles that interval up to ``ceiling``, so hundreds of
    streams idle on a long step do not each cost a query (and a connection) every few seconds;
    anything sent brings it back to ``base``, so a run that is moving has a lost final event
    delivered within ``base``."""

    def __init__(self, base: float, ceiling: float, poll: float, now: float) -> None:
        self.base = base
        self.ceiling = max(ceiling, base)
        self.poll = poll
        self.every = base
        self.last = now

    def due_in(self, now: float, live: bool) -> float:
        """Seconds until the next read (0 or less: now)."""
        return (self.every if live else self.poll) - (now - self.last)

    def heard(self, now: float) -> None:
        """A live event was sent: the channel works, every event up to it is sent."""
        self.every = self.base
        self.last = now

    def read(self, now: float, found: bool, live: bool) -> None:
        """The stored events were read; back off when they held nothing new and Redis is up
        (without Redis, the interval starts again at the base when it returns)."""
        self.every = min(self.every * 2, self.ceiling) if live and not found else self.base
        self.last = now


def stream(
    run_id: uuid.UUID | str,
    last_seq: int = 0,
    *,
    keepalive: float | None = None,
    poll: float | None = None,
    max_seconds: float | None = None,
) -> Iterator[str]:
    """SSE text for a run: stored events after ``last_seq``, then live ones, until ``run.finished``
    (:func:`log_stream` of the run's log)."""
    return log_stream(run_log(run_id), last_seq, keepalive=keepalive, poll=poll, max_seconds=max_seconds)


def log_stream(
    log: EventLog,
    last_seq: int = 0,
    *,
    keepalive: float | None = None,
    poll: float | None = None,
    max_seconds: float | None = None,
) -> Iterator[str]:
    """SSE text for an event log: stored events after ``last_seq``, then live ones, until its final
    event.

    Sends a comment every ``keepalive`` seconds while idle. Ends after the final event, when the
    owner is terminal and every stored event was sent, or after ``max_seconds`` (the client then
    reconnects with ``Last-Event-ID`` and misses nothing).
    """
    keepalive = keepalive if keepalive is not None else settings.RUN_SSE_KEEPALIVE_SECONDS
    poll = poll if poll is not None else settings.RUN_SSE_POLL_SECONDS
    max_seconds = max_seconds if max_seconds is not None else settings.RUN_SSE_MAX_SECONDS
    subscription = subscribe_on(log.hub(), log.key)  # BEFORE reading the backlog: nothing falls in between
    started = last_sent_at = time.monotonic()
    recheck = _Recheck(max(poll * 10, 2.0), settings.RUN_SSE_RECHECK_MAX_SECONDS, poll, started)
    sent = _Sent(log, last_seq)
    try:
        yield "retry: 2000\n\n"
        yield from sent.stored()
        while not sent.finished and time.monotonic() - started < max_seconds:
            now = time.monotonic()
            wait = max(0.0, min(keepalive - (now - last_sent_at), recheck.due_in(now, subscription.live)))
            sent.sent = False
            yield from sent.live(subscription.get(timeout=max(wait, 0.01)))
            now = time.monotonic()
            if sent.sent:
                recheck.heard(now)
            elif not sent.finished and recheck.due_in(now, subscription.live) <= 0:
                yield from sent.stored()
                if not sent.sent and sent.nothing_left():
                    return
                recheck.read(now, found=sent.sent, live=subscription.live)
            if sent.sent:
                last_sent_at = time.monotonic()
            elif time.monotonic() - last_sent_at >= keepalive:
                last_sent_at = time.monotonic()
                yield ": keep-alive\n\n"
    finally:
        subscription.close()
