"""Engine benchmark: prints ratios against fixed step delays, a direct httpx baseline and a naive router.

    python bench/bench_engine.py [--repeats N]

Every engine figure is printed beside the same figure of a deliberately naive router measured in
the same run by the same harness (:class:`NaiveRouter`: a thread per Ensemble step, a new
``urllib`` connection per call, no guard, no caps, no Go exactness): the floor the engine's
overhead is held to.

A third column is the step server's own latency (:class:`ServerFloor`: prebuilt requests on
keep-alive sockets, each sent in one piece, answers read with a selector; no HTTP library, no
router). The goals are ratios to the nominal delays (a 10 ms step counted as 10 ms), but no server
answers in exactly 10 ms: a sleep overshoots and a client that waited 10 ms takes a while to wake,
so on P2 the server alone scores above 1 for any client. The floor column shows that share of
every figure, measured in the same run; the ``/ floor`` rows divide the engine's figure by it.
Both are printed: the floor explains a figure, it does not replace it.

**The step server** is ``bench/leanserver.py`` (since the transport's third pass,
``bench/README.md``; before, the tests' ``tests/stepserver.py``): a thread per keep-alive connection that reads a request, sleeps
the route's delay with a 1 us timer slack and sends a prebuilt answer in one piece. The tests'
server parses every request with ``http.server`` and sleeps with the default 50 us slack, which
put about 0.1 ms per call into every column. The engine, the naive router and the floor all call
this same server in the same run, so the change lowers the floor under all three alike; the goals
and the bound (the nominal delays) are unchanged. The P3 CPU rows (this process's CPU time per
hop, every thread counted) move much less with the machine's load than the walls do.

The step server runs in a child process, so that its threads do not compete with the engine for
this process's GIL; every figure is a median over repeats after a warm-up. Nothing is asserted:
the goals are printed beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import multiprocessing
import selectors
import socket
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout's engine (the venv's editable install may be another)

from execution.engine import EngineConfig, UrlGuard, make_client, run_graph  # noqa: E402
from execution.engine.tracecontext import TraceContext  # noqa: E402
from graphs.language.model import Manifest, Metadata, Node, Spec, Step  # noqa: E402


def _serve(conn: Connection) -> None:
    """Child process: the lean step server with /d0, /d10, /d50; answers control messages on ``conn``."""
    from leanserver import LeanServer

    server = LeanServer().start()
    for delay_ms in (0, 10, 50):
        server.route(f"/d{delay_ms}", {"predictions": [1, 2]}, delay_ms / 1000)
    conn.send(server.port)
    while True:
        message = conn.recv()
        if message == "connections":
            conn.send(server.connections)
        elif message == "reset":
            server.reset()
            conn.send("ok")
        else:
            server.stop()
            conn.send("stopped")
            return


class NaiveRouter:
    """The simplest router that could work: blocking ``urllib`` calls, a new TCP connection for
    each, a new thread for each Ensemble step; the answers combined as KServe combines them."""

    @staticmethod
    def call(url: str, body: bytes) -> bytes:
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
            return data

    def ensemble(self, urls: list[str], body: bytes) -> bytes:
        answers: dict[str, Any] = {}

        def step(index: int, url: str) -> None:
            answers[str(index)] = json.loads(self.call(url, body))

        threads = [threading.Thread(target=step, args=(i, url)) for i, url in enumerate(urls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(answers) == len(urls)
        return json.dumps(answers).encode()

    def sequence(self, urls: list[str], body: bytes) -> bytes:
        for url in urls:
            body = self.call(url, body)
        return body


class ServerFloor:
    """The step server's own latency: the cheapest client there is, kept out of every router's way.

    One keep-alive socket per concurrent call (opened before the first measure), the request
    prebuilt and sent with one ``send``, the answers of concurrent calls read as they come through
    a selector on this one thread. The step server always answers with a Content-Length.
    """

    def __init__(self, host: str, port: int) -> None:
        self._address = (host, port)
        self._socks: list[socket.socket] = []

    def _sockets(self, count: int) -> list[socket.socket]:
        while len(self._socks) < count:
            sock = socket.create_connection(self._address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._socks.append(sock)
        return self._socks[:count]

    @staticmethod
    def _request(path: str, body: bytes) -> bytes:
        head = f"POST {path} HTTP/1.1\r\nHost: step\r\nContent-Type: application/json\r\n"
        return head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body

    def calls(self, path: str, body: bytes, width: int) -> None:
        """``width`` concurrent calls to ``path``; returns when every answer is read."""
        request = self._request(path, body)
        pending = {sock: b"" for sock in self._sockets(width)}
        for sock in pending:
            sock.sendall(request)
        with selectors.DefaultSelector() as selector:
            for sock in pending:
                selector.register(sock, selectors.EVENT_READ, sock)
            while pending:
                for key, _ in selector.select():
                    sock = key.data
                    data = pending[sock] + sock.recv(65536)
                    if _answer_complete(data):
                        del pending[sock]
                        selector.unregister(sock)
                    else:
                        pending[sock] = data

    def sequence(self, path: str, body: bytes, length: int) -> None:
        for _ in range(length):
            self.calls(path, body, 1)

    def close(self) -> None:
        for sock in self._socks:
            sock.close()


def _answer_complete(data: bytes) -> bool:
    head, found, rest = data.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(rest) >= int(value)
    raise AssertionError("the step server answers with a Content-Length")


def _manifest(router_type: str, urls: list[str], chain: bool = False) -> Manifest:
    steps = tuple(
        Step(index=i, service_url=url, data="$response" if chain and i > 0 else None)
        for i, url in enumerate(urls)
    )
    return Manifest(
        api_version="serving.kserve.io/v1alpha1",
        kind="InferenceGraph",
        metadata=Metadata(name="bench"),
        spec=Spec(nodes={"root": Node(name="root", router_type=router_type, steps=steps)}),
        document={},
    )


async def _medians(fns: list[Callable[[], Awaitable[Any]]], repeats: int, warmup: int = 2) -> list[float]:
    """The median wall time of each of ``fns``, run in turn within every repeat, so that a load
    that comes and goes on the machine weighs on all of them alike."""
    for _ in range(warmup):
        for fn in fns:
            await fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, times in zip(fns, samples, strict=True):
            started = time.perf_counter()
            await fn()
            times.append(time.perf_counter() - started)
    return [statistics.median(times) for times in samples]


def _cpu_timed(fn: Callable[[], Awaitable[Any]], into: list[float]) -> Callable[[], Awaitable[Any]]:
    """``fn``, with this process's CPU time of each call appended to ``into`` (warm-ups too)."""

    async def go() -> None:
        started = time.process_time()
        await fn()
        into.append(time.process_time() - started)

    return go


