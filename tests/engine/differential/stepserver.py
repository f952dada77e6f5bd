"""The step behaviours of the differential harness, served by one loopback HTTP server.

A step URL is ``http://<server>/b/<behaviour>`` with an optional ``?d=<ms>`` delay before the
answer. KServe's router POSTs to a ``serviceUrl`` exactly as written (query included), so the same
URL means the same behaviour to the oracle and to the engine. Every behaviour is deterministic: the
answer depends only on the path, the query and the request (body and headers).

The server disables Nagle on every accepted connection: without TCP_NODELAY each keep-alive
answer waits ~40 ms for a delayed ACK (ENVIRONMENT.md), which would blur the Ensemble timings.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "BEHAVIOURS",
    "ECHOED_HEADERS",
    "IDENTITY_HEADERS",
    "Answer",
    "RefusedPort",
    "StepServer",
]

JSON: Final = "application/json"


@dataclass(frozen=True, slots=True)
class Answer:
    """What a behaviour answers: a status and raw body bytes, or ``close`` to drop the connection."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = JSON
    location: str | None = None
    close: bool = False


def _fixed(
    status: int, body: bytes, content_type: str | None = JSON
) -> Callable[[bytes, dict[str, str]], Answer]:
    answer = Answer(status, body, content_type)
    return lambda _body, _headers: answer


def _echo(status: int) -> Callable[[bytes, dict[str, str]], Answer]:
    return lambda body, _headers: Answer(status, body)


# Request headers a "headers" step copies into its answer: what header propagation can deliver.
ECHOED_HEADERS: Final = (
    "Authorization",
    "X-Request-Id",
    "Test-Header-1",
    "Test-Header-2",
    "X-Lower-Case",
    "Content-Type",
)
# What an "identity" step copies: headers the HTTP client itself adds (Go: Go-http-client/1.1, gzip).
IDENTITY_HEADERS: Final = ("User-Agent", "Accept-Encoding")


def _select_headers(names: tuple[str, ...]) -> Callable[[bytes, dict[str, str]], Answer]:
    def answer(_body: bytes, headers: dict[str, str]) -> Answer:
        picked = {name: headers[name] for name in names if name in headers}
        return Answer(200, json.dumps(picked, separators=(",", ":")).encode())

    return answer


def _countdown(body: bytes, _headers: dict[str, str]) -> Answer:
    """``{"loop": n}`` with n >= 2 answers ``{"loop": n-1}``; anything else ``{"done":true}``.

    This is what makes generated cycles terminate: a node re-entered with ``$response`` of this
    step sees a strictly smaller ``loop`` each time, and a condition on ``loop`` leaves the cycle.
    """
    try:
        doc: Any = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and type(doc.get("loop")) is int and doc["loop"] >= 2:
        return Answer(200, b'{"loop":%d}' % (doc["loop"] - 1))
    return Answer(200, b'{"done":true}')


def _redirect(status: int, target: str) -> Callable[[bytes, dict[str, str]], Answer]:
    answer = Answer(status, b"", None, location=target)
    return lambda _body, _headers: answer


BEHAVIOURS: Final[dict[str, Callable[[bytes, dict[str, str]], Answer]]] = {
    # JSON objects of several shapes (the keys feed the condition pool).
    "obj": _fixed(200, b'{"predictions":[{"label":"dog","score":0.9}],"a":3}'),
    "obj2": _fixed(200, b'{"decision":"SUCCESS","a":10,"flag":true,"name":"cat"}'),
    "ws": _fixed(200, b' { "a" : 1 ,\n "b" : [ 1 , 2 ] }\n'),
    "tricky": _fixed(
        200, b'{"z":1,"a":"<&>","n":1.0,"big":12345678901234567890,"e":1e-7,"g":1E21,"u":"\\u00e9\xc3\xa9"}'
    ),
    "dupkeys": _fixed(200, b'{"a":1,"a":2}'),
    "preds": _fixed(200, b'{"predictions":[1,2],"model_name":"m","instances":[9]}'),
    "preds-str": _fixed(200, b'{"predictions":"1"}'),
    "preds-empty": _fixed(200, b'{"predictions":[]}'),
    # Other JSON values and non-JSON bodies.
    "arr": _fixed(200, b'[1,2,{"a":1}]'),
    "str": _fixed(200, b'"hello"'),
    "num": _fixed(200, b"12.50"),
    "null": _fixed(200, b"null"),
    "empty": _fixed(200, b""),
    "invalid": _fixed(200, b'{"a":1,'),
    "bom": _fixed(200, b'\xef\xbb\xbf{"a":1}'),
    "html": _fixed(200, b"<html><body>hi</body></html>", "text/html"),
    "text": _fixed(200, b"hello world", "text/plain"),
    "binary": _fixed(200, b"\x00\x01\x02\xff\xfe", "application/octet-stream"),
    # Statuses.
    "s201": _fixed(201, b'{"created":1}'),
    "s204": _fixed(204, b"", None),
    "s400": _fixed(400, b'{"detail":"bad request"}'),
    "s404": _fixed(404, b'{"detail":"Intentional 404 code"}'),
    "s404-text": _fixed(404, b"Not Found", "text/plain"),
    "s500": _fixed(500, b'{"error":"boom"}'),
    "s500-html": _fixed(500, b"<html>Internal Server Error</html>", "text/html"),
    "s503": _fixed(503, b"Service Unavailable", "text/plain"),
    "s503-null": _fixed(503, b"null"),
    # Answers computed from the request.
    "echo": _echo(200),
    "echo-404": _echo(404),
    "headers": _select_headers(ECHOED_HEADERS),
    "identity": _select_headers(IDENTITY_HEADERS),
    "countdown": _countdown,
    "redirect-307": _redirect(307, "/b/echo"),
    "redirect-302": _redirect(302, "/b/echo"),
    "redirect-obj": _redirect(307, "/b/obj"),
    "close": lambda _body, _headers: Answer(close=True),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # The oracle and the engine of several graphs call at once; the default backlog of 5 drops SYNs.
    request_queue_size = 256

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A caller that stopped listening (an abandoned Ensemble step, a stopped router) is normal.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):  # every method (a 302 makes Go's client send a GET)
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        parts = urlsplit(self.path)
        name = parts.path.removeprefix("/b/")
        delay_ms = int(parse_qs(parts.query).get("d", ["0"])[0])
        headers: dict[str, str] = {}
        for key, value in self.headers.items():
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        behaviour = BEHAVIOURS.get(name)
        answer = behaviour(body, headers) if behaviour else Answer(599, b"unknown behaviour", "text/plain")
        if delay_ms:
            time.sleep(delay_ms / 1000)
        if answer.close:
            self.close_connection = True
            return
        self.send_response(answer.status)
        if answer.content_type:
            self.send_header("Content-Type", answer.content_type)
        if answer.location:
            self.send_header("Location", answer.location)
        if answer.status != 204:
            self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if answer.status != 204:
            self.wfile.write(answer.body)


class StepServer:
    """The loopback server of every behaviour. Use as a context manager; ``host`` is ``ip:port``."""

    def __init__(self) -> None:
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="diff-steps", daemon=True
        )

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> StepServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


class RefusedPort:
    """A loopback port that refuses connections: bound (so nobody else gets it) but not listening."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> RefusedPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()
