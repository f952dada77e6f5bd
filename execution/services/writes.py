"""How a worker writes: one thread at a time on SQLite, and a busy database tried again briefly."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import OperationalError, connection

from config.exceptions import is_database_busy

logger = logging.getLogger(__name__)
T = TypeVar("T")

# SQLite has one writer at a time, and a connection that finds the write lock taken sleeps in
# growing steps (up to 100 ms) before it retries. The worker's threads therefore take turns on a
# process-wide lock first: a thread waiting here wakes the moment the previous write commits.
_SQLITE_WRITES = threading.Lock()


def write_turn() -> contextlib.AbstractContextManager[Any]:
    return _SQLITE_WRITES if connection.vendor == "sqlite" else contextlib.nullcontext()


# How long a worker keeps retrying a write that found the database busy (each try already waits
# SQLite's busy timeout, STUDIO_SQLITE_TIMEOUT). Kept under RUN_HEARTBEAT_TIMEOUT (20 s): a worker
# that stays silent longer than that is taken for dead and its run is requeued.
_BUSY_RETRY_SECONDS = 10.0


def retry_while_busy(write: Callable[[], T]) -> T:
    """``write()``, tried again while the database answers "locked"/"busy", for a few seconds.

    ``write`` must be a whole transaction (or a single statement), so a failed try left nothing.
    Raises the last OperationalError once the time is up, and any other error at once.
    """
    deadline = time.monotonic() + _BUSY_RETRY_SECONDS
    pause = 0.05
    while True:
        try:
            return write()
        except OperationalError as exc:
            if not is_database_busy(exc) or time.monotonic() + pause > deadline:
                raise
            logger.warning("database busy (%s); trying again in %.2f s", exc, pause)
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