Row = tuple[str, str, str, str, str]


async def _bench(base: str, control: Connection, repeats: int) -> list[Row]:
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(guard=guard, step_timeout=30)
    bare = EngineConfig(step_timeout=30)
    naive = NaiveRouter()
    host, port = base.removeprefix("http://").rsplit(":", 1)
    floor = ServerFloor(host, int(port))
    request = b'{"instances":[1,2]}'
    rows: list[Row] = []
    async with make_client(guard=guard) as client, make_client() as plain:

        def runner(
            graph: Manifest, cfg: EngineConfig, http: httpx.AsyncClient
        ) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:
                result = await run_graph(graph, request, {}, config=cfg, client=http)
                assert result.status == 200, result.body

            return go

        def blocking(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:  # blocks the loop: nothing else runs on it meanwhile
                fn()

            return go

        def gather(width: int, path: str) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:
                await asyncio.gather(*(plain.post(f"{base}{path}", content=b"{}") for _ in range(width)))

            return go

        def chain(length: int, path: str) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:
                for _ in range(length):
                    await plain.post(f"{base}{path}", content=b"{}")

            return go

        async def quartet(router_type: str, width: int, path: str) -> list[float]:
            """Median walls of the engine, the naive router, the server floor and direct httpx
            calls on ``width`` steps at ``path`` (a Sequence chains each answer into the next)."""
            urls = [f"{base}{path}"] * width
            if router_type == "Ensemble":
                naive_fn = blocking(lambda: naive.ensemble(urls, request))
                floor_fn = blocking(lambda: floor.calls(path, request, width))
                direct = gather(width, path)
            else:
                naive_fn = blocking(lambda: naive.sequence(urls, request))
                floor_fn = blocking(lambda: floor.sequence(path, request, width))
                direct = chain(width, path)
            graph = _manifest(router_type, urls, chain=router_type != "Ensemble")
            return await _medians([runner(graph, config, client), naive_fn, floor_fn, direct], repeats)

        ens8, naive8, floor8, base8 = await quartet("Ensemble", 8, "/d50")
        rows.append(_ratio_row("P1 ensemble 8 x 50 ms: wall / 50 ms", ens8, naive8, floor8, 0.050, "<= 1.10"))
        rows.append(_floor_row("  engine / floor", ens8, floor8, naive8))
        rows.append(("  baseline: direct httpx gather 8 x 50 ms / 50 ms", f"{base8 / 0.050:.3f}", "", "", ""))

        seq10, naive10, floor10, base10 = await quartet("Sequence", 10, "/d10")
        rows.append(
            _ratio_row("P2 sequence 10 x 10 ms: wall / 100 ms", seq10, naive10, floor10, 0.100, "<= 1.08")
        )
        rows.append(_floor_row("  engine / floor", seq10, floor10, naive10))
        rows.append(
            ("  baseline: 10 direct httpx calls x 10 ms / 100 ms", f"{base10 / 0.100:.3f}", "", "", "")
        )

        # What tracing adds: a traceparent per step call (a span id derived, a header added, the id
        # recorded in step.started); the spans themselves are derived after the run, off this path.
        traced = dataclasses.replace(config, trace=TraceContext("4bf92f3577b34da6a3ce929d0e0e4736", "1"))
        graph10 = _manifest("Sequence", [f"{base}/d10"] * 10, chain=True)
        untraced_s, traced_s = await _medians(
            [runner(graph10, config, client), runner(graph10, traced, client)], repeats
        )
        rows.append(
            ("P2 with a trace context / without: wall", f"{traced_s / untraced_s:.3f}", "", "", "<= 1.05")
        )
        graph0 = _manifest("Sequence", [f"{base}/d0"] * 50, chain=True)
        trace_cpu: list[list[float]] = [[], []]
        await _medians(
            [
                _cpu_timed(runner(graph0, config, client), trace_cpu[0]),
                _cpu_timed(runner(graph0, traced, client), trace_cpu[1]),
            ],
            repeats,
        )
        untraced_cpu, traced_cpu = (statistics.median(times) for times in trace_cpu)
        rows.append(
            (
                "  this process's CPU per 0 ms hop, traced / untraced",
                f"{traced_cpu / untraced_cpu:.3f}",
                "",
                "",
                "",
            )
        )

        hops = 50
        urls0 = [f"{base}/d0"] * hops
        for label, cfg, http in (("with URL guard", config, client), ("no guard", bare, plain)):
            graph = _manifest("Sequence", urls0, chain=True)

            async def direct(http: httpx.AsyncClient = http) -> None:
                for _ in range(hops):
                    response = await http.post(f"{base}/d0", content=request)
                    assert response.status_code == 200

            cpu: list[list[float]] = [[], [], []]
            engine_s, naive_s, floor_s, direct_s = await _medians(
                [
                    _cpu_timed(runner(graph, cfg, http), cpu[0]),
                    _cpu_timed(blocking(lambda: naive.sequence(urls0, request)), cpu[1]),
                    _cpu_timed(blocking(lambda: floor.sequence("/d0", request, hops)), cpu[2]),
                    direct,
                ],
                repeats,
            )
            hop_ms, naive_hop, floor_hop = (t / hops * 1000 for t in (engine_s, naive_s, floor_s))
            rows.append(
                (
                    f"P3 ms per hop, 0 ms steps ({label})",
                    f"{hop_ms:.3f} ms",
                    f"{naive_hop:.3f} ms",
                    f"{floor_hop:.3f} ms",
                    "<= 0.4 ms",
                )
            )
            rows.append(
                (
                    f"  engine hop - floor hop ({label})",
                    f"{hop_ms - floor_hop:.3f} ms",
                    f"{naive_hop - floor_hop:.3f} ms",
                    "",
                    "",
                )
            )
            rows.append(
                (
                    f"  this process's CPU per hop ({label})",
                    *(f"{statistics.median(times) / hops * 1000:.3f} ms" for times in cpu),
                    "",
                )
            )
            overhead = (engine_s - direct_s) / hops * 1000
            rows.append((f"  engine hop - direct httpx call ({label})", f"{overhead:.3f} ms", "", "", ""))

        ens32, naive32, floor32, base32 = await quartet("Ensemble", 32, "/d50")
        rows.append(
            (
                "P4 ensemble 32-wide / 8-wide wall",
                f"{ens32 / ens8:.3f}",
                f"{naive32 / naive8:.3f}",
                f"{floor32 / floor8:.3f}",
                "<= 1.15",
            )
        )
        rows.append(("  baseline: direct httpx gather 32-wide / 8-wide", f"{base32 / base8:.3f}", "", "", ""))
    floor.close()

    control.send("reset")
    control.recv()
    async with make_client(guard=guard) as fresh:
        await runner(_manifest("Sequence", [f"{base}/d0"] * 100, chain=True), config, fresh)()
    control.send("connections")
    rows.append(("TCP connections for a 100-step sequence", str(control.recv()), "", "", "= 1"))
    return rows


def _ratio_row(name: str, engine: float, naive: float, floor: float, nominal: float, goal: str) -> Row:
    return (name, f"{engine / nominal:.3f}", f"{naive / nominal:.3f}", f"{floor / nominal:.3f}", goal)


def _floor_row(name: str, engine: float, floor: float, naive: float) -> Row:
    """A figure divided by the server floor of the same run (the naive router's beside it)."""
    return (name, f"{engine / floor:.3f}", f"{naive / floor:.3f}", "1", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rows = with_step_server(lambda base, control: asyncio.run(_bench(base, control, args.repeats)))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'engine':>10}  {'naive':>10}  {'floor':>10}  goal (and <= naive)")
    print("-" * (width + 57))
    for name, value, naive, floor, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {naive:>10}  {floor:>10}  {goal}")
    print(
        f"(medians of {args.repeats} repeats, interleaved; step servers in a child process; "
        "naive: urllib + threads; floor: the step server alone, see the module doc)"
    )


T = TypeVar("T")


def with_step_server(fn: Callable[[str, Connection], T]) -> T:
    """Run ``fn(base_url, control)`` with the step server of :func:`_serve` in a child process."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(target=_serve, args=(child,), daemon=True)
    process.start()
    port = parent.recv()
    try:
        return fn(f"http://127.0.0.1:{port}", parent)
    finally:
        parent.send("stop")
        parent.recv()
        process.join(timeout=5)


if __name__ == "__main__":
    main()
