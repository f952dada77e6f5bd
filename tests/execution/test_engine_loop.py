"""A worker thread keeps one engine loop for its runs, and gives up a loop an engine may hold
(execution/services/engineloop.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from execution.services import engineloop

T = TypeVar("T")


async def which_thread() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


def in_new_thread(work: Callable[[], T]) -> T:
    out: list[T] = []
    thread = threading.Thread(target=lambda: out.append(work()))
    thread.start()
    thread.join(10)
    return out[0]


def test_a_thread_runs_its_runs_on_one_loop_and_other_threads_on_theirs() -> None:
    def two_runs() -> tuple[engineloop.EngineLoop, engineloop.EngineLoop, str, str]:
        first = engineloop.for_this_thread()
        name_a = first.submit(which_thread(), name="run-a").result(5)
        second = engineloop.for_this_thread()
        name_b = second.submit(which_thread(), name="run-b").result(5)
        return first, second, name_a, name_b

    first, second, name_a, name_b = in_new_thread(two_runs)
    assert first is second
    assert (name_a, name_b) == ("run-a", "run-b")  # the loop's thread is named after its run
    other, *_ = in_new_thread(two_runs)
    assert other is not first
    assert other.thread is not first.thread


def test_a_loop_given_up_is_replaced_and_stops_once_free() -> None:
    def give_up() -> tuple[engineloop.EngineLoop, engineloop.EngineLoop, str]:
        held = engineloop.for_this_thread()
        engineloop.give_up_this_threads()
        fresh = engineloop.for_this_thread()
        return held, fresh, fresh.submit(which_thread(), name="run-c").result(5)

    held, fresh, name = in_new_thread(give_up)
    assert fresh is not held
    assert name == "run-c"
    held.thread.join(5)
    assert not held.thread.is_alive()  # nothing held it: it stopped


def test_a_loop_held_by_a_stuck_engine_is_not_given_to_the_next_run() -> None:
    release = threading.Event()

    async def stuck() -> None:
        release.wait(10)  # blocks the loop, as an engine that ignores its cancel would

    def runs() -> tuple[engineloop.EngineLoop, engineloop.EngineLoop, str]:
        held = engineloop.for_this_thread()
        held.submit(stuck(), name="run-stuck")
        engineloop.give_up_this_threads()  # what the worker does when the engine did not stop
        fresh = engineloop.for_this_thread()
        return held, fresh, fresh.submit(which_thread(), name="run-next").result(5)

    try:
        held, fresh, name = in_new_thread(runs)
        assert fresh is not held
        assert name == "run-next"  # the next run was not queued behind the stuck one
        assert held.thread.is_alive()
    finally:
        release.set()
    held.thread.join(5)
    assert not held.thread.is_alive()
