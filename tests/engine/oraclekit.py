"""Ask KServe's real router (``../shared/oracle/kserve-router``) what it does, for test vectors.

The oracle is a development reference, not a dependency: tests that run it call
:func:`require_oracle` first, which skips them (saying why) where the folder does not exist. Its
answers are recorded as data under ``tests/engine/data/`` (``python tests/engine/oracle_vectors.py``
rewrites them), so the tests that check the engine against those answers run everywhere.

    with OracleRouter({"nodes": {...}}, propagate="X-Request-Id,Authorization") as router:
        status, headers, body = router.post(b'{"a":1}', [("X-Request-Id", "1")])
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORACLE_DIR = ROOT.parent / "shared" / "oracle"
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
