"""``scripts/run.sh`` (``make run``) holds a burst and outlives a crashed worker (attack item 15).

Starts the real script on free loopback ports with its own SQLite file and run folder: Redis, the
mock model server, a Celery worker and gunicorn. Fires 100 concurrent run creations (Django's
development server, with its listen backlog of 10, reset 47 of them), reads a static file and an
event stream, then SIGKILLs the worker and sees the supervisor start a new one that runs a graph.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
BURST = 100


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@dataclass
class Studio:
    url: str
    run_dir: Path
    token: str
    proc: subprocess.Popen[str]

    def pid_of(self, service: str) -> int:
        return int((self.run_dir / f"{service}.pid").read_text().strip() or 0)

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Token {self.token}"}, **kwargs)


def wait_until(check: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = check()
        except (httpx.HTTPError, OSError, ValueError):
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds} s")


@pytest.fixture
def studio(tmp_path: Path) -> Iterator[Studio]:
    if not (ROOT / ".venv" / "bin" / "gunicorn").exists():
        pytest.skip("the project's virtualenv (.venv, with gunicorn) is not set up")
    from execution import localredis

    try:
        localredis.find_server_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    port = free_port()
    run_dir = tmp_path / "run"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "RUN_", "CELERY_", "STUDIO_", "REDIS_", "MOCKMODELS_", "DATABASE_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'studio.sqlite3'}",
        PORT=str(port),
        MOCK_PORT=str(free_port()),
        REDIS_PORT=str(free_port()),
        RUN_DIR=str(run_dir),
        WEB_WORKERS="2",
        WORKERS="2",  # worker processes (make run's default: one per core)
        PYTHONUNBUFFERED="1",
    )
    manage = [sys.executable, "manage.py"]
    # Seeded as an earlier `make run` on the default ports left it ('local' -> the mock on 9010);
    # run.sh on other ports must point it at the mock server it starts.
    for command in (["migrate", "--noinput", "-v", "0"], ["seed_demo"]):
        subprocess.run([*manage, *command], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    created = subprocess.run(
        [*manage, "drf_create_token", "demo"], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    token = created.stdout.split()[2]  # "Generated token <key> for user demo"
    proc = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    studio = Studio(f"http://127.0.0.1:{port}", run_dir, token, proc)
    try:
        wait_until(lambda: httpx.get(f"{studio.url}/login/").status_code == 200, 60, "the web server answers")
        yield studio
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        for pid_file in run_dir.glob("*.pid"):  # anything the script left behind
            pid = int(pid_file.read_text().strip() or 0)
            if pid and alive(pid):
                os.killpg(pid, signal.SIGKILL)


def test_make_run_holds_a_burst_serves_the_frontend_and_restarts_a_dead_worker(studio: Studio) -> None:
    from execution import demo

    payload = demo.demo_request("canary")

    start = threading.Barrier(BURST)

    def create(_: int) -> int | str:
        try:
            with studio.client(timeout=60) as client:
                start.wait(timeout=30)  # all at once: a burst, not a queue
                return client.post("/api/graphs/canary/runs/", json={"payload": payload}).status_code
        except httpx.TransportError as exc:  # a reset or refused connection
            return type(exc).__name__

    with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
        statuses = list(pool.map(create, range(BURST)))
    assert statuses == [202] * BURST, sorted(map(str, statuses))

    asset = next((ROOT / "frontend" / "dist" / "assets").glob("*.js"), None)
    if asset is not None:  # the built frontend, through whitenoise
        assert httpx.get(f"{studio.url}/static/assets/{asset.name}").status_code == 200

    worker, other = studio.pid_of("worker1"), studio.pid_of("worker2")  # worker1 also runs beat
    assert alive(worker) and alive(other) and worker != other
    os.killpg(worker, signal.SIGKILL)
    restarted = wait_until(
        lambda: (pid := studio.pid_of("worker1")) != worker and alive(pid) and pid, 20, "a new worker"
    )
    assert restarted != worker
    assert studio.pid_of("worker2") == other and alive(other)  # the other worker went on
    assert alive(studio.pid_of("web")) and alive(studio.pid_of("mockmodels"))

    with studio.client(timeout=60) as client:
        run = client.post("/api/graphs/canary/runs/", json={"payload": payload}).json()
        # its event stream, served while other requests are answered, ends with run.finished
        with client.stream("GET", f"/api/runs/{run['id']}/events/") as stream:
            assert stream.status_code == 200
            assert client.get(f"/api/runs/{run['id']}/").status_code == 200
            seen = []
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    seen.append(line.removeprefix("event: "))
        assert seen[0] == "run.queued" and seen[-1] == "run.finished"
        assert client.get(f"/api/runs/{run['id']}/").json()["status"] == "succeeded"
