"""Attack item 5: event streams must not starve Redis for everyone.

Each open stream used to hold its own pub/sub connection from the process's Redis pool (redis-py's
default: 100 connections), so 200 streams by one user exhausted it: other users' runs lost their
secret headers and the web fell back to polling. Now one pub/sub connection per process serves
every stream, secret headers have their own pool, and one user may hold only
``RUN_SSE_MAX_STREAMS_PER_USER`` streams per process (429 beyond). Records ``sse_streams_open``,
``sse_redis_connections`` and ``sse_other_runs_ok`` for make reliability.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import redis

from execution import bus, events

pytestmark = pytest.mark.django_db(transaction=True)

USERS = 20
PER_USER = 10  # 20 users x 10 streams: the attack's 200 streams, each user within the limit
OTHER_RUNS = 5


def make_user_with_run(name: str) -> tuple[str, str]:
    """A user, their token, and a queued run of their own graph (no worker runs it)."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from execution.services import runs
    from graphs import services as graph_services

    user = get_user_model().objects.create_user(name, password=f"{name}-password-1")
    graph = graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": f"{name}-graph"},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "m"}]}}},
        },
    )
    run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=user, payload={})
    return str(Token.objects.create(user=user).key), str(run.pk)


class Streams:
    """Open SSE streams from client threads; each stays open until :meth:`close_all`."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.statuses: list[int] = []
        self.retry_after: list[str | None] = []
        self.opened = threading.Semaphore(0)
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def open(self, token: str, run_id: str) -> None:
        thread = threading.Thread(target=self._hold, args=(token, run_id), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _hold(self, token: str, run_id: str) -> None:
        headers = {"Authorization": f"Token {token}", "Accept": "text/event-stream"}
        try:
            with (
                httpx.Client(base_url=self.base, headers=headers, timeout=60) as client,
                client.stream("GET", f"/api/runs/{run_id}/events/") as response,
            ):
                with self.lock:
                    self.statuses.append(response.status_code)
                    self.retry_after.append(response.headers.get("Retry-After"))
                chunks = response.iter_raw()  # kept: dropping the iterator closes the stream
                if response.status_code == 200:
                    next(chunks)  # the stream has started
                self.opened.release()
                self.stop.wait()
                chunks.close()
        except httpx.HTTPError:
            with self.lock:
                self.statuses.append(-1)
                self.retry_after.append(None)
            self.opened.release()

    def wait_opened(self, count: int) -> None:
        for _ in range(count):
            assert self.opened.acquire(timeout=60), "a stream never answered"

    def close_all(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def wait_for_no_streams() -> None:
    """Until the server noticed every closed client (at its next keep-alive write)."""
    deadline = time.monotonic() + 30
    while events.stream_slots().open_count() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert events.stream_slots().open_count() == 0


def redis_connections(url: str) -> int:
    probe = redis.Redis.from_url(url)
    try:
        return len(probe.client_list()) - 1  # without this probe
    finally:
        probe.close()


def test_one_user_cannot_open_more_than_the_limit(live_server: Any, fault_settings: Any) -> None:
    from execution.services import environments

    fault_settings.RUN_SSE_KEEPALIVE_SECONDS = 0.3
    fault_settings.RUN_SSE_MAX_STREAMS_PER_USER = PER_USER
    environments.ensure_local_environment()
    token, run_id = make_user_with_run("attacker")
    streams = Streams(live_server.url)
    for _ in range(40):
        streams.open(token, run_id)
    try:
        streams.wait_opened(40)
    finally:
        streams.close_all()
    assert streams.statuses.count(200) == PER_USER, streams.statuses
    assert streams.statuses.count(429) == 40 - PER_USER
    assert all(
        int(r or 0) >= 1 for s, r in zip(streams.statuses, streams.retry_after, strict=True) if s == 429
    )
    wait_for_no_streams()


def test_many_open_streams_leave_other_users_runs_alone(
    live_server: Any, fault_settings: Any, fault_redis: Any, record_figure: Callable[[str, Any], None]
) -> None:
    from execution.services import environments

    fault_settings.RUN_SSE_KEEPALIVE_SECONDS = 0.5
    fault_settings.RUN_SSE_MAX_STREAMS_PER_USER = PER_USER
    fault_settings.RUN_SSE_MAX_STREAMS = USERS * PER_USER + 50
    environments.ensure_local_environment()
    viewers = [make_user_with_run(f"viewer{i}") for i in range(USERS)]
    bob_token, _ = make_user_with_run("bob")
    streams = Streams(live_server.url)
    for token, run_id in viewers:
        for _ in range(PER_USER):
            streams.open(token, run_id)
    try:
        streams.wait_opened(USERS * PER_USER)
        open_now = streams.statuses.count(200)
        connections = redis_connections(fault_redis.url)
        # Bob starts runs with a secret header while the streams are open.
        kept = 0
        raw = redis.Redis.from_url(fault_redis.url)
        with httpx.Client(
            base_url=live_server.url, headers={"Authorization": f"Token {bob_token}"}, timeout=60
        ) as bob:
            for i in range(OTHER_RUNS):
                response = bob.post(
                    "/api/graphs/bob-graph/runs/",
                    json={"payload": {"i": i}, "headers": {"Authorization": f"Bearer bob-{i}"}},
                )
                assert response.status_code == 202, response.text
                stored = raw.get(bus.secret_headers_key(response.json()["id"]))
                kept += stored is not None and b"bob-" in stored
            # and his own stream gets a live event
            run_id = response.json()["id"]
            with bob.stream(
                "GET", f"/api/runs/{run_id}/events/", headers={"Accept": "text/event-stream"}
            ) as live:
                assert live.status_code == 200
                lines = live.iter_lines()
                while "run.queued" not in next(lines):
                    pass
                events.emit(run_id, "run.warning", {"message": "ping"})
                while "ping" not in next(lines):
                    pass
        raw.close()
    finally:
        streams.close_all()
    record_figure("sse_streams_open", open_now)
    record_figure("sse_redis_connections", connections)
    record_figure("sse_other_runs_ok", f"{kept}/{OTHER_RUNS}")
    assert open_now == USERS * PER_USER, streams.statuses
    assert kept == OTHER_RUNS
    assert connections < 20, f"{connections} Redis connections for {open_now} streams"
    wait_for_no_streams()
