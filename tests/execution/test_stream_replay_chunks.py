"""A stream replays a long stored backlog a bounded chunk at a time: starting from the beginning
of a run with thousands of events never reads (and holds) the whole backlog at once, and still
sends every event once, in order, up to the final one."""

from __future__ import annotations

from typing import Any

from execution import events


class FakeEvent:
    def __init__(self, seq: int, type_: str = "step.started") -> None:
        self.seq = seq
        self.type = type_

    def payload(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "data": {}}


def fake_log(count: int, *, final: bool = True) -> tuple[events.EventLog, list[int]]:
    """A log of ``count`` stored events (the last one final when ``final``); the sizes of its reads."""
    stored = [FakeEvent(s) for s in range(1, count + 1)]
    if final:
        stored[-1] = FakeEvent(count, events.FINAL_EVENT)
    sizes: list[int] = []

    def stored_after(after: int, before: int | None) -> list[FakeEvent]:
        rows = [e for e in stored if e.seq > after and (before is None or e.seq < before)]
        sizes.append(len(rows))
        return rows

    log = events.EventLog(
        hub=events.event_hub,
        key="run-1",
        stored_after=stored_after,  # type: ignore[arg-type]
        is_terminal=lambda: True,
        final_event=events.FINAL_EVENT,
    )
    return log, sizes


def ids(lines: list[str]) -> list[int]:
    return [int(line.split("\n")[0].removeprefix("id: ")) for line in lines]


def test_a_long_backlog_is_read_a_chunk_at_a_time_and_sent_whole(settings: Any) -> None:
    settings.RUN_SSE_REPLAY_CHUNK = 500
    log, sizes = fake_log(1203)
    sent = events._Sent(log, 0)
    assert ids(list(sent.stored())) == list(range(1, 1204))
    assert sent.finished and sent.last == 1203
    assert sizes == [500, 500, 203]


def test_a_backlog_without_its_final_event_stops_where_the_stored_events_end(settings: Any) -> None:
    settings.RUN_SSE_REPLAY_CHUNK = 100
    log, sizes = fake_log(250, final=False)
    sent = events._Sent(log, 40)
    assert ids(list(sent.stored())) == list(range(41, 251))
    assert not sent.finished
    assert max(sizes) <= 100
    assert sent.nothing_left() and sizes[-1] <= 1


def test_a_gap_before_a_live_event_is_filled_in_chunks_up_to_it(settings: Any) -> None:
    settings.RUN_SSE_REPLAY_CHUNK = 100
    log, sizes = fake_log(1000)
    sent = events._Sent(log, 10)
    assert ids(list(sent.stored(before=333))) == list(range(11, 333))
    assert sizes == [100, 100, 100, 22]
