"""A programmable HTTP step server on loopback, for engine tests and benchmarks.

Stands in for KServe model servers (and Go's ``httptest`` servers in the router's unit tests):
a threaded HTTP/1.1 server with keep-alive and TCP_NODELAY (without it every keep-alive response
waits ~40 ms for a delayed ACK, ENVIRONMENT.md), per-path behaviours, a record of every request
received and a count of accepted TCP connections.

    with StepServer() as server:
        server.route("/m1", Reply(json={"predictions": "1"}, delay=0.05))
        server.route("/echo", Echo())
        url = server.url("/m1")

A path without a route uses ``server.default`` (404 unless set). Paths match without the query.
Plain module: load it by file path (tests/engine/conftest.py, bench/bench_engine.py).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    received_at: float

    def header(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """A fixed answer: ``json`` (encoded) or raw ``body``, after ``delay`` seconds."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    delay: float = 0.0
    content_type: str | None = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        return json.dumps(self.json).encode()


@dataclass(frozen=True)
class Echo:
    """Answer with the request body, or with ``{"headers": {...}, "body": "..."}`` if ``headers``."""

    headers: bool = False
    status: int = 200


@dataclass(frozen=True)
class Dynamic:
    """Compute the answer from the request: ``fn(recorded) -> Reply``."""

    fn: Callable[[Recorded], Reply]


@dataclass(frozen=True)
class Hang:
    """Never answer (until the server stops, or ``seconds`` pass; then close without answering)."""

    seconds: float = 3600.0


@dataclass(frozen=True)
class Drip:
    """Send headers at once, then ``chunks`` pieces of ``chunk`` bytes every ``interval`` seconds."""

    chunks: int = 10
    chunk: bytes = b" "
    interval: float = 0.1
    status: int = 200


@dataclass(frozen=True)
class Huge:
    """A valid JSON body of about ``size`` bytes, streamed (``{"pad":"xxxx…"}``)."""

    size: int = 20 * 1024 * 1024
    status: int = 200


Behaviour = Reply | Echo | Dynamic | Hang | Drip | Huge


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # Benchmarks open dozens of connections at once; the default backlog of 5 would drop SYNs.
    request_queue_size = 256
    owner: StepServer

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.owner._lock:
            self.owner.connections += 1
        return conn, addr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        rec = Recorded(self.command, path, tuple(self.headers.items()), body, time.monotonic())
        owner = self.server.owner
        with owner._lock:
            owner.requests.append(rec)
            behaviour = owner.routes.get(path, owner.default)
        self._respond(behaviour, rec)

    def _send(self, status: int, payload: bytes, content_type: str | None, extra: Mapping[str, str]) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for key, value in extra.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _respond(self, behaviour: Behaviour, rec: Recorded) -> None:
        stop = self.server.owner._stopping
        if isinstance(behaviour, Dynamic):
            behaviour = behaviour.fn(rec)
        if isinstance(behaviour, Reply):
            if behaviour.delay:
                time.sleep(behaviour.delay)
            self._send(behaviour.status, behaviour.payload(), behaviour.content_type, behaviour.headers)
        elif isinstance(behaviour, Echo):
            if behaviour.headers:
                doc = {"headers": dict(_merge(rec.headers)), "body": rec.body.decode("utf-8", "replace")}
                self._send(behaviour.status, json.dumps(doc).encode(), "application/json", {})
            else:
                self._send(behaviour.status, rec.body, "application/json", {})
        elif isinstance(behaviour, Hang):
            stop.wait(behaviour.seconds)
            self.close_connection = True
        elif isinstance(behaviour, Drip):
            self.send_response(behaviour.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(behaviour.chunks * len(behaviour.chunk)))
            self.end_headers()
            self.wfile.flush()
            for _ in range(behaviour.chunks):
                if stop.wait(behaviour.interval):
                    break
                try:
                    self.wfile.write(behaviour.chunk)
                    self.wfile.flush()
                except OSError:
                    break
            self.close_connection = True
        elif isinstance(behaviour, Huge):
            head, tail = b'{"pad":"', b'"}'
            pad = max(0, behaviour.size - len(head) - len(tail))
            self.send_response(behaviour.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + pad + len(tail)))
            self.end_headers()
            try:
                self.wfile.write(head)
                block = b"x" * 65536
                sent = 0
                while sent < pad:
                    piece = block[: min(len(block), pad - sent)]
                    self.wfile.write(piece)
                    sent += len(piece)
                self.wfile.write(tail)
            except OSError:
                self.close_connection = True


def _merge(headers: tuple[tuple[str, str], ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in headers:
        out[key] = f"{out[key]},{value}" if key in out else value
    return out


class StepServer:
    """A threaded loopback HTTP server with programmable routes. Use as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.routes: dict[str, Behaviour] = {}
        self.default: Behaviour = Reply(status=404, json={"detail": "no route"})
        self.requests: list[Recorded] = []
        self.connections = 0
        self._http = _Server((host, port), _Handler)
        self._http.owner = self
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, name="stepserver", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def host(self) -> str:
        return str(self._http.server_address[0])

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def route(self, path: str, behaviour: Behaviour) -> str:
        """Install ``behaviour`` at ``path``; returns the full URL."""
        with self._lock:
            self.routes[path] = behaviour
        return self.url(path)

    def received(self, path: str | None = None) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.connections = 0

    def start(self) -> StepServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> StepServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Canary:
    """A bare TCP listener that only counts connection attempts (proof that nothing connected)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on ``host`` (IPv4, or IPv6 when it holds a colon) at ``port`` (0: any free one)."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            self._sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self._sock.bind((host, port))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1)
        self._sock.close()
