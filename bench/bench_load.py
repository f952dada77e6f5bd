"""Load tests: the studio's load generator against a plain asyncio httpx loop, and the engine's
cost per hop across fresh ``servegraph`` processes.

    python bench/bench_load.py [--requests N] [--concurrency C] [--processes K]

1. Throughput. Both sides send N requests, C at a time, to one step server on loopback that
   answers at once (``bench/leanserver.py``, TCP_NODELAY): the baseline is the least an asyncio
   client does (``httpx.AsyncClient.post`` in C tasks), the studio is ``execution.engine.load``
   running a one-step graph (each request a full ``run_graph``: routing, headers, the URL guard,
   the trace folded into histograms). Rounds alternate and the medians are compared; the goal is
   a ratio of at least 0.8.
2. Hop cost. Ten 0 ms steps in a Sequence served by a fresh ``manage.py servegraph`` process, over
   one keep-alive connection, minus ten direct calls to the same step server, median of 40, per
   hop; once per fresh process, K processes, printed one by one with their spread (the goal:
   every process at most 0.4 ms per hop), not one process's median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from leanserver import LeanServer  # noqa: E402

from execution.engine import EngineConfig, UrlGuard, make_client  # noqa: E402
from execution.engine.load import run_load  # noqa: E402
from graphs.language import manifest_from_document  # noqa: E402

BODY = b'{"instances": [[1.0, 2.0]]}'


def _graph(urls: list[str], name: str = "bench") -> dict:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name},
        "spec": {
            "nodes": {
                "root": {
                    "routerType": "Sequence",
                    "steps": [{"name": f"s{i}", "serviceUrl": url} for i, url in enumerate(urls)],
                }
            }
        },
    }


def _httpx_client(concurrency: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    # TCP_NODELAY, as the studio's client sets it: httpx writes the head and the body apart, and
    # without it each request waits for the server's delayed ACK (about 40 ms, ENVIRONMENT.md).
    transport = httpx.AsyncHTTPTransport(
        limits=limits, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    )
    return httpx.AsyncClient(transport=transport, timeout=30)


async def _plain(url: str, requests: int, concurrency: int, *, studio_client: bool = False) -> float:
    """Requests per second of C tasks posting to ``url`` with one client: httpx's own (the
    baseline), or with ``studio_client`` the studio's (``make_client``: its transport, no engine)."""
    left = requests
    client_cm = make_client(max_connections=256) if studio_client else _httpx_client(concurrency)
    async with client_cm as client:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                response = await client.post(url, content=BODY, headers={"Content-Type": "application/json"})
                assert response.status_code == 200

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return requests / (time.perf_counter() - began)


async def _studio(url: str, requests: int, concurrency: int) -> float:
    manifest = manifest_from_document(_graph([url]))
    config = EngineConfig(guard=UrlGuard(allow_loopback=True), body_cap=0)
    async with make_client(guard=config.guard, max_connections=256) as client:
        began = time.perf_counter()
        outcome = await run_load(
            manifest, BODY, [("Content-Type", "application/json")], config=config, client=client,
            requests=requests, concurrency=concurrency, max_seconds=600,
        )  # fmt: skip
        elapsed = time.perf_counter() - began
    assert outcome.completed == requests and outcome.stats.errors == 0
    return requests / elapsed


def throughput(requests: int, concurrency: int, rounds: int) -> None:
    server = LeanServer().start()
    server.route("/i", {"predictions": [1]}, 0.0)
    url = f"http://127.0.0.1:{server.port}/i"
    try:
        asyncio.run(_plain(url, 200, concurrency))  # warm up both
        asyncio.run(_studio(url, 200, concurrency))
        plain, raw, studio = [], [], []
        for _ in range(rounds):
            plain.append(asyncio.run(_plain(url, requests, concurrency)))
            raw.append(asyncio.run(_plain(url, requests, concurrency, studio_client=True)))
            studio.append(asyncio.run(_studio(url, requests, concurrency)))
    finally:
        server.stop()
    p, r, s = statistics.median(plain), statistics.median(raw), statistics.median(studio)
    print(
        f"1. throughput, {requests} requests at concurrency {concurrency}, median of {rounds} alternating rounds"
    )
    print(f"   plain asyncio httpx loop       : {p:8.0f} req/s  ({', '.join(f'{v:.0f}' for v in plain)})")
    print(f"   plain loop, the studio's client: {r:8.0f} req/s  ({', '.join(f'{v:.0f}' for v in raw)})")
    print(f"   studio load generator          : {s:8.0f} req/s  ({', '.join(f'{v:.0f}' for v in studio)})")
    print(f"   ratio studio / plain httpx     : {s / p:8.3f}   goal >= 0.8")
    print(
        f"   ratio studio / plain loop on the studio's client: {s / r:.3f} (the engine's own share of the cost)"
    )


