"""Engine benchmark: prints ratios against fixed step delays, a direct httpx baseline and a naive router.

    python bench/bench_engine.py [--repeats N]

Every engine figure is printed beside the same figure of a deliberately naive router measured in
the same run by the same harness (:class:`NaiveRouter`: a thread per Ensemble step, a new
``urllib`` connection per call, no guard, no caps, no Go exactness): the floor the engine's
overhead is held to (issue 17).

The step servers (tests/stepserver.py: threaded, keep-alive, TCP_NODELAY) run in a child process,
so that their threads do not compete with the engine for this process's GIL; every figure is a
median over repeats after a warm-up. Nothing is asserted: the goals are printed beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import multiprocessing
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from execution.engine import EngineConfig, UrlGuard, make_client, run_graph
from graphs.spec.model import Manifest, Metadata, Node, Spec, Step

ROOT = Path(__file__).resolve().parent.parent


def _load_stepserver() -> ModuleType:
    # A plain module shared with the tests, loaded by path (tests/ is not a package on sys.path).
    spec = importlib.util.spec_from_file_location("stepserver", ROOT / "tests" / "stepserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["stepserver"] = module
    spec.loader.exec_module(module)
    return module


def _serve(conn: Connection) -> None:
    """Child process: a step server with /d0, /d10, /d50; answers control messages on ``conn``."""
    stepserver = _load_stepserver()
    server = stepserver.StepServer().start()
    for delay_ms in (0, 10, 50):
        server.route(f"/d{delay_ms}", stepserver.Reply(json={"predictions": [1, 2]}, delay=delay_ms / 1000))
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


Row = tuple[str, str, str, str]


async def _bench(base: str, control: Connection, repeats: int) -> list[Row]:
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(guard=guard, step_timeout=30)
    bare = EngineConfig(step_timeout=30)
    naive = NaiveRouter()
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

        def blocking(
            fn: Callable[[list[str], bytes], bytes], urls: list[str]
        ) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:  # blocks the loop: nothing else runs on it meanwhile
                fn(urls, request)

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

        async def trio(router_type: str, width: int, path: str) -> list[float]:
            """Median walls of the engine, the naive router and direct httpx calls on ``width``
            steps at ``path`` (a Sequence chains each answer into the next step)."""
            urls = [f"{base}{path}"] * width
            ensemble = router_type == "Ensemble"
            return await _medians(
                [
                    runner(_manifest(router_type, urls, chain=not ensemble), config, client),
                    blocking(naive.ensemble if ensemble else naive.sequence, urls),
                    (gather if ensemble else chain)(width, path),
                ],
                repeats,
            )

        ens8, naive8, base8 = await trio("Ensemble", 8, "/d50")
        rows.append(
            ("P1 ensemble 8 x 50 ms: wall / 50 ms", f"{ens8 / 0.050:.3f}", f"{naive8 / 0.050:.3f}", "<= 1.10")
        )
        rows.append(("  baseline: direct httpx gather 8 x 50 ms / 50 ms", f"{base8 / 0.050:.3f}", "", ""))

        seq10, naive10, base10 = await trio("Sequence", 10, "/d10")
        rows.append(
            (
                "P2 sequence 10 x 10 ms: wall / 100 ms",
                f"{seq10 / 0.100:.3f}",
                f"{naive10 / 0.100:.3f}",
                "<= 1.08",
            )
        )
        rows.append(("  baseline: 10 direct httpx calls x 10 ms / 100 ms", f"{base10 / 0.100:.3f}", "", ""))

        hops = 50
        urls0 = [f"{base}/d0"] * hops
        for label, cfg, http in (("with URL guard", config, client), ("no guard", bare, plain)):
            graph = _manifest("Sequence", urls0, chain=True)

            async def direct(http: httpx.AsyncClient = http) -> None:
                for _ in range(hops):
                    response = await http.post(f"{base}/d0", content=request)
                    assert response.status_code == 200

            engine_s, naive_s, direct_s = await _medians(
                [runner(graph, cfg, http), blocking(naive.sequence, urls0), direct], repeats
            )
            hop_ms, naive_hop = engine_s / hops * 1000, naive_s / hops * 1000
            rows.append(
                (
                    f"P3 ms per hop, 0 ms steps ({label})",
                    f"{hop_ms:.3f} ms",
                    f"{naive_hop:.3f} ms",
                    "<= 0.4 ms",
                )
            )
            overhead = (engine_s - direct_s) / hops * 1000
            rows.append((f"  engine hop - direct httpx call ({label})", f"{overhead:.3f} ms", "", ""))

        ens32, naive32, base32 = await trio("Ensemble", 32, "/d50")
        rows.append(
            ("P4 ensemble 32-wide / 8-wide wall", f"{ens32 / ens8:.3f}", f"{naive32 / naive8:.3f}", "<= 1.15")
        )
        rows.append(("  baseline: direct httpx gather 32-wide / 8-wide", f"{base32 / base8:.3f}", "", ""))

    control.send("reset")
    control.recv()
    async with make_client(guard=guard) as fresh:
        await runner(_manifest("Sequence", [f"{base}/d0"] * 100, chain=True), config, fresh)()
    control.send("connections")
    rows.append(("TCP connections for a 100-step sequence", str(control.recv()), "", "= 1"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(target=_serve, args=(child,), daemon=True)
    process.start()
    port = parent.recv()
    try:
        rows = asyncio.run(_bench(f"http://127.0.0.1:{port}", parent, args.repeats))
    finally:
        parent.send("stop")
        parent.recv()
        process.join(timeout=5)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'engine':>10}  {'naive':>10}  goal (and <= naive)")
    print("-" * (width + 45))
    for name, value, floor, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {floor:>10}  {goal}")
    print(f"(medians of {args.repeats} repeats; step servers in a child process; naive: urllib + threads)")


if __name__ == "__main__":
    main()
