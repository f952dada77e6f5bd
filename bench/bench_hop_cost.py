"""The CPU instructions of one engine hop, counted by callgrind: a figure the machine's load does not move.

    python bench/bench_hop_cost.py

The walls and CPU times of ``bench_engine.py`` move with whatever else runs on a shared machine
(the same build reads 0.21 or 0.34 ms of CPU per hop an hour apart). This benchmark counts the
instructions instead, with ``valgrind --tool=callgrind``, which gives the same count for the same
code whatever the load (within about 1 % from run to run here), so a change to the engine's hot
path can be judged by one run.

Every figure is the instructions one step call of a 50-step Sequence costs in this process,
measured as the difference of two runs (few and many graphs) so that start-up and imports fall
out. The step server is not a process: each connection is an in-memory asyncio transport that
answers every request with a prebuilt KServe answer on the next loop turn, so what is counted is
the engine and its transport, not the kernel's TCP stack (a real socket pair is kept under each
connection, so the pool's idle check polls a real descriptor). Rows, cheapest first:

- ``asyncio exchange``: the least any asyncio client does per call (a write, a future, a wake-up):
  the baseline of the same run;
- ``transport``: a prebuilt step request through ``make_client``'s transports (the cap,
  ``PlainTransport``) and its body read; the request is marked as checked by the client's guard
  (``CHECKED_BY``), as ``call_service`` marks it, so the guard lets it through unchecked and its
  check is counted once, in the next row;
- ``call_service``: one step call as the engine makes it (Go's headers, the guard's check, the caps);
- ``engine``: ``run_graph`` on the Sequence (trace events, routing), per step.

Each row is printed with its ratio to the asyncio exchange. Needs valgrind (Debian's package);
without it the benchmark says so and stops.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from httpcore import AsyncNetworkStream

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout's engine
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine import _manifest  # noqa: E402

from execution.engine import EngineConfig, UrlGuard, make_client, run_graph  # noqa: E402
from execution.engine.transport import outbound  # noqa: E402
from execution.engine.transport.http import CHECKED_BY  # noqa: E402
from execution.engine.transport.plainpool import PlainTransport  # noqa: E402
from execution.engine.transport.wire import PlainBackend, PlainStream, SocketOption, _Protocol  # noqa: E402

HOPS = 50
URL = "http://127.0.0.1:9/predict"
BODY = b'{"instances":[1,2]}'
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Wed, 02 Dec 2026 05:00:00 GMT\r\n"
    b'Content-Length: 21\r\n\r\n{"predictions":[1,2]}'
)
MODES = ("asyncio exchange", "transport", "call_service", "engine")
# Graphs run in the two measured processes; their difference is what is counted.
FEW, MANY = 4, 24


class _AnsweringTransport(asyncio.Transport):
    """Answers every write with :data:`ANSWER` on the next loop turn."""

    def __init__(self, protocol: asyncio.Protocol) -> None:
        super().__init__()
        self._protocol = protocol
        self._loop = asyncio.get_running_loop()
        self._sock, self._peer = socket.socketpair()  # never written: the idle check polls it
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._loop.call_soon(self._protocol.data_received, ANSWER)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        self._sock.close()
        self._peer.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._sock if name == "socket" else default


class _InMemoryBackend(PlainBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        protocol = _Protocol()
        transport = _AnsweringTransport(protocol)
        protocol.connection_made(transport)
        return PlainStream(transport, protocol)


def _client(guard: UrlGuard) -> httpx.AsyncClient:
    plain = PlainTransport(
        max_connections=10, max_keepalive_connections=10, keepalive_expiry=5.0, backend=_InMemoryBackend()
    )
    return make_client(guard=guard, transport=plain)


async def _measured(mode: str, graphs: int) -> None:
    """Run ``graphs`` times the ``mode``'s 50 calls (after a warm-up)."""
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(guard=guard, step_timeout=30)
    graph = _manifest("Sequence", [URL] * HOPS, chain=True)
    url = outbound._parse_url(URL)
    timeouts = outbound._timeouts(30)
    async with _client(guard) as client:

        async def exchange() -> None:
            loop = asyncio.get_running_loop()
            protocol = _Protocol()
            transport = _AnsweringTransport(protocol)
            protocol.connection_made(transport)
            for _ in range(HOPS):
                protocol.waiter = loop.create_future()
                transport.write(b"")
                await protocol.waiter
                protocol.chunks.clear()
            transport.close()

        async def transport_calls() -> None:
            for _ in range(HOPS):
                request, _ = outbound._build_request("POST", url, [], BODY, timeouts)
                request.extensions[CHECKED_BY] = guard  # checked: call_service's row counts the check
                response = await client._transport.handle_async_request(request)
                async for _piece in response.stream:  # type: ignore[union-attr]
                    pass
                await response.aclose()

        async def service_calls() -> None:
            for _ in range(HOPS):
                await outbound.call_service(
                    client, URL, BODY, [], guard=guard, timeout=30, backstop=30, max_response_bytes=10 << 20
                )

        async def engine() -> None:
            result = await run_graph(graph, BODY, {}, config=config, client=client)
            assert result.status == 200, result.body

        fns: dict[str, Callable[[], Awaitable[None]]] = dict(
            zip(MODES, (exchange, transport_calls, service_calls, engine), strict=True)
        )
        for _ in range(3):  # warm-up: caches, memos, the idle connection
            await fns[mode]()
        for _ in range(graphs):
            await fns[mode]()


def _count(mode: str, graphs: int) -> int:
    """The instructions callgrind counts in a process that runs :func:`_measured`."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        done = subprocess.run(
            [*command, sys.executable, __file__, "--inner", mode, str(graphs)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found[1])


def main() -> int:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind): no instruction counts")
        return 2
    per_hop: dict[str, float] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:  # the two runs of a row side by side
        for mode in MODES:
            few, many = pool.map(_count, (mode, mode), (FEW, MANY))
            per_hop[mode] = (many - few) / ((MANY - FEW) * HOPS)
    base = per_hop[MODES[0]]
    print(f"{'instructions per step call (callgrind)':<40}  {'count':>10}  {'x asyncio exchange':>18}")
    print("-" * 72)
    for mode in MODES:
        print(f"{mode:<40}  {per_hop[mode]:>10,.0f}  {per_hop[mode] / base:>18.2f}")
    print(
        f"(a {HOPS}-step Sequence over in-memory connections, {MANY} graphs minus {FEW}; see the module doc)"
    )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--inner"]:
        asyncio.run(_measured(sys.argv[2], int(sys.argv[3])))
    else:
        sys.exit(main())
