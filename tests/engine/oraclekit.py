"""A small harness around KServe's real router (``../shared/oracle/kserve-router``).

Starts the oracle for one graph JSON on a free loopback port, waits for ``/readyz``, and posts
bodies to it, returning status, Content-Type and body exactly as they arrived. Tests that use it
call :func:`require_oracle` first, which skips them (saying why) where the oracle folder is absent;
the recorded answers live in ``tests/engine/data/`` so that the ordinary tests never need it.

    with OracleRouter(sequence_graph(step_url)) as router:
        answer = router.post(b'{"a":1}')
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ORACLE_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "oracle"
ROUTER = ORACLE_DIR / "kserve-router"


def require_oracle() -> None:
    """Skip the calling test when the oracle binaries are not beside the project."""
    if not ROUTER.exists():
        pytest.skip(f"KServe oracle router not found at {ROUTER} (only on the development machines)")


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sequence_graph(url: str) -> dict[str, Any]:
    """A root Sequence with one ``serviceUrl`` step: the step's body passes through untouched."""
    return {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": url}]}}}


def ensemble_graph(url: str) -> dict[str, Any]:
    """A root Ensemble with one step named ``s``: the step's body is decoded and re-encoded by Go."""
    return {"nodes": {"root": {"routerType": "Ensemble", "steps": [{"name": "s", "serviceUrl": url}]}}}


@dataclass(frozen=True)
class Answer:
    """What the oracle answered; ``content_type`` is None when the header was absent."""

    status: int
    content_type: str | None
    body: bytes


class OracleRouter:
    """KServe's router for one graph, as a context manager (the process is ours; stopped on exit)."""

    def __init__(self, graph: dict[str, Any], *, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self._graph = json.dumps(graph)
        self._env = {**os.environ, "ORACLE_PORT": str(self.port), **(env or {})}
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> OracleRouter:
        self._proc = subprocess.Popen(
            [str(ROUTER), "--graph-json", self._graph],
            env=self._env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                conn.request("GET", "/readyz")
                if conn.getresponse().status == 200:
                    conn.close()
                    return self
            except OSError:
                time.sleep(0.02)
        self.__exit__()
        raise RuntimeError("the oracle router did not become ready")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            # SIGKILL: on SIGTERM KServe's router fails readiness and waits 30 s before stopping.
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def post(self, body: bytes, *, timeout: float = 10.0) -> Answer:
        """POST ``body`` to the router; raises OSError/HTTPException if it closes without answering."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("POST", "/", body=body)
            response = conn.getresponse()
            return Answer(response.status, response.getheader("Content-Type"), response.read())
        finally:
            conn.close()


class RawServer:
    """A loopback TCP server that answers every connection with fixed bytes, then closes it.

    It reads the request head (and a ``Content-Length`` body) first, unless ``read_request`` is
    false; ``reset`` closes with an RST instead of a FIN. For transport errors a well-behaved HTTP
    server cannot produce: no answer, a cut body, a malformed status line, plain HTTP to a TLS client.
    """

    def __init__(self, answer: bytes, *, reset: bool = False, read_request: bool = True) -> None:
        self.answer = answer
        self.reset = reset
        self.read_request = read_request
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(2)
                try:
                    if self.read_request:
                        self._read_request(conn)
                    else:
                        conn.recv(65536)
                    conn.sendall(self.answer)
                    if self.reset:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass

    @staticmethod
    def _read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return
            body += chunk
