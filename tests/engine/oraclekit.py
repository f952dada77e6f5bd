"""Ask KServe's real router (``../shared/oracle/kserve-router``) what it does, for test vectors.

The oracle is a development reference, not a dependency: tests that run it call
:func:`require_oracle` first, which skips them (saying why) where the folder does not exist. Its
answers are recorded as data under ``tests/engine/data/`` (``python tests/engine/oracle_vectors.py``
rewrites them), so the tests that check the engine against those answers run everywhere.

    with OracleRouter({"nodes": {...}}, propagate="X-Request-Id,Authorization") as router:
        status, headers, body = router.post(b'{"a":1}', [("X-Request-Id", "1")])
    with OracleRouter(sequence_graph(step_url)) as router:
        answer = router.answer(b'{"a":1}')   # status, Content-Type and body as they arrived

:class:`RawServer` answers with fixed bytes (a broken or hostile step server), for Go's error texts.
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

ROOT = Path(__file__).resolve().parents[2]
# ``$KSERVE_ORACLE_DIR`` overrides the place (a git worktree is not beside ``shared/``).
ORACLE_DIR = Path(os.environ.get("KSERVE_ORACLE_DIR") or ROOT.parent / "shared" / "oracle")
ROUTER = ORACLE_DIR / "kserve-router"


def oracle_available() -> bool:
    return ROUTER.exists()


def require_oracle() -> None:
    """Skip the calling test when the oracle binaries are not beside the project."""
    import pytest

    if not oracle_available():
        pytest.skip(f"KServe's router oracle is not at {ROUTER} (recorded vectors still run)")


def free_port() -> int:
    with socket.socket() as sock:
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
    """KServe's router on a loopback port, started as KServe's controller starts it.

    ``propagate`` is the ``PROPAGATE_HEADERS`` value (None: the variable is unset, KServe's
    default). Stopped with SIGKILL: on SIGTERM the router sleeps 30 s to drain (main.go).
    """

    def __init__(self, spec: dict[str, Any], *, propagate: str | None = None, log: bool = False) -> None:
        self.port = free_port()
        self._log = ""
        env = {"PATH": os.environ.get("PATH", ""), "ORACLE_PORT": str(self.port)}
        if propagate is not None:
            env["PROPAGATE_HEADERS"] = propagate
        if log:
            env["ORACLE_LOG"] = "1"
        self._proc = subprocess.Popen(
            [str(ROUTER), "--graph-json", json.dumps(spec)],
            env=env,
            stdout=subprocess.PIPE if log else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
        )

    def __enter__(self) -> OracleRouter:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                status, _, _ = self.request("GET", "/readyz", b"", [])
                if status == 200:
                    return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("the oracle router did not become ready")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        if self._proc.stdout is not None and not self._proc.stdout.closed:
            self._log = self._proc.stdout.read().decode(errors="replace")
            self._proc.stdout.close()
        self._proc.wait(timeout=5)

    def log(self) -> str:
        """The router's log (only with ``log=True``, after :meth:`stop`)."""
        return self._log

    def request(
        self, method: str, path: str, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request with exactly these headers (repeats and order kept)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for name, value in headers:
                conn.putheader(name, value)
            if body or method == "POST":
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            response = conn.getresponse()
            return response.status, list(response.getheaders()), response.read()
        finally:
            conn.close()

    def post(self, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, list[tuple[str, str]], bytes]:
        return self.request("POST", "/", body, headers)

    def answer(self, body: bytes, *, timeout: float = 10.0) -> Answer:
        """POST ``body`` with no headers; raises OSError/HTTPException if it closes without answering."""
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
