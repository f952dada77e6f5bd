"""Step endpoints that hang, flood or drip: each step fails at its cap or timeout with a clear
cause in the trace, and the worker process's memory stays bounded.

The endpoints are tiny raw-socket HTTP servers on loopback (TCP_NODELAY on every connection), so
they can do what no well-behaved server would: never answer, stream 100 MB without a length, or
send one byte per second forever.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from faultkit import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

MB = 1024 * 1024
FLOOD_BYTES = 100 * MB
STEP_TIMEOUT = 3.0
RSS_GROWTH_LIMIT = 100 * MB


class _Handler(socketserver.BaseRequestHandler):
    server: HostileServer

    def handle(self) -> None:
        conn: socket.socket = self.request
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(30)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            piece = conn.recv(4096)
            if not piece:
                return
            request += piece
        path = request.split(b" ", 2)[1].decode()
        stop = self.server.stopping
        try:
            if path == "/hang":  # never a byte back
                stop.wait(60)
            elif path == "/flood":  # 100 MB, no Content-Length: only a byte count can stop it
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                )
                block = b"x" * (64 * 1024)
                for _ in range(FLOOD_BYTES // len(block)):
                    if stop.is_set():
                        break
                    conn.sendall(block)
            elif path == "/declared":  # says 100 MB up front, then sends it
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {FLOOD_BYTES}\r\n\r\n".encode()
                )
                block = b"x" * (64 * 1024)
                for _ in range(FLOOD_BYTES // len(block)):
                    if stop.is_set():
                        break
                    conn.sendall(block)
            elif path == "/drip":  # a valid start, then one byte per second
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                )
                for _ in range(1000):
                    if stop.wait(1.0):
                        break
                    conn.sendall(b" ")
        except OSError:
            pass  # the engine hung up on us: that is the point


class HostileServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopping = threading.Event()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def test_hanging_flooding_and_dripping_steps_fail_cleanly_with_bounded_worker_memory(
    start_worker: Any, start_run: Any, make_graph: Any, hostile: HostileServer, record_figure: Any
) -> None:
    from execution.models import Environment, Run

    environment = Environment.objects.create(
        name="hostile",
        visibility="shared",
        allow_loopback=True,
        step_timeout=STEP_TIMEOUT,
        deadline=30,
    )
    limit = 10 * MB  # settings.RUN_MAX_RESPONSE_BYTES, the worker's default
    expected = {
        "hang": "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        "flood": f"response body exceeds the engine's {limit}-byte limit",
        "declared": f"response body exceeds the engine's {limit}-byte limit",
        "drip": "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
    }
    graphs = {
        kind: make_graph(f"hostile-{kind}", [{"name": kind, "serviceUrl": hostile.url(f"/{kind}")}])
        for kind in expected
    }
    worker = start_worker(concurrency=4)
    # Warm up: the first run imports and connects everything a run needs, so what follows
    # measures what the hostile answers cost, not the worker's first import of httpx.
    warm = start_run(graphs["hang"], environment)
    wait_until(
        lambda: Run.objects.get(pk=warm.pk).status == "failed",
        timeout=60,
        what=f"the warm-up run\n{worker.log_tail()}",
    )
    before = worker.rss_bytes()

    runs = [(kind, start_run(graphs[kind], environment).pk) for _ in range(3) for kind in expected]
    began = time.monotonic()
    peak = before
    while Run.objects.filter(pk__in=[pk for _, pk in runs]).exclude(status__in=Run.TERMINAL).exists():
        assert time.monotonic() - began < 60, f"hostile runs not finished\n{worker.log_tail()}"
        peak = max(peak, worker.rss_bytes())
        time.sleep(0.05)
    after = worker.rss_bytes()

    for kind, pk in runs:
        run = Run.objects.get(pk=pk)
        assert run.status == "failed" and run.response_status == 500, (kind, run.status, run.error)
        step = run.steps.get()
        assert step.outcome == "error" and step.status_code is None, (kind, step.outcome)
        assert expected[kind] in step.error, (kind, step.error)
        assert run.error == step.error or expected[kind] in run.error, (kind, run.error)
        if kind in ("hang", "drip"):  # stopped at the step timeout, not at the run's deadline
            assert STEP_TIMEOUT - 0.1 <= step.duration_ms / 1000 < STEP_TIMEOUT + 2, (kind, step.duration_ms)
    growth, peak_growth = after - before, peak - before
    record_figure("worker_rss_growth_mb", round(growth / MB, 1))
    record_figure("worker_rss_peak_growth_mb", round(peak_growth / MB, 1))
    assert growth < RSS_GROWTH_LIMIT, (
        f"worker RSS grew {growth / MB:.0f} MB (peak +{peak_growth / MB:.0f} MB)"
    )
    assert peak_growth < RSS_GROWTH_LIMIT, f"worker RSS peaked {peak_growth / MB:.0f} MB above its start"
    assert worker.alive()
