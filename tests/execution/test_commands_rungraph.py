"""``rungraph`` and ``servegraph`` against real step servers on loopback."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.stepserver import Echo, Reply, StepServer

ROOT = Path(__file__).resolve().parents[2]

CHAIN = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: chain
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - name: first
        serviceName: first
      - name: second
        serviceUrl: {second}
        data: $response
"""


def run(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("rungraph", *args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


@pytest.fixture
def servers() -> Any:
    with StepServer() as server:
        server.route("/first", Reply(json={"predictions": [1, 2]}))
        server.route("/second", Echo())
        yield server


def test_rungraph_prints_status_body_and_trace(servers: Any, tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN.format(second=servers.url("/second")))
    result = run(str(path), "--data", '{"instances": [1]}', "--service", f"first={servers.url('/first')}")
    assert result["status"] == 200
    assert result["content_type"] == "application/json"
    assert set(result) == {"status", "content_type", "body", "trace"}
    finished = [e for e in result["trace"] if e["type"] == "step.finished"]
    assert [e["step_name"] for e in finished] == ["first", "second"]
    assert servers.received("/second")[0].json() == {"predictions": [1, 2]}


def test_rungraph_exit_0_for_an_error_response(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN.format(second="http://127.0.0.1:1/"))
    result = run(str(path), "--service", "first=http://127.0.0.1:1/")
    assert result["status"] == 500
    assert result["body"]["error"] == "Failed to process request"
    assert "connection refused" in result["body"]["cause"]


def test_rungraph_exit_2_for_an_invalid_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CHAIN.format(second="http://x/").replace("routerType: Sequence", "routerType: Chain"))
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("rungraph", str(path), stdout=io.StringIO(), stderr=err)
    assert caught.value.returncode == 2
    assert "schema.enum" in err.getvalue() and f"{path}:8:" in err.getvalue()


def test_rungraph_exit_2_for_a_bad_header_argument(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN.format(second="http://x/"))
    with pytest.raises(CommandError) as caught:
        call_command(
            "rungraph", str(path), "--header", "no colon", stdout=io.StringIO(), stderr=io.StringIO()
        )
    assert caught.value.returncode == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_servegraph_serves_every_path_and_readyz(servers: Any, tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN.format(second=servers.url("/second")))
    port = free_port()
    proc = subprocess.Popen(  # a real process, as people run it
        [
            sys.executable,
            "manage.py",
            "servegraph",
            str(path),
            "--port",
            str(port),
            "--service",
            f"first={servers.url('/first')}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"DJANGO_SETTINGS_MODULE": "config.test_settings", "PATH": "/usr/bin:/bin"},
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert ready.status_code == 200 and ready.content == b""
        answer = httpx.put(f"http://127.0.0.1:{port}/any/path?x=1", content=b'{"a": 1}', timeout=5)
        assert answer.status_code == 200
        assert answer.json() == {"predictions": [1, 2]}
        assert answer.headers["content-type"] == "application/json"
    finally:
        proc.terminate()
        proc.wait(10)


ECHO_HEADERS = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: headers
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - serviceUrl: {url}
"""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, []),
        ("X-A", ["X-A"]),
        ("X-A,", ["X-A", "X-B"]),  # Go's strings.Split keeps the empty pattern: it matches everything
        ("", ["X-A", "X-B"]),
    ],
)
def test_propagate_headers_is_split_as_kserve_splits_it(
    value: str | None, expected: list[str], tmp_path: Path
) -> None:
    with StepServer() as server:
        server.route("/echo", Echo(headers=True))
        path = tmp_path / "headers.yaml"
        path.write_text(ECHO_HEADERS.format(url=server.url("/echo")))
        args = [str(path), "--header", "X-A: 1", "--header", "X-B: 2"]
        if value is not None:
            args += ["--propagate-headers", value]
        result = run(*args)
    sent = result["body"]["headers"]
    assert [name for name in ("X-A", "X-B") if name in sent] == expected


def test_rungraph_reads_answers_of_any_size_as_kserve_unless_capped(tmp_path: Path) -> None:
    """KServe passes an 11 MiB answer through; the studio's 10 MiB test-run cap is an option here."""
    size = 11 * 1024 * 1024
    with StepServer() as server:
        server.route("/big", Reply(body=b'"' + b"x" * (size - 2) + b'"'))
        path = tmp_path / "big.yaml"
        path.write_text(
            CHAIN.replace("serviceName: first", f"serviceUrl: {server.url('/big')}").format(
                second=server.url("/big")
            )
        )
        result = run(str(path), "--data", "{}")
        assert (result["status"], len(result["body"])) == (200, size - 2)
        capped = run(str(path), "--data", "{}", "--max-response-bytes", str(10 * 1024 * 1024))
        assert capped["status"] == 500
        assert "exceeds the engine's 10485760-byte limit" in capped["body"]["cause"]
