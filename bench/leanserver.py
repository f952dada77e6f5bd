"""A lean step server for the engine benchmarks: fixed answers after fixed delays, nothing else.

The engine, the naive router and the server floor of ``bench/bench_engine.py`` all call this one
server, so whatever it costs weighs on every column alike. It exists because the floor is part of
every figure the goals are read from (a 10 ms step is counted as 10 ms): ``tests/stepserver.py``
(``http.server``, built for the tests' many behaviours) parses each request with the email
package and formats a Date header, and its sleeping threads wake with the kernel's default timer
slack (50 us). This one, per keep-alive connection, one thread that

- reads a request head and its Content-Length body and takes the path from the request line;
- waits the route's delay from the moment the request was read, in a sleep whose timer slack is
  1 us (``PR_SET_TIMERSLACK``, Linux; elsewhere the default);
- sends a prebuilt answer (status line, Content-Type, Content-Length, body) in one ``sendall``.

It answers every request with a Content-Length and keeps the connection open until the client
closes it. Unknown paths get a 404. It records nothing but a count of accepted connections.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import socket
import threading
import time
from typing import Any, Final

_PR_SET_TIMERSLACK: Final = 29
_MAX_HEAD: Final = 64 * 1024


def _answer(status: int, body: bytes) -> bytes:
    reason = {200: "OK", 404: "Not Found"}.get(status, "Status")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _libc() -> Any:
    name = ctypes.util.find_library("c")  # slow (it may run ldconfig): once, at import
    return ctypes.CDLL(name, use_errno=True) if name else None


_LIBC: Final = _libc()


def _fine_timer_slack() -> None:
    """This thread's sleeps end within 1 us of their time instead of 50 us (Linux only)."""
    prctl = getattr(_LIBC, "prctl", None)
    if prctl is not None:
        prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0)


class LeanServer:
    """``route(path, json, delay)`` answers ``json`` after ``delay`` seconds; see the module doc."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._routes: dict[bytes, tuple[bytes, float]] = {}
        self._missing = _answer(404, b'{"detail":"no route"}')
        self._lock = threading.Lock()
        self.connections = 0
        self._listener = socket.create_server((host, 0), backlog=256)
        self._stopping = False
        self._accepting = threading.Thread(target=self._accept, name="leanserver", daemon=True)

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def route(self, path: str, json_body: Any, delay: float) -> None:
        self._routes[path.encode()] = (_answer(200, json.dumps(json_body).encode()), delay)

    def reset(self) -> None:
        with self._lock:
            self.connections = 0

    def start(self) -> LeanServer:
        self._accepting.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        _fine_timer_slack()
        buffer = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data or len(buffer) > _MAX_HEAD:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = _content_length(head)
                while len(buffer) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                buffer = buffer[length:]
                read_at = time.monotonic()
                path = head.split(b" ", 2)[1].split(b"?", 1)[0]
                answer, delay = self._routes.get(path, (self._missing, 0.0))
                if delay:
                    time.sleep(max(0.0, read_at + delay - time.monotonic()))
                try:
                    conn.sendall(answer)
                except OSError:
                    return


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0
