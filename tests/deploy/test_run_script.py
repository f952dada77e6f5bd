"""``scripts/run.sh`` (``make run``) holds a burst, outlives a crashed worker, runs exactly one
scheduler and leaves nothing behind.

Starts the real script on free loopback ports with its own SQLite file and run folder: Redis, the
mock model server, Celery workers, beat and gunicorn. Fires 100 concurrent run creations (Django's
development server, with its listen backlog of 10, reset 47 of them), reads a static file and an
event stream, then SIGKILLs the worker and sees the supervisor start a new one that runs a graph.
Then kills single processes (a worker, beat, gunicorn's master, a supervisor, the script itself)
and looks at every process that carries the run folder in its environment: one scheduler, and
none left once the script is stopped.
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


def studio_processes(run_dir: Path) -> dict[int, list[str]]:
    """Every live process started by the script (they all inherit its RUN_DIR), orphans included:
    pid -> argv."""
    marker = f"RUN_DIR={run_dir}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (a service's group: its first pid)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


@dataclass
class Studio:
    url: str
    run_dir: Path
    token: str
    proc: subprocess.Popen[str]

    def pid_of(self, service: str) -> int:
        return int((self.run_dir / f"{service}.pid").read_text().strip() or 0)

    def schedulers(self) -> list[int]:
        """The processes running Celery beat: `celery beat`, or a worker's `--beat`/`-B` child
        (a worker's own main process schedules nothing)."""
        workers = set()
        for pid_file in self.run_dir.glob("worker*.pid"):
            workers.add(int(pid_file.read_text().strip() or 0))
        return sorted(
            pid
            for pid, argv in studio_processes(self.run_dir).items()
            if any(word in ("beat", "--beat", "-B") for word in argv) and pid not in workers
        )

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
    from execution.devtools import localredis

    try:
        localredis.find_server_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    port = free_port()
    run_dir = tmp_path / "run"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("DJANGO_", "RUN_", "CELERY_", "STUDIO_", "REDIS_", "MOCKMODELS_", "LOCAL_MODELS_", "DATABASE_")
        )
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'studio.sqlite3'}",
        PORT=str(port),
        MOCK_PORT=str(free_port()),
        MODELS="0",  # the real models' server has tests of its own (tests/models)
        REDIS_PORT=str(free_port()),
        RUN_DIR=str(run_dir),
        WEB_WORKERS="2",
        WORKERS="2",  # worker processes (make run's default: one per core)
        PYTHONUNBUFFERED="1",
        # The burst is one user's 100 runs at once, to fill the server's backlog: no per-user
        # share here (tests/api/test_fair_share.py holds that one).
        RUN_MAX_IN_FLIGHT_PER_USER="0",
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
    from execution.devtools import demo

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

    worker, other = studio.pid_of("worker1"), studio.pid_of("worker2")
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


def wait_gone(pids: list[int], seconds: float, what: str) -> None:
    try:
        wait_until(lambda: not [pid for pid in pids if alive(pid) and not zombie(pid)], seconds, what)
    except AssertionError as exc:
        left = {pid: " ".join(argv)[:160] for pid, argv in studio_processes_of(pids).items()}
        raise AssertionError(f"{exc}; left: {left}") from None


def studio_processes_of(pids: list[int]) -> dict[int, list[str]]:
    found = {}
    for pid in pids:
        try:
            found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
    return found


def zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def test_one_scheduler_always_and_ctrl_c_leaves_no_process(studio: Studio) -> None:
    beat = wait_until(lambda: studio.schedulers(), 30, "a scheduler")
    assert beat == [studio.pid_of("beat")]

    # A worker killed alone (the OOM killer's way): its group goes with it, one scheduler remains.
    worker = studio.pid_of("worker1")
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: (pid := studio.pid_of("worker1")) != worker and alive(pid), 20, "a new worker")
    wait_until(lambda: "ready" in (studio.run_dir / "worker1.log").read_text(), 60, "the new worker ready")
    assert group_members(worker) == []
    assert studio.schedulers() == beat

    # The scheduler killed: restarted, and still one.
    os.kill(beat[0], signal.SIGKILL)
    wait_until(lambda: (pids := studio.schedulers()) and pids != beat and pids, 30, "a new scheduler")
    time.sleep(2)
    assert studio.schedulers() == [studio.pid_of("beat")] and studio.pid_of("beat") != beat[0]

    # gunicorn's master killed: its workers do not outlive it, and a new master answers.
    web = studio.pid_of("web")
    assert len(group_members(web)) > 1  # the master and its workers
    os.kill(web, signal.SIGKILL)
    wait_gone(group_members(web), 15, "the killed master's workers gone")
    wait_until(lambda: httpx.get(f"{studio.url}/login/").status_code == 200, 60, "the web server again")

    # Ctrl-C: the script and everything it started stop.
    everything = list(studio_processes(studio.run_dir))
    assert len(everything) > 5
    studio.proc.send_signal(signal.SIGINT)
    studio.proc.wait(timeout=40)
    wait_gone(everything, 15, "every process of the studio gone after Ctrl-C")
    assert studio_processes(studio.run_dir) == {}


@pytest.mark.parametrize("victim", ["script", "supervisor"])
def test_a_killed_script_or_supervisor_leaves_no_process(studio: Studio, victim: str) -> None:
    wait_until(lambda: studio.schedulers(), 30, "a scheduler")
    everything = list(studio_processes(studio.run_dir))
    if victim == "script":  # SIGKILL runs no trap: the supervisors notice on their own
        os.kill(studio.proc.pid, signal.SIGKILL)
    else:  # the service loses its supervisor, and the script notices the supervisor's death
        os.kill(parent_of(studio.pid_of("worker2")), signal.SIGKILL)
    wait_gone(everything, 30, f"every process of the studio gone after its {victim} was killed")
    assert studio_processes(studio.run_dir) == {}
