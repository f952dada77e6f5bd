"""Returning the memory a finished run left in reference cycles and malloc arenas (the worker calls
this after each run)."""

from __future__ import annotations

import ctypes
import gc
import threading
import time
from collections.abc import Callable

# A full collection at most this often while other runs are in flight (seconds).
COLLECT_EVERY = 2.0
_collected = {"at": 0.0, "frozen": False}
_lock = threading.Lock()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS). Looked up
    among the symbols the interpreter already loaded (``find_library`` may run ``ldconfig``)."""
    return getattr(ctypes.CDLL(None), "malloc_trim", None)  # type: ignore[no-any-return]


_TRIM = _malloc_trim()


def return_freed_memory(*, busy: bool) -> None:
    """Free what a finished run left in reference cycles, now rather than at some later collection;
    ``busy``: other runs of this process are still in flight.

    A failed step's exception keeps its traceback, whose frames keep the bodies they were reading;
    those cycles wait for Python's cycle collector, which a worker that allocates little between
    runs may not run for a long time. Measured on a 40 x 9 MiB Ensemble stopped by its budget
    (tests/reliability/test_run_memory.py): the worker stayed 73 MiB above its start after the run
    without this, 2 to 38 MiB with the collection alone, 1 to 2 MiB once the malloc arenas are
    trimmed too (when no other run is in flight).

    A full collection holds the GIL while it walks every object of the process, stopping every
    other run of the worker meanwhile: tens of ms for a loaded Django process, more than the CPU of
    a short run. So the objects the process had when its first run ended (modules, settings,
    Django's caches: they live as long as the process) are frozen out of the collector's walks
    (``gc.freeze``, at the first moment no run is in flight), and while other runs are in flight a
    collection happens at most every :data:`COLLECT_EVERY` s; the last run to end always collects.
    """
    now = time.monotonic()
    with _lock:
        if busy and now - _collected["at"] < COLLECT_EVERY:
            return
        _collected["at"] = now
        freeze = not busy and not _collected["frozen"]  # no run's objects are frozen with them
        _collected["frozen"] = _collected["frozen"] or freeze
    gc.collect()
    if freeze:
        gc.freeze()
    if not busy and _TRIM is not None:
        # Bodies are large allocations, each thread's from its own malloc arena; freed, they stay
        # in the arenas (and in RSS) until the arena's top is free. With nothing else in flight,
        # give every arena's free pages back (about 0.01 ms when there is little to give).
        _TRIM(0)
