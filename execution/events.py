"""Run events: persisted first, then fanned out through Redis pub/sub, and streamed as SSE.

The database is the source of truth. :func:`emit` numbers an event (``seq`` 1, 2, 3… per run, from a
counter on the run row, so two writers serialise on that row) and inserts it; only after the
transaction commits is it published on the channel ``run:{id}``. A stream subscribes to the channel
*before* it reads the stored backlog, so nothing falls in between; it drops what it has already
sent (by ``seq``) and fills any gap from the database. When Redis is unreachable, publishing is
skipped (logged) and streams poll the database instead: slower, never wrong.

A cancel request is published on the control channel ``run:{id}:control`` for the worker running it.

The Redis client is made lazily per URL and process (redis-py clients are thread-safe pools); the
URL is ``settings.RUN_EVENTS_REDIS_URL``, read at every call so tests can point it elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import redis
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import F

from execution.models import Run, RunEvent

logger = logging.getLogger(__name__)

FINAL_EVENT = "run.finished"
CANCEL_MESSAGE = "cancel"


def channel(run_id: uuid.UUID | str) -> str:
    return f"run:{run_id}"


def control_channel(run_id: uuid.UUID | str) -> str:
    return f"run:{run_id}:control"


def secret_headers_key(run_id: uuid.UUID | str) -> str:
    return f"run:{run_id}:secret-headers"


@functools.lru_cache(maxsize=8)
def _client(url: str) -> redis.Redis:
    # Short timeouts: a dead Redis must cost a web request milliseconds, not a hang.
    return redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=5.0, health_check_interval=30)


def get_redis() -> redis.Redis:
    return _client(settings.RUN_EVENTS_REDIS_URL)


def event_payload(event: RunEvent) -> dict[str, Any]:
    """The JSON of one event, as published and as sent in an SSE ``data:`` line."""
    return {
        "run": str(event.run_id),
        "seq": event.seq,
        "type": event.type,
        "created_at": event.created_at.isoformat() if event.created_at else None,
        "data": event.data,
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False)


def publish(event: RunEvent) -> None:
    """Send a stored event to the live subscribers; a Redis failure is logged, never raised."""
    try:
        get_redis().publish(channel(event.run_id), _dumps(event_payload(event)))
    except redis.RedisError as exc:
        logger.warning("could not publish event %s of run %s: %s", event.seq, event.run_id, exc)


def emit(run_id: uuid.UUID | str, type_: str, data: dict[str, Any] | None = None) -> RunEvent:
    """Persist the next event of a run and publish it once the surrounding transaction commits.

    Safe to call concurrently from several processes: the counter update locks the run row until
    commit, so events get distinct, gap-free, increasing ``seq`` values in commit order.
    """
    return emit_many(run_id, [(type_, data or {})])[0]


def emit_many(run_id: uuid.UUID | str, items: list[tuple[str, dict[str, Any]]]) -> list[RunEvent]:
    """:func:`emit` for several events at once: one counter update and one insert for all of them."""
    if not items:
        return []
    with transaction.atomic(savepoint=False):
        Run.objects.filter(pk=run_id).update(event_seq=F("event_seq") + len(items))
        last = Run.objects.filter(pk=run_id).values_list("event_seq", flat=True).get()
        first = last - len(items) + 1
        created = RunEvent.objects.bulk_create(
            [RunEvent(run_id=run_id, seq=first + i, type=t, data=d) for i, (t, d) in enumerate(items)]
        )
        transaction.on_commit(functools.partial(_publish_all, created))
    return created


def _publish_all(created: list[RunEvent]) -> None:
    if len(created) == 1:
        publish(created[0])
        return
    try:
        with get_redis().pipeline(transaction=False) as pipe:
            for event in created:
                pipe.publish(channel(event.run_id), _dumps(event_payload(event)))
            pipe.execute()
    except redis.RedisError as exc:
        logger.warning("could not publish %d events of run %s: %s", len(created), created[0].run_id, exc)


class CancelListener:
    """One subscriber per process and Redis URL for every run's control channel (``run:*:control``).

    Workers register the runs they execute with a callback; a cancel message calls it (from the
    listener's thread). One thread and one connection serve all the runs of a worker process,
    instead of one of each per run.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._callbacks: dict[str, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, run_id: uuid.UUID | str, callback: Callable[[], None], timeout: float = 2.0) -> bool:
        """Call ``callback`` when the run is cancelled; True once the subscription is live."""
        with self._lock:
            self._callbacks[str(run_id)] = callback
            if self._thread is None or not self._thread.is_alive():
                self._ready.clear()
                self._thread = threading.Thread(target=self._listen, name="run-cancel-listener", daemon=True)
                self._thread.start()
        return self._ready.wait(timeout)

    def unwatch(self, run_id: uuid.UUID | str) -> None:
        with self._lock:
            self._callbacks.pop(str(run_id), None)

    def _listen(self) -> None:
        while True:
            with self._lock:
                if not self._callbacks:
                    self._thread = None
                    return
            try:
                pubsub = _client(self.url).pubsub(ignore_subscribe_messages=False)
                pubsub.psubscribe(control_channel("*"))
                try:
                    while True:
                        message = pubsub.get_message(timeout=1.0)
                        if message is None:
                            with self._lock:
                                if not self._callbacks:
                                    self._thread = None
                                    return
                            continue
                        if message["type"] == "psubscribe":
                            self._ready.set()
                        elif message["type"] == "pmessage":
                            run_id = message["channel"].decode().split(":")[1]
                            with self._lock:
                                callback = self._callbacks.get(run_id)
                            if callback is not None:
                                callback()
                finally:
                    _close(pubsub)
            except (redis.RedisError, OSError) as exc:
                self._ready.clear()
                logger.warning("cancel listener lost Redis (%s); retrying in 1 s", exc)
                time.sleep(1.0)


_listeners: dict[str, CancelListener] = {}
_listeners_lock = threading.Lock()


def cancel_listener() -> CancelListener:
    url = settings.RUN_EVENTS_REDIS_URL
    with _listeners_lock:
        if url not in _listeners:
            _listeners[url] = CancelListener(url)
        return _listeners[url]


def publish_cancel(run_id: uuid.UUID | str) -> None:
    try:
        get_redis().publish(control_channel(run_id), CANCEL_MESSAGE)
    except redis.RedisError as exc:  # the worker's heartbeat poll still sees the flag
        logger.warning("could not publish the cancel of run %s: %s", run_id, exc)


# --- secret headers ------------------------------------------------------------------------------


def store_secret_headers(run_id: uuid.UUID | str, secrets: dict[str, str]) -> bool:
    """Keep the real values of redacted headers in Redis for the worker (TTL from settings)."""
    if not secrets:
        return True
    try:
        get_redis().set(secret_headers_key(run_id), json.dumps(secrets), ex=settings.RUN_SECRET_HEADERS_TTL)
        return True
    except redis.RedisError as exc:
        logger.warning("could not store the secret headers of run %s: %s", run_id, exc)
        return False


def load_secret_headers(run_id: uuid.UUID | str) -> dict[str, str] | None:
    """The real values stored for a run; None when they expired or Redis cannot be reached."""
    try:
        raw = get_redis().get(secret_headers_key(run_id))
    except redis.RedisError as exc:
        logger.warning("could not read the secret headers of run %s: %s", run_id, exc)
        return None
    if raw is None:
        return None
    value = json.loads(raw)
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


# --- Server-Sent Events --------------------------------------------------------------------------


def format_sse(payload: dict[str, Any]) -> str:
    return f"id: {payload['seq']}\nevent: {payload['type']}\ndata: {_dumps(payload)}\n\n"


def _stored_after(run_id: uuid.UUID | str, after: int, before: int | None = None) -> list[RunEvent]:
    qs = RunEvent.objects.filter(run_id=run_id, seq__gt=after)
    if before is not None:
        qs = qs.filter(seq__lt=before)
    return list(qs.order_by("seq"))


def _subscribe(run_id: uuid.UUID | str) -> Any:
    try:
        pubsub = get_redis().pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(channel(run_id))
        return pubsub
    except redis.RedisError as exc:
        logger.warning("event stream of run %s falls back to polling: %s", run_id, exc)
        return None


def stream(
    run_id: uuid.UUID | str,
    last_seq: int = 0,
    *,
    keepalive: float | None = None,
    poll: float | None = None,
    max_seconds: float | None = None,
) -> Iterator[str]:
    """SSE text for a run: stored events after ``last_seq``, then live ones, until ``run.finished``.

    Sends a comment every ``keepalive`` seconds while idle. Ends after the final event, when the
    run is terminal and every stored event was sent, or after ``max_seconds`` (the client then
    reconnects with ``Last-Event-ID`` and misses nothing).
    """
    keepalive = keepalive if keepalive is not None else settings.RUN_SSE_KEEPALIVE_SECONDS
    poll = poll if poll is not None else settings.RUN_SSE_POLL_SECONDS
    max_seconds = max_seconds if max_seconds is not None else settings.RUN_SSE_MAX_SECONDS
    # A safety net even with Redis up: a publish can be lost (Redis restarted between commit and send).
    recheck = max(poll * 10, 2.0)
    pubsub = _subscribe(run_id)  # BEFORE reading the backlog: nothing can fall in between
    started = last_sent_at = last_check = time.monotonic()
    last = last_seq
    try:
        yield "retry: 2000\n\n"

        def from_db(before: int | None = None) -> Iterator[tuple[str, bool]]:
            nonlocal last
            for event in _stored_after(run_id, last, before):
                last = event.seq
                yield format_sse(event_payload(event)), event.type == FINAL_EVENT

        for text, final in from_db():
            yield text
            if final:
                return
        while time.monotonic() - started < max_seconds:
            now = time.monotonic()
            wait = max(
                0.0,
                min(
                    keepalive - (now - last_sent_at),
                    (poll if pubsub is None else recheck) - (now - last_check),
                ),
            )
            message = None
            if pubsub is not None:
                try:
                    message = pubsub.get_message(timeout=max(wait, 0.01))
                except (redis.RedisError, OSError) as exc:
                    logger.warning("event stream of run %s lost Redis, polling instead: %s", run_id, exc)
                    _close(pubsub)
                    pubsub = None
            else:
                time.sleep(max(wait, 0.01))
            sent = False
            if message is not None and message.get("type") == "message":
                payload = json.loads(message["data"])
                seq = int(payload["seq"])
                if seq > last:
                    for text, final in from_db(before=seq):  # a gap: the earlier ones are committed
                        yield text
                        sent = True
                        if final:
                            return
                    last = seq
                    yield format_sse(payload)
                    sent = True
                    if payload["type"] == FINAL_EVENT:
                        return
            now = time.monotonic()
            if now - last_check >= (poll if pubsub is None else recheck):
                last_check = now
                for text, final in from_db():
                    yield text
                    sent = True
                    if final:
                        return
                if (
                    not sent
                    and Run.objects.filter(pk=run_id, status__in=Run.TERMINAL).exists()
                    and not _stored_after(run_id, last)
                ):
                    return  # terminal and nothing left: never leave a client hanging
            if sent:
                last_sent_at = time.monotonic()
            elif time.monotonic() - last_sent_at >= keepalive:
                last_sent_at = time.monotonic()
                yield ": keep-alive\n\n"
    finally:
        if pubsub is not None:
            _close(pubsub)


def _close(pubsub: Any) -> None:
    with contextlib.suppress(redis.RedisError, OSError):
        pubsub.close()
