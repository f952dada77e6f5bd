"""Serve a graph over HTTP exactly as KServe's router does, without Django or ASGI.

Every path and every method except ``/readyz`` runs the graph from ``root`` with the request body
and headers (the path and query are ignored); ``/readyz`` answers 200 with an empty body (from
KServe v0.15 on: as an older release, it runs the graph too). The
HTTP/1.1 side is the standard library's threaded server (keep-alive, TCP_NODELAY); the graphs run
on one long-lived event loop in its own thread, sharing one pooled outbound client.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from execution.engine.config import EngineConfig
from execution.engine.goports.sniff import JSON_CONTENT_TYPE
from execution.engine.runner import GraphResult, error_body, run_graph
from execution.engine.trace import EventCallback
from execution.engine.transport.http import make_client
from graphs.language.model import Manifest

__all__ = ["GraphServer", "serve"]

logger = logging.getLogger(__name__)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # idle keep-alive threads must not hold up shutdown
    request_queue_size = 128  # a burst of connections must not overflow the listen backlog
    graph: GraphServer

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        # Without this, Nagle + delayed ACK costs ~40 ms per keep-alive response (ENVIRONMENT.md).
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def __getattr__(self, name: str) -> Callable[[], None]:
        # http.server dispatches to do_<METHOD>; every method runs the graph, as in KServe.
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the trace is the log; per-request stderr lines would drown it

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        body = self._read_body()
        # /readyz arrived in KServe v0.15; before, it runs the graph like any other path.
        if self.path.split("?", 1)[0] == "/readyz" and self.server.graph.config.release.readyz:
            self._reply(200, b"", None)
            return
        headers: dict[str, list[str]] = {}
        for name in self.headers:
            if name.lower() != "host" and name not in headers:  # Go strips Host from req.Header
                headers[name] = self.headers.get_all(name) or []
        try:
            result = self.server.graph.handle(body, headers)
        except Exception as exc:
            # A defect of the engine must still answer: KServe's router gives no response only where
            # it crashes, and a dropped connection tells the client nothing. Logged for a bug report.
            logger.exception("graph run failed")
            self._reply(500, error_body(f"internal error: {type(exc).__name__}: {exc}"), JSON_CONTENT_TYPE)
            return
        self._reply(result.status, result.body, result.content_type)

    def _reply(self, status: int, body: bytes, content_type: str | None) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class GraphServer:
    """A running router for one graph. Start with :meth:`start`, stop with :meth:`stop`.

    Thread-safe: requests arrive on server threads and run on the shared event loop.
    ``port=0`` picks a free port (read it from :attr:`port` after :meth:`start`).
    """

    def __init__(
        self,
        manifest: Manifest,
        config: EngineConfig,
        host: str = "127.0.0.1",
        port: int = 8080,
        *,
        on_event: EventCallback | None = None,
        rng: random.Random | None = None,
        max_connections: int = 100,
    ) -> None:
        self.manifest = manifest
        self.config = config
        self._on_event = on_event
        self._rng = rng
        self._max_connections = max_connections
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="graph-loop", daemon=True)
        self._http = _Server((host, port), _Handler)
        self._http.graph = self
        self._http_thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="graph-http", daemon=True
        )
        self._client: httpx.AsyncClient | None = None

    @property
    def host(self) -> str:
        return str(self._http.server_address[0])

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> GraphServer:
        """Start the event loop and the HTTP threads; returns self. Not idempotent."""
        self._loop_thread.start()
        self._client = asyncio.run_coroutine_threadsafe(self._make_client(), self._loop).result()
        self._http_thread.start()
        return self

    async def _make_client(self) -> httpx.AsyncClient:
        return make_client(
            max_connections=self._max_connections,
            max_response_bytes=self.config.max_response_bytes,
            guard=self.config.guard,
        )

    def handle(self, body: bytes, headers: dict[str, list[str]]) -> GraphResult:
        """Run the graph for one request (blocking the calling server thread, not the loop)."""
        assert self._client is not None, "GraphServer.start() was not called"
        coro = run_graph(
            self.manifest,
            body,
            headers,
            config=self.config,
            client=self._client,
            on_event=self._on_event,
            rng=self._rng,
            keep_trace=False,
        )
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def stop(self) -> None:
        """Stop accepting, close the outbound client and the loop. Safe to call once."""
        self._http.shutdown()
        self._http.server_close()
        if self._client is not None:
            asyncio.run_coroutine_threadsafe(self._client.aclose(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> GraphServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(manifest: Manifest, config: EngineConfig, host: str = "0.0.0.0", port: int = 8080) -> None:  # noqa: S104
    """Serve ``manifest`` until interrupted (Ctrl-C); blocks the calling thread."""
    server = GraphServer(manifest, config, host, port).start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
