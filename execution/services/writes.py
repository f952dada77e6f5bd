"""How a worker writes: one writer at a time on SQLite (threads and processes take turns), the
writes of the runs a process executes committed together, and a busy database tried again briefly."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import OperationalError, connection, transaction

from config.exceptions import is_database_busy

logger = logging.getLogger(__name__)
T = TypeVar("T")

# SQLite has one writer at a time, and a connection that finds the write lock taken sleeps in
# growing steps (up to 100 ms) before it retries. The worker's threads therefore take turns on a
# process-wide lock first, and the processes on an advisory lock of a file beside the database
# (flock: the kernel wakes the next waiter the moment the previous write commits). The web
# process does not take these turns; its writes wait on SQLite's busy timeout as before.
_SQLITE_WRITES = threading.Lock()


@contextlib.contextmanager
def _sqlite_turn() -> Iterator[None]:
    with _SQLITE_WRITES:
        name = str(connection.settings_dict["NAME"])
        if not name or name == ":memory:" or name.startswith("file:"):
            yield
            return
        fd = os.open(name + ".write-turn", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by close(), also when the process dies
            yield
        finally:
            os.close(fd)


def write_turn() -> contextlib.AbstractContextManager[Any]:
    return _sqlite_turn() if connection.vendor == "sqlite" else contextlib.nullcontext()


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


@dataclass
class _Write:
    work: Callable[[], Any]
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


class GroupCommit:
    """The writes of every run this process executes, committed together (group commit).

    A run's thread hands its write (a function doing queries, no commit of its own) to
    :meth:`write` and waits until it is committed. Whichever waiting thread gets the turn first
    (the leader) takes every write queued by then and does them all in ONE transaction, each in a
    savepoint of its own, so a write that fails is rolled back alone and raised in its own thread.
    Eight runs that each store their step's events at the same moment cost one commit (one fsync,
    one turn on SQLite's write lock) instead of eight.

    What a write registers with ``transaction.on_commit`` (publishing events) runs after that one
    commit: an event is never announced before it is stored. A write may run more than once (the
    whole group is tried again when the database was busy) and on another thread than its caller's:
    it must start from the state it needs (see ``_Execution._persist``).
    """

    def __init__(self) -> None:
        self._turn = threading.Lock()
        self._queued: list[_Write] = []
        self._queued_lock = threading.Lock()

    def write(self, work: Callable[[], T]) -> T:
        """``work()`` in a transaction shared with the other runs' writes; its result, or its error."""
        if connection.in_atomic_block:  # the caller's own transaction (a test's): write in it

            def alone() -> T:
                with write_turn(), transaction.atomic():
                    return work()

            return retry_while_busy(alone)
        item = _Write(work)
        with self._queued_lock:
            self._queued.append(item)
        while not item.done.is_set():
            with self._turn:
                if item.done.is_set():
                    break
                with self._queued_lock:
                    group, self._queued = self._queued, []
                _commit(group)
        if item.error is not None:
            raise item.error
        return item.result  # type: ignore[no-any-return]


def _commit(group: list[_Write]) -> None:
    """Do ``group``'s writes in one transaction (tried again while the database is busy) and hand
    each its result or error. A failure of the whole group is every write's error; only what
    interrupts the thread itself (KeyboardInterrupt, SystemExit) is raised, after answering them."""

    def attempt() -> list[tuple[Any, BaseException | None]]:
        outcomes: list[tuple[Any, BaseException | None]] = []
        with write_turn(), transaction.atomic():
            for item in group:
                try:
                    with transaction.atomic():  # a savepoint: this write's failure is its own
                        outcomes.append((item.work(), None))
                except OperationalError as exc:
                    if is_database_busy(exc):
                        raise  # the whole group is tried again
                    outcomes.append((None, exc))
                except Exception as exc:
                    outcomes.append((None, exc))
        return outcomes

    outcomes: list[tuple[Any, BaseException | None]] | None = None
    try:
        outcomes = retry_while_busy(attempt)
    except Exception as exc:  # the group's transaction failed: every write of it did
        connection.close_if_unusable_or_obsolete()
        outcomes = [(None, exc)] * len(group)
    finally:  # every write is answered, even when this thread is interrupted: its caller waits
        interrupted = RuntimeError("the write was interrupted before its commit")
        for item, (result, error) in zip(group, outcomes or [(None, interrupted)] * len(group), strict=True):
            item.result, item.error = result, error
            item.done.set()


# The one group of this process (worker threads share it).
GROUP = GroupCommit()
