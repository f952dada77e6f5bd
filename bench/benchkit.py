"""What the benchmarks that run the real pieces share: a free port, Django on a throwaway database
with this Redis and mock model server, the mock model server in a child process, and Celery worker
processes started as scripts/run.sh starts them (``bench_runs.py``, ``bench_graphtests.py``,
``bench_scale.py``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def make_run_workers() -> int:
    """The worker processes scripts/run.sh starts by default: one per core the process may use."""
    return max(1, len(os.sched_getaffinity(0)))


@contextlib.contextmanager
def serve_mock_models() -> Iterator[str]:
    """The mock model server in a child process; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from execution.devtools import mockmodels; mockmodels.run('127.0.0.1', {port}, None)",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    SERVICE_PIDS["mock model server"] = proc.pid
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the mock model server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def database(kind: str, workdir: Path) -> Iterator[str]:
    """A throwaway database's URL: a SQLite file in ``workdir``, or a PostgreSQL cluster started
    by scripts/postgres.sh (the test suite's PostgreSQL pass)."""
    if kind == "sqlite":
        yield f"sqlite:///{workdir / 'bench.sqlite3'}"
        return
    pgdir = Path(tempfile.mkdtemp(prefix="bench-runs-pg-"))  # the script gives it to PostgreSQL's user
    script = str(ROOT / "scripts" / "postgres.sh")
    url = subprocess.run(
        ["bash", script, "start", str(pgdir), str(free_port())], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run(["bash", script, "stop", str(pgdir)], check=False)
        shutil.rmtree(pgdir, ignore_errors=True)


def setup_django(workdir: Path, redis_port: int, mock_url: str, db_url: str | None = None) -> None:
    """Django on a throwaway database (default: SQLite in ``workdir``), with this Redis and mock
    model server (``make run``'s settings otherwise); call before anything imports Django's models.
    The environment is inherited by the worker processes started afterwards."""
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_DEBUG": "1",
            "DJANGO_SECRET_KEY": "bench-only",
            "DATABASE_URL": db_url or f"sqlite:///{workdir / 'bench.sqlite3'}",
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "MOCKMODELS_URL": mock_url,
            "RUN_EVENTS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "DJANGO_LOG_LEVEL": "ERROR",
        }
    )
    import django

    django.setup()


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes ``pids`` have used so far."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


WORKER_PIDS: list[int] = []
# The other processes a run's work costs CPU in (the mock model server, Redis), by name; the
# benchmarks that start them record their pids here (``cpu_by_process``).
SERVICE_PIDS: dict[str, int] = {}


def cpu_by_process() -> dict[str, float]:
    """CPU seconds used so far by each worker process and each of :data:`SERVICE_PIDS`."""
    used = {f"worker process {i + 1}": cpu_seconds([pid]) for i, pid in enumerate(WORKER_PIDS)}
    used.update({name: cpu_seconds([pid]) for name, pid in SERVICE_PIDS.items()})
    return used


@contextlib.contextmanager
def worker_processes(count: int, concurrency: int, logdir: Path, tree: Path = ROOT) -> Iterator[None]:
    """``count`` Celery worker processes (threads pool) of the code in ``tree``, as scripts/run.sh
    starts them; waits until every one answers a ping."""
    from config.celery_app import app

    procs = []
    for i in range(count):
        with open(logdir / f"worker{i}.log", "wb") as log:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable, "-m", "celery", "-A", "config.celery_app", "worker",
                        "--pool=threads", f"--concurrency={concurrency}", f"--hostname=bench{i}@%h",
                        "--without-gossip", "--without-mingle", "--loglevel=WARNING",
                    ],
                    cwd=tree, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )
            )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        WORKER_PIDS[:] = [proc.pid for proc in procs]
        while len(app.control.ping(timeout=1.0) or []) < count:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"the workers did not start (logs in {logdir})")
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        locked = [i for i in range(count) if "database is locked" in (logdir / f"worker{i}.log").read_text()]
        if locked:
            print(f"NOTE: 'database is locked' in the logs of workers {locked} ({logdir})")
