"""Helpers of the reliability tests (a module with a unique name: tests/ has no packages):
Redis and Celery worker processes to crash, the test database's URL for another process, polling.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]


def load_module(name: str, path: Path) -> Any:
    """Import a plain helper module of the test tree by file path (tests/ has no packages)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


stepserver = load_module("stepserver", ROOT / "tests" / "stepserver.py")

# Fast failure detection for the fault tests: workers beat every 0.2 s and a run silent for 1.5 s
# counts as dead (production: 2 s and 20 s, config/settings.py).
HEARTBEAT_SECONDS = 0.2
HEARTBEAT_TIMEOUT = 1.5
QUEUED_TIMEOUT = 3.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- Redis that can be stopped and started again on the same port -------------------------------


class RedisServer:
    """A throwaway Redis (or Valkey) on a fixed loopback port, with no persistence: a restart
    loses every queued message, as a crashed Redis without AOF would."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        from execution.devtools import localredis

        self.proc = localredis.start(self.port)

    def stop(self) -> None:
        """SIGKILL, as a crash would (no shutdown save, clients see the connection drop)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def point_producer(app: Any, url: str | None) -> None:
    """Send this process's task messages to ``url`` from now on."""
    app.conf.update(
        broker_url=url,
        broker_connection_retry_on_startup=False,
        task_always_eager=False,
    )
    # kombu keeps one pool per broker URL for the whole process (kombu.pools); closing it would
    # break the next user of that URL, so only this app's references are dropped.
    app._pool = None
    app.amqp._producer_pool = None


# --- Celery worker processes ---------------------------------------------------------------------


def database_url() -> str:
    """A DATABASE_URL for another process that points at this test run's database."""
    from django.db import connection

    conf = connection.settings_dict
    if conf["ENGINE"] == "django.db.backends.sqlite3":
        name = str(conf["NAME"])
        assert name != ":memory:" and "mode=memory" not in name, "the worker needs a file database"
        return "sqlite:///" + name  # an absolute path gives sqlite:////tmp/…
    user = quote(str(conf.get("USER") or ""), safe="")
    password = quote(str(conf.get("PASSWORD") or ""), safe="")
    auth = f"{user}:{password}@" if user else ""
    host = conf.get("HOST") or "127.0.0.1"
    port = conf.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{conf['NAME']}"


class WorkerProcess:
    """One ``celery worker --pool=threads`` process in its own session, logging to a file."""

    counter = 0

    def __init__(self, env: dict[str, str], concurrency: int = 4, launcher: Path | None = None) -> None:
        """``launcher``: a script run instead of ``-m celery`` with the same arguments (a test
        worker that installs its own instrumentation first, as tests/reliability/crashworker.py)."""
        WorkerProcess.counter += 1
        self.launcher = launcher
        self.name = f"fault{WorkerProcess.counter}-{os.getpid()}@127.0.0.1"
        self.env = env
        self.concurrency = concurrency
        self.log = (
            Path(tempfile.gettempdir()) / f"studio-fault-worker-{os.getpid()}-{WorkerProcess.counter}.log"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        argv = [
            sys.executable,
            *([str(self.launcher)] if self.launcher else ["-m", "celery"]),
            "-A",
            "config.celery_app",
            "worker",
            "--pool=threads",
            f"--concurrency={self.concurrency}",
            f"--hostname={self.name}",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=WARNING",
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the worker process (SIGTERM: an operator's or Kubernetes' stop)."""
        if self.alive():
            assert self.proc is not None
            os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no acks, no last heartbeat."""
        if self.alive():
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def rss_bytes(self) -> int:
        """Resident memory of the worker process now (VmRSS in /proc/<pid>/status)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS line")

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class WebProcess:
    """The web app in a process of its own (``manage.py runserver --noreload`` on a loopback port),
    so that a request that crashes it shows up as a dead process rather than a dead test run."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        # Plain HTTP on loopback: no HTTPS redirect, whatever the production defaults say.
        self.env = {**env, "DJANGO_SECURE_SSL_REDIRECT": "0", "DJANGO_HSTS_SECONDS": "0"}
        self.log = Path(tempfile.gettempdir()) / f"studio-fault-web-{os.getpid()}-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> WebProcess:
        argv = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if not self.alive() or time.monotonic() > deadline:
                    raise AssertionError(f"the web process did not start\n{self.log_tail()}") from None
                time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.unlink(missing_ok=True)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def wait_until(check: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.02) -> Any:
    """Poll ``check`` until it returns something truthy (returned); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout} s")
        time.sleep(interval)
