"""The Redis bus: the clients, the channels, one listener mechanism for them, and secret headers.

Channels: ``run:{id}`` carries a run's events (published by :mod:`execution.events`);
``run:{id}:control`` carries a cancel request to the worker executing the run. The real values of
a run's secret request headers wait for its worker under ``run:{id}:secret-headers``, with a TTL;
a load test's under ``load:{id}:secret-headers`` (its own prefix: a run and a load test of the same
id could not read or overwrite each other's).

Listening costs one thread and one pub/sub connection per process, Redis URL and channel pattern,
however many runs are listened to (:class:`ChannelListener`): the event streams of a web process
share one (``run:*``), the runs a worker executes share another (``run:*:control``).

The clients are made lazily per URL, purpose and process (redis-py clients are thread-safe pools):
events (publishing), secrets (their own pool, so nothing else can use up the connections they
need) and pub/sub (the listeners' connections). The URL is ``settings.RUN_EVENTS_REDIS_URL``, read
at every call so tests can point it elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

CANCEL_MESSAGE = "cancel"

# Whose secret headers a key holds: a run's or a load test's.
SecretOwner = Literal["run", "load"]


def channel(run_id: uuid.UUID | str) -> str:
    return f"run:{run_id}"


def control_channel(run_id: uuid.UUID | str) -> str:
    return f"run:{run_id}:control"


def secret_headers_key(owner_id: uuid.UUID | str, owner: SecretOwner = "run") -> str:
    return f"{owner}:{owner_id}:secret-headers"


@functools.lru_cache(maxsize=16)
def _client(url: str, purpose: str = "events") -> redis.Redis:
    """One client (one connection pool) per URL and ``purpose``: pools are not shared across
    purposes, so a burst of one kind of call cannot exhaust the connections of another."""
    # Short timeouts: a dead Redis must cost a web request milliseconds, not a hang.
    return redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=5.0, health_check_interval=30)


def get_redis() -> redis.Redis:
    return _client(settings.RUN_EVENTS_REDIS_URL)


def _secrets_redis() -> redis.Redis:
    return _client(settings.RUN_EVENTS_REDIS_URL, "secrets")


# --- listening -----------------------------------------------------------------------------------


class Watch:
    """One registration with a :class:`ChannelListener`: ``callback`` gets each message of one run."""

    def __init__(self, listener: ChannelListener, run_id: str, callback: Callable[[str], None]) -> None:
        self.listener = listener
        self.run_id = run_id
        self.callback = callback

    def close(self) -> None:
        self.listener.remove(self)


class ChannelListener:
    """One pattern subscription per process and Redis URL, handing each message to the watches of
    its run (the run id is read from the channel name by ``run_id_of``; None skips the message).

    The thread starts with the first watch and ends when the last one leaves. When Redis goes
    away it retries every second; meanwhile :attr:`connected` is False (and a message published
    then is missed: callers poll the database as a fallback). Callbacks run on the listener's
    thread and must not block.
    """

    def __init__(self, url: str, pattern: str, run_id_of: Callable[[str], str | None], name: str) -> None:
        self.url = url
        self.pattern = pattern
        self.name = name
        self._run_id_of = run_id_of
        self._watches: dict[str, set[Watch]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def connected(self) -> bool:
        return self._ready.is_set()

    def add(self, run_id: uuid.UUID | str, callback: Callable[[str], None]) -> Watch:
        """Start handing the run's messages to ``callback``; see :meth:`wait_connected`."""
        watch = Watch(self, str(run_id), callback)
        with self._lock:
            self._watches.setdefault(watch.run_id, set()).add(watch)
            if self._thread is None or not self._thread.is_alive():
                self._ready.clear()
                self._thread = threading.Thread(target=self._listen, name=self.name, daemon=True)
                self._thread.start()
        return watch

    def wait_connected(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the subscription; once True, every message published
        afterwards reaches the watches added before."""
        return self._ready.wait(timeout)

    def remove(self, watch: Watch) -> None:
        with self._lock:
            watches = self._watches.get(watch.run_id)
            if watches is not None:
                watches.discard(watch)
                if not watches:
                    del self._watches[watch.run_id]

    def _idle(self) -> bool:
        """True (and the thread forgotten) when nobody listens any more; call with the lock held."""
        if self._watches:
            return False
        self._thread = None
        self._ready.clear()
        return True

    def _dispatch(self, message: dict[str, Any]) -> None:
        run_id = self._run_id_of(message["channel"].decode())
        if run_id is None:
            return
        data = message["data"].decode()
        with self._lock:
            watches = list(self._watches.get(run_id, ()))
        for watch in watches:
            watch.callback(data)

    def _listen(self) -> None:
        while True:
            with self._lock:
                if self._idle():
                    return
            try:
                pubsub = _client(self.url, "pubsub").pubsub(ignore_subscribe_messages=False)
                try:
                    pubsub.psubscribe(self.pattern)
                    while True:
                        message = pubsub.get_message(timeout=1.0)
                        if message is None:
                            with self._lock:
                                if self._idle():
                                    return
                        elif message["type"] == "psubscribe":
                            self._ready.set()
                        elif message["type"] == "pmessage":
                            self._dispatch(message)
                finally:
                    with contextlib.suppress(redis.RedisError, OSError):
                        pubsub.close()
            except (redis.RedisError, OSError) as exc:
                self._ready.clear()
                logger.warning("%s lost Redis (%s); retrying in 1 s", self.name, exc)
                time.sleep(1.0)


_listeners: dict[tuple[str, str], ChannelListener] = {}
_listeners_lock = threading.Lock()


def listener(pattern: str, run_id_of: Callable[[str], str | None], name: str) -> ChannelListener:
    """This process's listener for ``pattern`` on ``settings.RUN_EVENTS_REDIS_URL``."""
    url = settings.RUN_EVENTS_REDIS_URL
    with _listeners_lock:
        if (url, pattern) not in _listeners:
            _listeners[url, pattern] = ChannelListener(url, pattern, run_id_of, name)
        return _listeners[url, pattern]


# --- cancelling a running run --------------------------------------------------------------------


def _control_run_id(name: str) -> str | None:
    prefix, _, rest = name.partition(":")
    run_id, _, suffix = rest.partition(":")
    return run_id if prefix == "run" and suffix == "control" else None


def cancel_listener() -> ChannelListener:
    """The listener of every run's control channel, for the runs this worker process executes."""
    return listener(control_channel("*"), _control_run_id, "run-cancel-listener")


def publish_cancel(run_id: uuid.UUID | str) -> None:
    try:
        get_redis().publish(control_channel(run_id), CANCEL_MESSAGE)
    except redis.RedisError as exc:  # the worker's heartbeat poll still sees the flag
        logger.warning("could not publish the cancel of run %s: %s", run_id, exc)


# --- secret headers ------------------------------------------------------------------------------


def store_secret_headers(
    owner_id: uuid.UUID | str, secrets: dict[str, str], *, owner: SecretOwner = "run"
) -> bool:
    """Keep the real values of redacted headers in Redis for the worker (TTL from settings)."""
    if not secrets:
        return True
    try:
        _secrets_redis().set(
            secret_headers_key(owner_id, owner), json.dumps(secrets), ex=settings.RUN_SECRET_HEADERS_TTL
        )
        return True
    except redis.RedisError as exc:
        logger.warning("could not store the secret headers of %s %s: %s", owner, owner_id, exc)
        return False


def load_secret_headers(owner_id: uuid.UUID | str, *, owner: SecretOwner = "run") -> dict[str, str] | None:
    """The real values stored for a run (or load test); None when they expired or Redis cannot be
    reached."""
    try:
        raw = _secrets_redis().get(secret_headers_key(owner_id, owner))
    except redis.RedisError as exc:
        logger.warning("could not read the secret headers of %s %s: %s", owner, owner_id, exc)
        return None
    if raw is None:
        return None
    value = json.loads(raw)
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def delete_secret_headers(owner_id: uuid.UUID | str, *, owner: SecretOwner = "run") -> None:
    """Forget the real values at once (a load test that ended); should Redis not answer, their TTL
    still bounds how long they stay."""
    try:
        _secrets_redis().delete(secret_headers_key(owner_id, owner))
    except redis.RedisError as exc:
        logger.warning("could not delete the secret headers of %s %s: %s", owner, owner_id, exc)
