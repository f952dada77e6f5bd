"""The demo's real model server (models/server.py) for the tests: its interpreter (.venv-models,
built by ``make setup``) and a server on a free loopback port. Where the virtualenv is missing the
tests skip and say why; in CI (``CI`` set) they fail instead, so they can never skip unnoticed."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS_PYTHON = ROOT / ".venv-models" / "bin" / "python"


def models_python() -> Path:
    if not MODELS_PYTHON.exists():
        reason = f"the models' virtualenv is missing ({MODELS_PYTHON}); `make models-venv` builds it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return MODELS_PYTHON


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def model_server(log: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """KServe's ModelServer with the demo's models, started as `make run` starts it; its URL.
    ``env`` is added to the test process's environment (the OpenTelemetry variables, say)."""
    python = models_python()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(python), "-m", "models.server", "--host", "127.0.0.1", "--http_port", str(port)],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(
                    f"the model server exited ({proc.returncode}): {log.read_text()[-2000:]}"
                )
            try:
                if httpx.get(f"{url}/v2/health/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the model server was not ready in 90 s: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
