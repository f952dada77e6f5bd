"""The task thread of a run keeps its time (heartbeat, deadline) however fast the engine reports,
and the engine's backlog of unstored events is bounded (execution/services/worker.py).

A looping graph reports events faster than the database stores them. The task thread used to take
everything waiting into one write, and beats the heartbeat only between writes: as the loop's events
grew (each repeated the whole call path) every write was larger and slower than the last, until
one outlasted RUN_HEARTBEAT_TIMEOUT and the reaper failed the live run as dead; the unbounded queue
meanwhile grew the worker by gigabytes."""

from __future__ import annotations

import threading
import time

from execution.engine import TraceEvent
from execution.models import Run
from execution.services import worker


def event(seq: int) -> TraceEvent:
    return TraceEvent("step.started", seq, "root/0", None, "root", 0, None, None, 0.0, {})


def test_a_batch_ends_when_the_heartbeat_is_due_however_fast_events_arrive() -> None:
    execution = worker._Execution(run=Run(), attempt=1)
    stop = threading.Event()

    def flood() -> None:
        seq = 0
        while not stop.is_set():
            seq += 1
            execution._report(event(seq))

    producer = threading.Thread(target=flood, daemon=True)
    producer.start()
    try:
        began = time.monotonic()
        batch = execution._next_batch(until=began + 0.2)
        took = time.monotonic() - began
    finally:
        stop.set()
        execution.abandoned.set()
        producer.join(5)
    assert took < 1.0, took
    assert 0 < len(batch) <= worker._MAX_BATCH


def test_a_batch_is_at_most_max_batch_items_even_before_the_heartbeat_is_due() -> None:
    execution = worker._Execution(run=Run(), attempt=1)
    for seq in range(worker._MAX_BATCH * 2):
        execution._report(event(seq))
    assert len(execution._next_batch(until=time.monotonic() + 30)) == worker._MAX_BATCH


def test_a_batch_of_large_events_ends_at_about_max_batch_bytes() -> None:
    execution = worker._Execution(run=Run(), attempt=1)
    big = {"response": {"body": "x" * 100_000, "encoding": "utf-8", "size": 100_000, "truncated": False}}
    for seq in range(200):
        execution._report(event(seq)._replace(data=big))
    batch = execution._next_batch(until=time.monotonic() + 30)
    assert len(batch) == worker._MAX_BATCH_BYTES // 100_000 + 1  # the event that passed the bound ends it


def test_the_engine_waits_while_the_backlog_is_full_and_drops_once_nobody_reads() -> None:
    execution = worker._Execution(run=Run(), attempt=1)
    for seq in range(worker._MAX_QUEUED):
        execution._report(event(seq))
    blocked = threading.Thread(target=execution._report, args=(event(-1),), daemon=True)
    blocked.start()
    blocked.join(0.5)
    assert blocked.is_alive()  # the engine waits for the database instead of growing the queue
    assert execution.events_q.qsize() == worker._MAX_QUEUED
    execution.abandoned.set()  # the task thread gave up on the run: nothing will read the queue
    blocked.join(2)
    assert not blocked.is_alive()
