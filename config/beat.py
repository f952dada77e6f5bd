"""Celery beat's scheduler for the studio: exactly one beat sends the schedule per broker.

Each beat holds a lock in the broker's Redis before it sends anything (``SET NX PX``, renewed on
every tick, released when it stops). A second beat on the same broker (a second ``make run`` on a
shared ``REDIS_URL``, a scaled compose service, a worker started with ``-B``) starts, finds the
lock taken and waits as a standby, sending nothing; it takes over within ``LOCK_SECONDS`` of the
first one dying (at once when the first one stops cleanly). With another broker than Redis there
is no lock: run one beat.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
from typing import Any

import redis
from celery.beat import PersistentScheduler

logger = logging.getLogger(__name__)

LOCK_KEY = "studio:beat:lock"
# How long a beat's lock outlives its last renewal: the longest a standby waits after the beat
# that held it was killed. A holder renews it at least three times within this (every tick).
LOCK_SECONDS = 30.0

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class SingleScheduler(PersistentScheduler):
    """:class:`~celery.beat.PersistentScheduler` that sends only while it holds the lock."""

    lock_seconds = LOCK_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
        self.holding = False
        self._client: redis.Redis | None = None
        super().__init__(*args, **kwargs)
        self.max_interval = min(self.max_interval, self.lock_seconds / 3)  # type: ignore[has-type]

    def _redis(self) -> redis.Redis | None:
        url = str(self.app.conf.broker_url or "")
        if not url.startswith(("redis://", "rediss://", "unix://")):
            return None
        if self._client is None:
            self._client = redis.Redis.from_url(url, socket_connect_timeout=2.0, socket_timeout=5.0)
        return self._client

    def hold(self) -> bool:
        """Take or renew the lock; whether this beat may send now."""
        client = self._redis()
        if client is None:
            return True
        ttl = int(self.lock_seconds * 1000)
        try:
            held = bool(self.holding and client.eval(_RENEW, 1, LOCK_KEY, self.token, ttl)) or bool(
                client.set(LOCK_KEY, self.token, nx=True, px=ttl)
            )
        except redis.RedisError as exc:  # no Redis: nothing could be sent anyway
            logger.warning("beat: cannot reach Redis for the scheduler's lock: %s", exc)
            held = False
        if held != self.holding:
            if held:
                logger.info("beat: this scheduler holds the lock and sends the schedule")
            else:
                logger.info("beat: another scheduler holds the lock (%s); this one waits", LOCK_KEY)
        self.holding = held
        return held

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self.hold():
            return self.lock_seconds / 3
        return float(min(super().tick(*args, **kwargs), self.lock_seconds / 3))

    def close(self) -> None:
        client = self._redis()
        if client is not None and self.holding:
            with contextlib.suppress(redis.RedisError):  # else it expires on its own
                client.eval(_RELEASE, 1, LOCK_KEY, self.token)
            self.holding = False
        super().close()
