"""The outbound transport candidates side by side in one run (``bench/README.md`` tells the passes).

    python bench/bench_transport.py [--repeats N] [--calls N]

Each candidate is the network transport under ``make_client`` (the URL guard, the address pinning
and the size caps wrap every one of them alike) and runs the engine on the workloads of
``bench/bench_engine.py``: P1 an 8-wide Ensemble of 50 ms steps, P2 a Sequence of ten 10 ms steps,
P3 a Sequence of fifty 0 ms steps through the URL guard, P4 the 32-wide / 8-wide Ensemble wall.
The step server's own latency (``ServerFloor``) and the naive router run in the same repeats.
Every repeat runs every candidate in turn, so a load that comes and goes weighs on all alike.

A second table is each HTTP stack alone (no engine), CPU and wall per 0 ms call on one keep-alive
connection: the cost of the stack itself, which P3 adds to the engine's own work.

Candidates:

- ``anyio pools``: httpx's transport on httpcore's default (anyio) streams, 8 pools (the engine's
  transport before the change; ``ShardedTransport``);
- ``anyio, one pool tuned``: the same, one pool: HTTP/1.1 only, no environment, keep-alive for
  every connection, no retries, TCP_NODELAY, the process's one SSL context;
- ``plain-stream pools``: httpx's transport on ``execution.engine.transport.wire.PlainBackend`` streams
  (asyncio protocol, one send per request), 8 httpcore pools, https on the anyio pools;
- ``h11 pool on plain streams``: ``execution.engine.transport.plainpool.PlainTransport`` with every exchange
  through h11 (``skip_h11=False``: h11 driven directly on the same streams, no httpcore pool),
  https on the anyio pools;
- ``h1, h11 apart, on plain streams``: the same pool as ``make_client`` builds it: the common
  exchange written and read by ``execution.engine.transport.h1``, anything else through h11;
- ``httpx-aiohttp``: httpx over aiohttp (``httpx_aiohttp.AiohttpTransport``), its connector
  resolving through the URL guard; measured when ``httpx-aiohttp`` is installed (it is not a
  dependency: see docs/architecture.md, "The outbound client", for why).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any

import httpx
from bench_engine import (
    ROOT,
    NaiveRouter,
    ServerFloor,
    _cpu_timed,
    _manifest,
    _medians,
    with_step_server,
)

sys.path.insert(0, str(ROOT))

from execution.engine import EngineConfig, UrlGuard, make_client, run_graph
from execution.engine.transport.http import ByScheme, _sharded, tls_context
from execution.engine.transport.plainpool import PlainTransport

Factory = Callable[[UrlGuard], httpx.AsyncBaseTransport | None]


def _one_pool(_guard: UrlGuard) -> httpx.AsyncBaseTransport:
    return httpx.AsyncHTTPTransport(
        verify=tls_context(),
        http1=True,
        http2=False,
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=100),
        retries=0,
        trust_env=False,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )


def _plain_pool(*, skip_h11: bool = True) -> httpx.AsyncBaseTransport:
    return PlainTransport(
        skip_h11=skip_h11,
        max_connections=100,
        max_keepalive_connections=100,
        keepalive_expiry=5.0,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )


def _aiohttp(guard: UrlGuard) -> httpx.AsyncBaseTransport:
    import aiohttp  # type: ignore[import-not-found]
    from aiohttp.abc import AbstractResolver  # type: ignore[import-not-found]
    from httpx_aiohttp import AiohttpTransport  # type: ignore[import-not-found]

    class GuardResolver(AbstractResolver):  # type: ignore[misc]
        """Names resolve through the URL guard: only checked addresses, and aiohttp connects to them."""

        async def resolve(
            self, host: str, port: int = 0, family: int = socket.AF_INET
        ) -> list[dict[str, Any]]:
            decision = await guard.resolve(f"http://{host}:{port}/")
            return [
                {
                    "hostname": host,
                    "host": address,
                    "port": port,
                    "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                    "proto": 0,
                    "flags": socket.AI_NUMERICHOST,
                }
                for address in decision.addresses
            ]

        async def close(self) -> None:
            return None

    connector = aiohttp.TCPConnector(
        limit=100, ssl=tls_context(), resolver=GuardResolver(), use_dns_cache=False
    )
    session = aiohttp.ClientSession(
        connector=connector,
        auto_decompress=False,
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
    )
    return AiohttpTransport(client=session)


def candidates() -> dict[str, Factory]:
    found: dict[str, Factory] = {
        "anyio pools": lambda _g: _sharded(100, plain=False),
        "anyio, one pool tuned": _one_pool,
        "plain-stream pools": lambda _g: ByScheme(
            plain=_sharded(100, plain=True), tls=_sharded(100, plain=False)
        ),
        "h11 pool on plain streams": lambda _g: ByScheme(
            plain=_plain_pool(skip_h11=False), tls=_sharded(100, plain=False)
        ),
        "h1, h11 apart, on plain streams": lambda _g: None,  # make_client's own
    }
    try:
        import httpx_aiohttp  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        print("(httpx-aiohttp is not installed: its column is left out)")
    else:
        found["httpx-aiohttp"] = _aiohttp
    return found


async def _engine_table(base: str, repeats: int) -> list[tuple[str, list[str]]]:
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(guard=guard, step_timeout=30)
    request = b'{"instances":[1,2]}'
    host, port = base.removeprefix("http://").rsplit(":", 1)
    floor = ServerFloor(host, int(port))
    naive = NaiveRouter()
    clients = {
        name: make_client(guard=guard, transport=factory(guard)) for name, factory in candidates().items()
    }
    cpu: dict[str, list[float]] = {name: [] for name in [*clients, "server floor", "naive router"]}

    def engine(graph_type: str, width: int, path: str) -> list[Callable[[], Awaitable[Any]]]:
        graph = _manifest(graph_type, [f"{base}{path}"] * width, chain=graph_type == "Sequence")

        def one(client: httpx.AsyncClient) -> Callable[[], Awaitable[Any]]:
            async def go() -> None:
                result = await run_graph(graph, request, {}, config=config, client=client)
                assert result.status == 200, result.body

            return go

        return [one(client) for client in clients.values()]

    def blocking(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
        async def go() -> None:
            fn()

        return go

    def baselines(graph_type: str, width: int, path: str) -> list[Callable[[], Awaitable[Any]]]:
        urls = [f"{base}{path}"] * width
        if graph_type == "Ensemble":
            return [
                blocking(lambda: floor.calls(path, request, width)),
                blocking(lambda: naive.ensemble(urls, request)),
            ]
        return [
            blocking(lambda: floor.sequence(path, request, width)),
            blocking(lambda: naive.sequence(urls, request)),
        ]

    walls: dict[str, list[float]] = {}
    for key, (graph_type, width, path) in {
        "P1": ("Ensemble", 8, "/d50"),
        "P2": ("Sequence", 10, "/d10"),
        "P3": ("Sequence", 50, "/d0"),
        "P4": ("Ensemble", 32, "/d50"),
    }.items():
        fns = engine(graph_type, width, path) + baselines(graph_type, width, path)
        if key == "P3":  # this process's CPU per hop too: less sensitive to the load than walls
            fns = [_cpu_timed(fn, cpu[name]) for name, fn in zip(cpu, fns, strict=True)]
        walls[key] = await _medians(fns, repeats)
    floor.close()
    for client in clients.values():
        await client.aclose()
    names = [*clients, "server floor", "naive router"]
    rows = []
    for index, name in enumerate(names):
        p1, p2, p3, p4 = (walls[k][index] for k in ("P1", "P2", "P3", "P4"))
        floor_p1, floor_p2 = walls["P1"][len(clients)], walls["P2"][len(clients)]
        rows.append(
            (
                name,
                [
                    f"{p1 / 0.050:.3f}",
                    f"{p1 / floor_p1:.3f}",
                    f"{p2 / 0.100:.3f}",
                    f"{p2 / floor_p2:.3f}",
                    f"{p3 / 50 * 1000:.3f}",
                    f"{statistics.median(cpu[name]) / 50 * 1000:.3f}",
                    f"{p4 / p1:.3f}",
                ],
            )
        )
    return rows


async def _stack_table(base: str, calls: int) -> list[tuple[str, list[str]]]:
    """Median CPU and wall of a 0 ms call of each HTTP stack alone, the stacks called in turn."""
    url = f"{base}/d0"
    headers = [("Content-Type", "application/json")]
    stacks: dict[str, Callable[[], Awaitable[Any]]] = {}
    closers: list[Callable[[], Awaitable[Any]]] = []
    guard = UrlGuard(allow_loopback=True)
    for name, factory in candidates().items():
        transport = factory(guard) or _plain_pool()

        async def call(transport: httpx.AsyncBaseTransport = transport) -> None:
            response = await transport.handle_async_request(
                httpx.Request("POST", url, headers=headers, content=b"{}")
            )
            await response.aread()
            await response.aclose()

        stacks[name] = call
        closers.append(transport.aclose)
    default = httpx.AsyncClient(trust_env=False)

    async def client_post() -> None:
        await default.post(url, content=b"{}")

    stacks["httpx.AsyncClient().post (defaults)"] = client_post
    closers.append(default.aclose)
    host, port = base.removeprefix("http://").rsplit(":", 1)
    floor = ServerFloor(host, int(port))

    async def raw() -> None:
        floor.calls("/d0", b"{}", 1)

    stacks["server floor"] = raw
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in stacks}
    for _ in range(10):
        for warm in stacks.values():
            await warm()
    for _ in range(calls):  # one call of each stack in turn: a load that comes and goes hits all alike
        for name, stack in stacks.items():
            cpu, wall = time.process_time(), time.perf_counter()
            await stack()
            samples[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    floor.close()
    for close in closers:
        await close()
    return [
        (
            name,
            [
                f"{statistics.median(s[0] for s in got) * 1000:.3f}",
                f"{statistics.median(s[1] for s in got) * 1000:.3f}",
            ],
        )
        for name, got in samples.items()
    ]


def _print(title: str, header: list[str], rows: list[tuple[str, list[str]]]) -> None:
    width = max(len(name) for name, _ in rows) + 2
    print(f"\n{title}")
    print(f"{'':<{width}}" + "".join(f"{h:>14}" for h in header))
    for name, values in rows:
        print(f"{name:<{width}}" + "".join(f"{v:>14}" for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()

    def run(base: str, _control: Connection) -> tuple[Any, Any]:
        return asyncio.run(_engine_table(base, args.repeats)), asyncio.run(_stack_table(base, args.calls))

    engine_rows, stack_rows = with_step_server(run)
    _print(
        "The engine on each transport (goals: P1 <= 1.10, P2 <= 1.08, P3 <= 0.4 ms, P4 <= 1.15)",
        ["P1 /50ms", "P1 /floor", "P2 /100ms", "P2 /floor", "P3 ms/hop", "P3 CPU/hop", "P4 32/8"],
        engine_rows,
    )
    _print("Each stack alone, per 0 ms call", ["CPU ms", "wall ms"], stack_rows)
    print(f"(medians of {args.repeats} repeats, and of {args.calls} calls per stack; interleaved)")


if __name__ == "__main__":
    main()
