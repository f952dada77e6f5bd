"""With Redis up, an event stream still reads the database now and then, in case a publish was
lost (Redis restarted between a commit and its publish). An idle stream backs off those reads (they
cost each of hundreds of idle watchers a query and a connection) up to RUN_SSE_RECHECK_MAX_SECONDS,
a live event brings them back to the base interval, and a lost final event is still delivered."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from execution import events


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class FakeEvent:
    def __init__(self, seq: int, type_: str) -> None:
        self.seq = seq
        self.type = type_

    def payload(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "data": {}}


class FakeSubscription:
    """Live events scheduled at given times; waiting moves the clock."""

    live = True

    def __init__(self, clock: Clock, scheduled: list[tuple[float, int, str]]) -> None:
        self.clock = clock
        self.scheduled = sorted(scheduled)

    def get(self, timeout: float) -> str | None:
        due = self.clock.now + timeout
        if self.scheduled and self.scheduled[0][0] <= due:
            at, seq, type_ = self.scheduled.pop(0)
            self.clock.now = max(self.clock.now, at)
            return json.dumps({"seq": seq, "type": type_, "data": {}})
        self.clock.now = due
        return None

    def close(self) -> None:
        pass


class Log:
    """A stored log whose events appear at given times; counts the database reads."""

    def __init__(self, clock: Clock, stored: list[tuple[float, int, str]], ends_at: float | None) -> None:
        self.clock = clock
        self.stored = stored
        self.ends_at = ends_at
        self.reads: list[float] = []

    def stored_after(self, after: int, before: int | None) -> list[FakeEvent]:
        self.reads.append(self.clock.now)
        return [
            FakeEvent(seq, type_)
            for at, seq, type_ in self.stored
            if at <= self.clock.now and seq > after and (before is None or seq < before)
        ]

    def is_terminal(self) -> bool:
        return self.ends_at is not None and self.clock.now >= self.ends_at


def follow(
    monkeypatch: Any,
    stored: list[tuple[float, int, str]],
    live: list[tuple[float, int, str]],
    *,
    ends_at: float | None,
) -> tuple[list[tuple[float, str]], Log]:
    clock = Clock()
    log = Log(clock, stored, ends_at)
    monkeypatch.setattr(events.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(events, "subscribe_on", lambda hub, key: FakeSubscription(clock, live))
    event_log = events.EventLog(
        hub=events.event_hub,
        key="run-1",
        stored_after=log.stored_after,
        is_terminal=log.is_terminal,
        final_event=events.FINAL_EVENT,
    )
    sent = []
    for text in events.log_stream(event_log, 0, keepalive=15.0, poll=0.5, max_seconds=600.0):
        if text.startswith("id: "):
            sent.append((clock.now, text.split("\n")[1].removeprefix("event: ")))
    return sent, log


@pytest.fixture(autouse=True)
def recheck_ceiling(settings: Any) -> None:
    settings.RUN_SSE_RECHECK_MAX_SECONDS = 30.0


def test_an_idle_stream_backs_off_its_database_reads(monkeypatch: Any) -> None:
    # A run whose one step takes five minutes: nothing is published meanwhile.
    t0 = 1000.0
    sent, log = follow(monkeypatch, stored=[], live=[(t0 + 300, 1, events.FINAL_EVENT)], ends_at=None)
    assert [type_ for _, type_ in sent] == [events.FINAL_EVENT]
    checks = [at for at in log.reads if at < t0 + 300]
    # 5, 10, 20, then every 30 s (poll 0.5 s: a base of 10 polls): about 13 reads in 300 s, where a
    # fixed 5 s made 60.
    assert len(checks) <= 16, checks
    gaps = [b - a for a, b in itertools.pairwise(checks)]
    assert max(gaps) <= 30.0 + 0.5


def test_a_live_event_brings_the_checks_back_to_the_base_interval(monkeypatch: Any) -> None:
    t0 = 1000.0
    # Idle for 200 s, then an event; its final event's publish is lost: stored, never published.
    stored = [(t0 + 200, 1, "run.warning"), (t0 + 201, 2, events.FINAL_EVENT)]
    sent, _ = follow(monkeypatch, stored=stored, live=[(t0 + 200, 1, "run.warning")], ends_at=t0 + 201)
    assert [type_ for _, type_ in sent] == ["run.warning", events.FINAL_EVENT]
    final_at = sent[-1][0]
    assert final_at - (t0 + 201) <= 5.0 + 0.5  # the base interval again, not the 30 s reached while idle


def test_a_lost_final_event_of_an_idle_stream_arrives_within_the_ceiling(monkeypatch: Any) -> None:
    t0 = 1000.0
    stored = [(t0 + 500, 1, events.FINAL_EVENT)]
    sent, _ = follow(monkeypatch, stored=stored, live=[], ends_at=t0 + 500)
    assert [type_ for _, type_ in sent] == [events.FINAL_EVENT]
    assert sent[0][0] - (t0 + 500) <= 30.0 + 0.5
