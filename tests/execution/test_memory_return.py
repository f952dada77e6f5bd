"""What the worker does with memory after a run (execution/services/memory.py)."""

from __future__ import annotations

import pytest

from execution.services import memory


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The malloc_trim calls made, instead of making them; the collector's state starts fresh."""
    calls: list[int] = []
    monkeypatch.setattr(memory, "_TRIM", lambda pad: calls.append(pad) or 1)
    monkeypatch.setattr(memory, "_collected", {"at": 0.0, "frozen": True})
    return calls


def test_the_last_run_to_end_collects_and_trims_the_arenas(trims: list[int]) -> None:
    memory.return_freed_memory(busy=False)
    assert trims == [0]


def test_a_run_that_ends_beside_others_leaves_the_arenas_alone(trims: list[int]) -> None:
    memory.return_freed_memory(busy=True)  # collects (the first in COLLECT_EVERY s), never trims
    assert memory._collected["at"] > 0
    assert trims == []


def test_without_malloc_trim_it_still_collects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_TRIM", None)
    monkeypatch.setattr(memory, "_collected", {"at": 0.0, "frozen": True})
    memory.return_freed_memory(busy=False)
    assert memory._collected["at"] > 0
