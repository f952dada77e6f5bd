"""The Redis bus's one listener mechanism, against the session's real Redis: the event hub of the
streams and the workers' cancel listener are two listeners of it, each on its own channels."""

from __future__ import annotations

import queue
import time
import uuid

import redis

from execution import bus, events


def _publish_until_received(url: str, channel: str, message: str, inbox: queue.SimpleQueue[str]) -> str:
    """Publish once the listener's subscription is live; the message reaches it."""
    redis.Redis.from_url(url).publish(channel, message)
    return inbox.get(timeout=5)


def test_a_cancel_reaches_only_the_watch_of_its_run(redis_url: str) -> None:
    listener = bus.cancel_listener()
    mine, other = str(uuid.uuid4()), str(uuid.uuid4())
    got_mine: queue.SimpleQueue[str] = queue.SimpleQueue()
    got_other: queue.SimpleQueue[str] = queue.SimpleQueue()
    watches = [listener.add(mine, got_mine.put), listener.add(other, got_other.put)]
    try:
        assert listener.wait_connected(5)
        # An event on the run's event channel is not a cancel.
        redis.Redis.from_url(redis_url).publish(bus.channel(mine), '{"seq":1}')
        bus.publish_cancel(mine)
        assert got_mine.get(timeout=5) == bus.CANCEL_MESSAGE
        assert got_other.empty() and got_mine.empty()
    finally:
        for watch in watches:
            watch.close()


def test_the_event_hub_hands_a_runs_events_to_its_streams_and_not_its_cancels(redis_url: str) -> None:
    run_id = str(uuid.uuid4())
    first = events.subscribe(run_id, timeout=5)
    second = events.subscribe(run_id, timeout=5)
    try:
        assert first.live and second.live
        bus.publish_cancel(run_id)  # the worker's channel: no stream sees it
        redis.Redis.from_url(redis_url).publish(bus.channel(run_id), '{"seq":7}')
        assert first.get(timeout=5) == '{"seq":7}' and second.get(timeout=5) == '{"seq":7}'
        assert first.get(timeout=0.2) is None
    finally:
        first.close()
        second.close()


def test_the_listener_stops_when_its_last_watch_leaves(redis_url: str) -> None:
    """One thread per process and pattern, and none at all once nobody listens."""
    listener = bus.listener("test-bus:*", lambda name: name.partition(":")[2], "test-bus-listener")
    inbox: queue.SimpleQueue[str] = queue.SimpleQueue()
    watch = listener.add("a", inbox.put)
    assert bus.listener("test-bus:*", lambda name: None, "ignored") is listener
    assert listener.wait_connected(5)
    assert _publish_until_received(redis_url, "test-bus:a", "hello", inbox) == "hello"
    watch.close()
    give_up = time.monotonic() + 5  # the thread notices within one read timeout (1 s)
    while listener.connected and time.monotonic() < give_up:
        time.sleep(0.05)
    assert not listener.connected
