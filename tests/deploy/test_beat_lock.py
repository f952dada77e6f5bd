"""Exactly one Celery beat sends the schedule per broker (config/beat.py): a second one waits
idle until the first stops or its lock expires. Against a real Redis (the session's)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.beat import PersistentScheduler

from config import beat
from config.celery_app import app


@pytest.fixture
def broker(redis_url: str) -> Iterator[str]:
    previous = app.conf.broker_url
    app.conf.broker_url = redis_url
    redis.Redis.from_url(redis_url).delete(beat.LOCK_KEY)
    try:
        yield redis_url
    finally:
        app.conf.broker_url = previous


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The schedulers whose tick went on to send what is due (PersistentScheduler's tick)."""
    ticks: list[Any] = []

    def tick(self: Any, *args: Any, **kwargs: Any) -> float:
        ticks.append(self)
        return 1.0

    monkeypatch.setattr(PersistentScheduler, "tick", tick)
    return ticks


def scheduler(tmp_path: Path, name: str, lock_seconds: float = beat.LOCK_SECONDS) -> beat.SingleScheduler:
    made = beat.SingleScheduler(app=app, schedule_filename=str(tmp_path / name))
    made.lock_seconds = lock_seconds
    return made


def test_the_schedule_setting_names_the_single_scheduler() -> None:
    assert app.conf.beat_scheduler == "config.beat:SingleScheduler"


def test_a_second_beat_waits_until_the_first_stops(broker: str, sent: list[Any], tmp_path: Path) -> None:
    first, second = scheduler(tmp_path, "a"), scheduler(tmp_path, "b")
    assert first.max_interval <= beat.LOCK_SECONDS / 3  # it renews the lock well before it expires
    first.tick()
    assert second.tick() == pytest.approx(beat.LOCK_SECONDS / 3)
    first.tick()
    assert sent == [first, first] and first.holding and not second.holding
    first.close()  # a clean stop hands over at once
    second.tick()
    assert sent[-1] is second
    second.close()


def test_a_killed_beats_lock_expires_and_a_standby_takes_over(
    broker: str, sent: list[Any], tmp_path: Path
) -> None:
    killed, standby = scheduler(tmp_path, "a", lock_seconds=0.5), scheduler(tmp_path, "b", lock_seconds=0.5)
    killed.tick()  # and then it never ticks again, nor closes
    standby.tick()
    assert sent == [killed]
    time.sleep(0.7)
    standby.tick()
    assert sent == [killed, standby]
    killed.tick()  # come back to life: the lock is the other's now
    assert sent == [killed, standby] and not killed.holding
    standby.close()
    killed.close()


def test_a_restarted_redis_loses_the_lock_and_one_beat_takes_it_again(
    broker: str, sent: list[Any], tmp_path: Path
) -> None:
    first, second = scheduler(tmp_path, "a"), scheduler(tmp_path, "b")
    first.tick()
    redis.Redis.from_url(broker).delete(beat.LOCK_KEY)  # what a restart without persistence does
    second.tick()
    first.tick()
    assert sent == [first, second] and second.holding and not first.holding
    second.close()
    first.close()
