"""The event loop a worker thread runs its runs' engines on, kept from one run to the next.

Each run's engine used to get a thread and an event loop of its own (``asyncio.run``): starting the
thread, making the loop and tearing it down (its tasks, async generators and default executor) took
a few milliseconds before the first step call and after the last one, on every run, and the thread
waited for the interpreter's lock while the task thread went on. A worker thread executes one run
at a time, so it keeps one loop on one daemon thread for all of them (:func:`for_this_thread`); each
run is one task on it (:meth:`EngineLoop.submit`).

A loop is only reused when the run before ended there (its coroutine finished or reported its
outcome): an engine that did not stop after a cancel may hold its loop, so that loop is given up
(:meth:`EngineLoop.give_up`) and the next run gets a new one, as it got a new thread before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any


class EngineLoop:
    """One asyncio event loop running forever on a daemon thread of its own."""

    def __init__(self, name: str = "run-engine") -> None:
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._given_up = False
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):  # what a given-up loop still held
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    @property
    def usable(self) -> bool:
        loop = self._loop
        return not self._given_up and self.thread.is_alive() and loop is not None and not loop.is_closed()

    def submit(self, coroutine: Coroutine[Any, Any, Any], *, name: str) -> concurrent.futures.Future[Any]:
        """Run ``coroutine`` as a task of this loop; ``name`` names the thread meanwhile (logs)."""
        assert self._loop is not None
        self.thread.name = name
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def give_up(self) -> None:
        """Stop the loop once it is free (at once, unless an engine holds it; then never, as a
        stuck engine thread was never joined either); this loop is not used again."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed in between
                loop.call_soon_threadsafe(loop.stop)


_THIS_THREAD = threading.local()


def for_this_thread() -> EngineLoop:
    """The engine loop of the calling (worker) thread, made when it has none or gave its own up."""
    engine: EngineLoop | None = getattr(_THIS_THREAD, "loop", None)
    if engine is None or not engine.usable:
        engine = _THIS_THREAD.loop = EngineLoop()
    return engine


def give_up_this_threads() -> None:
    """The calling thread's loop may be held by an engine that did not stop: never use it again."""
    engine: EngineLoop | None = getattr(_THIS_THREAD, "loop", None)
    _THIS_THREAD.loop = None
    if engine is not None:
        engine.give_up()