# --- 2. the hop cost across fresh servegraph processes ---------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Conn:
    """One keep-alive HTTP/1.1 connection with TCP_NODELAY; each request is one ``sendall``."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        )
        self.request = head.encode() + BODY
        self.buffer = b""

    def call(self) -> float:
        began = time.perf_counter()
        self.sock.sendall(self.request)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        while len(rest) < length:
            rest += self.sock.recv(65536)
        self.buffer = rest[length:]
        elapsed = time.perf_counter() - began
        assert head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200"), head[:40]
        return elapsed

    def close(self) -> None:
        self.sock.close()


def _wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"servegraph exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("servegraph did not start")


def hop_spread(
    processes: int,
    samples: int = 40,
    hops: int = 10,
    hash_seeds: list[int] | None = None,
    pin: int | None = None,
) -> list[float]:
    server = LeanServer().start()
    server.route("/d0", {"predictions": [1]}, 0.0)
    step = f"http://127.0.0.1:{server.port}/d0"
    per_hop: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ten.json"
        path.write_text(json.dumps(_graph([step] * hops, "ten-hops")))
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "1"}
        env.pop("PYTHONHASHSEED", None)  # each process its own, as a real start
        direct = _Conn(server.port, "/d0")
        seeds: list[int | None] = list(hash_seeds) if hash_seeds else [None] * processes
        try:
            for seed in seeds:
                port = _free_port()
                pinned = ["taskset", "-c", str(pin)] if pin is not None else []
                proc = subprocess.Popen(
                    [*pinned, sys.executable, str(ROOT / "manage.py"), "servegraph", str(path), "--port", str(port)],
                    cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=env if seed is None else {**env, "PYTHONHASHSEED": str(seed)},
                )  # fmt: skip
                try:
                    _wait_ready(port, proc)
                    graph = _Conn(port, "/")
                    for _ in range(10):  # warm up: connections, caches
                        graph.call()
                        direct.call()
                    g, d = [], []
                    for _ in range(samples):
                        g.append(graph.call())
                        d.append(sum(direct.call() for _ in range(hops)))
                    graph.close()
                    per_hop.append((statistics.median(g) - statistics.median(d)) / hops * 1000)
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
        finally:
            direct.close()
            server.stop()
    print(
        f"2. engine cost per hop, {hops} x 0 ms steps in a Sequence, median of {samples}, one fresh servegraph each"
    )
    print("   per process (ms): " + ", ".join(f"{v:.2f}" for v in per_hop))
    print(
        f"   spread: min {min(per_hop):.2f}, median {statistics.median(per_hop):.2f}, max {max(per_hop):.2f} ms"
        f"; processes over 0.4 ms: {sum(v > 0.4 for v in per_hop)} of {len(per_hop)}   goal: none"
    )
    return per_hop


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-hops", action="store_true")
    parser.add_argument(
        "--pin",
        nargs=2,
        type=int,
        metavar=("BENCH_CPU", "SERVEGRAPH_CPU"),
        help="Pin this process (and its step server) and each servegraph to these CPUs: the same one, "
        "or two, to see what a wake-up across CPUs costs per hop",
    )
    parser.add_argument(
        "--hash-seeds",
        type=lambda v: [int(x) for x in v.split(",")],
        help="Start each servegraph with these PYTHONHASHSEED values (comma-separated) instead of a "
        "random one each: a slow process can then be started again as it was",
    )
    args = parser.parse_args()
    if not args.skip_throughput:
        throughput(args.requests, args.concurrency, args.rounds)
    if not args.skip_hops:
        if args.pin:
            os.sched_setaffinity(0, {args.pin[0]})
        hop_spread(args.processes, hash_seeds=args.hash_seeds, pin=args.pin[1] if args.pin else None)


if __name__ == "__main__":
    main()
