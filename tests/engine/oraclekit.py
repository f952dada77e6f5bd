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
import subprocess
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
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
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
