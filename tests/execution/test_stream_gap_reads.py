"""A stream reads the database for a live event only when events are missing before it: the next
event in sequence goes straight out, so an event followed by many streams costs no query per
stream (bench/bench_scale.py's fan-out); a gap is still filled from the stored events."""

from __future__ import annotations

import json
from typing import Any

from execution import events


class FakeEvent:
    def __init__(self, seq: int, type_: str = "run.warning") -> None:
        self.seq = seq
        self.type = type_

    def payload(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "data": {}}


def sent_after(last: int, stored: list[int]) -> tuple[Any, list[tuple[int, int | None]]]:
    reads: list[tuple[int, int | None]] = []

    def stored_after(after: int, before: int | None) -> list[FakeEvent]:
        reads.append((after, before))
        return [FakeEvent(s) for s in stored if s > after and (before is None or s < before)]

    log = events.EventLog(
        hub=events.event_hub,
        key="run-1",
        stored_after=stored_after,
        is_terminal=lambda: False,
        final_event=events.FINAL_EVENT,
    )
    return events._Sent(log, last), reads


def live(seq: int) -> str:
    return json.dumps({"seq": seq, "type": "run.warning", "data": {}})


def test_the_next_event_in_sequence_is_sent_without_reading_the_database() -> None:
    sent, reads = sent_after(3, stored=[1, 2, 3, 4])
    out = list(sent.live(live(4)))
    assert [line.split("\n")[0] for line in out] == ["id: 4"]
    assert reads == []
    assert sent.last == 4


def test_a_gap_before_a_live_event_is_filled_from_the_stored_events() -> None:
    sent, reads = sent_after(3, stored=[1, 2, 3, 4, 5, 6])
    out = list(sent.live(live(6)))
    assert [line.split("\n")[0] for line in out] == ["id: 4", "id: 5", "id: 6"]
    assert reads == [(3, 6)]


def test_an_event_already_sent_is_dropped() -> None:
    sent, reads = sent_after(5, stored=[1, 2, 3, 4, 5])
    assert list(sent.live(live(5))) == []
    assert reads == []
