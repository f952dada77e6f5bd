"""Engine benchmark: prints ratios against fixed step delays and a direct httpx baseline.

    python bench/bench_engine.py [--repeats N]

The step servers (tests/stepserver.py: threaded, keep-alive, TCP_NODELAY) run in a child process,
so that their threads do not compete with the engine for this process's GIL; every figure is a
median over repeats after a warm-up. Nothing is asserted: the goals are printed beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import statistics
import sys
import time
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


async def _median(fn: Callable[[], Awaitable[Any]], repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def _bench(base: str, control: Connection, repeats: int) -> list[tuple[str, str, str]]:
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(guard=guard, step_timeout=30)
    bare = EngineConfig(step_timeout=30)
    rows: list[tuple[str, str, str]] = []
    async with make_client(guard=guard) as client, make_client() as plain:

        def runner(
            graph: Manifest, cfg: EngineConfig, http: httpx.AsyncClient
        ) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:
                result = await run_graph(graph, b'{"instances":[1,2]}', {}, config=cfg, client=http)
                assert result.status == 200, result.body

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

        ens8 = await _median(runner(_manifest("Ensemble", [f"{base}/d50"] * 8), config, client), repeats)
        rows.append(("ensemble 8 x 50 ms: wall / 50 ms", f"{ens8 / 0.050:.3f}", "<= 1.15"))
        base8 = await _median(gather(8, "/d50"), repeats)
        rows.append(("  baseline: direct httpx gather 8 x 50 ms / 50 ms", f"{base8 / 0.050:.3f}", ""))

        seq10 = await _median(
            runner(_manifest("Sequence", [f"{base}/d10"] * 10, chain=True), config, client), repeats
        )
        rows.append(("sequence 10 x 10 ms: wall / 100 ms", f"{seq10 / 0.100:.3f}", "<= 1.10"))
        base10 = await _median(chain(10, "/d10"), repeats)
        rows.append(("  baseline: 10 direct httpx calls x 10 ms / 100 ms", f"{base10 / 0.100:.3f}", ""))

        hops = 50
        for label, cfg, http in (("with URL guard", config, client), ("no guard", bare, plain)):
            graph = _manifest("Sequence", [f"{base}/d0"] * hops, chain=True)

            async def direct(http: httpx.AsyncClient = http) -> None:
                for _ in range(hops):
                    response = await http.post(f"{base}/d0", content=b'{"instances":[1,2]}')
                    assert response.status_code == 200

            engine_s = await _median(runner(graph, cfg, http), repeats)
            direct_s = await _median(direct, repeats)
            per_hop_ms = (engine_s - direct_s) / hops * 1000
            rows.append((f"overhead per hop vs direct httpx ({label})", f"{per_hop_ms:.3f} ms", "<= 1 ms"))
            rows.append((f"  engine hop / direct call ({label})", f"{engine_s / hops * 1000:.3f} / "
                         f"{direct_s / hops * 1000:.3f} ms", ""))  # fmt: skip

        ens32 = await _median(runner(_manifest("Ensemble", [f"{base}/d50"] * 32), config, client), repeats)
        rows.append(("ensemble 32-wide / 8-wide wall", f"{ens32 / ens8:.3f}", "<= 1.2"))
        base32 = await _median(gather(32, "/d50"), repeats)
        rows.append(("  baseline: direct httpx gather 32-wide / 8-wide", f"{base32 / base8:.3f}", ""))

    control.send("reset")
    control.recv()
    async with make_client(guard=guard) as fresh:
        await runner(_manifest("Sequence", [f"{base}/d0"] * 100, chain=True), config, fresh)()
    control.send("connections")
    rows.append(("TCP connections for a 100-step sequence", str(control.recv()), "= 1"))
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
    print(f"{'measure':<{width}}  {'value':>18}  goal")
    print("-" * (width + 30))
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>18}  {goal}")
    print(f"(medians of {args.repeats} repeats; step servers in a child process)")


if __name__ == "__main__":
    main()
