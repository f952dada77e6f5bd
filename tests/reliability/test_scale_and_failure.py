"""What deploy/kubernetes/ claims, shown on this machine with real processes (no API server runs
here): two web replicas behind one database, several worker replicas, one beat, and the probes.

Starts a throwaway PostgreSQL (scripts/postgres.sh) and a Redis, migrates and seeds the demo, then
the services as separate processes, each in a process group of its own, with the settings
scripts/run.sh uses (``config.settings``): two gunicorn web processes on their own ports, three
Celery workers (``--pool=threads``), one ``celery beat`` (the reaper's schedule, every second here)
and the mock model server. Then:

1. sends 60 runs of the demo's ``face-recognition`` graph, alternately to both web processes, with
   every model answering after ``STEP_LATENCY_MS`` so that runs overlap;
2. stops one worker the way Kubernetes ends a pod whose grace period runs out (SIGTERM, then
   SIGKILL while its runs are still in flight): every run ends succeeded, the killed worker's
   unfinished runs re-executed once by the others (``attempt`` 2) after its heartbeat lapsed, none
   lost, none run a third time;
3. stops PostgreSQL: both web processes' ``/readyz`` turn 503 naming the database within seconds
   while ``/healthz`` stays 200; starts it again: ``/readyz`` is 200 again, a new run on each web
   process succeeds and every run from before is there with its final state;
4. stops every process and checks that none is left.

A worker killed by a bare SIGKILL (the OOM killer, a crash), without the SIGTERM before it, fails
the runs it held instead, by design (a run that crashes its worker is never requeued into the same
crash): tests/reliability/test_poison_run.py. Figures go to ``make reliability``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from faultkit import free_port

pytestmark = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
RUNS = 60
WEB_PROCESSES = 2
WORKERS = 3
WORKER_THREADS = 8  # 24 runs at a time: the load queues, and every worker holds runs
STEP_LATENCY_MS = 600  # face-recognition makes 5 model calls: about 3 s a run
GRAPH = "face-recognition"
# The reaper's settings for this test: a killed worker's runs are requeued within about 4 s.
HEARTBEAT_SECONDS = 0.5
HEARTBEAT_TIMEOUT = 3.0
REAPER_SECONDS = 1.0
TERMINAL = ("succeeded", "failed", "cancelled")
STOP_ANNOUNCED = "run.worker_stopping"  # execution.services.worker.STOP_ANNOUNCED


def postgres_bin() -> Path | None:
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: [int(x) for x in p.parent.name.split(".") if x.isdigit()],
    )
    return found[-1] if found else None


def wait_until(check: Callable[[], Any], seconds: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = check()
        except (httpx.HTTPError, OSError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(interval)


class Cluster:
    """The services, each started in a new session (its own process group), logging to ``workdir``;
    every process carries ``marker`` in its environment so that leftovers can be found."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.marker = f"STUDIO_SCALE_TEST={workdir}"
        key, value = self.marker.split("=", 1)
        self.env = {**env, key: value}
        self.groups: dict[str, subprocess.Popen[bytes]] = {}

    def manage(self, *args: str, timeout: float = 120) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout

    def start(self, name: str, *argv: str) -> subprocess.Popen[bytes]:
        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 - the child holds it
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self.groups[name] = proc
        return proc

    def log_tail(self, name: str, chars: int = 2500) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def stop_all(self, grace: float = 15.0) -> None:
        """SIGTERM to every group, SIGKILL to what is left after ``grace`` seconds."""
        for proc in self.groups.values():
            with_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in self.groups.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
        for proc in self.groups.values():
            with_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)

    def leftovers(self) -> dict[int, str]:
        """Every live process that carries this cluster's marker: pid -> command line."""
        marker = self.marker.encode()
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if marker not in (entry / "environ").read_bytes().split(b"\0"):
                    continue
                stat = (entry / "stat").read_text()
                if stat[stat.rindex(")") + 2] == "Z":
                    continue
                found[int(entry.name)] = (
                    (entry / "cmdline").read_bytes().decode(errors="replace").replace("\0", " ")[:200]
                )
            except OSError:
                continue
        return found


def with_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class Postgres:
    """scripts/postgres.sh on a free loopback port: start, stop, resume. The outage is a fast
    shutdown (what a pod's SIGTERM does): the throwaway cluster commits asynchronously, so an
    immediate stop would drop its last commits, which a production database would have kept."""

    def __init__(self) -> None:
        # Not pytest's tmp_path: under root, the postgres user must be able to reach the folder.
        self.dir = Path(tempfile.mkdtemp(prefix="studio-pg-scale-"))
        os.chmod(self.dir, 0o755)
        self.port = free_port()
        self.url = ""

    def _script(self, *args: str) -> str:
        done = subprocess.run(
            ["bash", "scripts/postgres.sh", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr[-2000:])
        return done.stdout.strip()

    def start(self) -> None:
        self.url = self._script("start", str(self.dir), str(self.port))

    def stop(self, mode: str = "fast") -> None:
        self._script("stop", str(self.dir), mode)

    def resume(self) -> None:
        self._script("resume", str(self.dir), str(self.port))

    def running(self) -> bool:
        return (self.dir / "data" / "postmaster.pid").exists()

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def postgres(record_figure: Any) -> Iterator[Postgres]:
    if postgres_bin() is None:
        record_figure("cluster_skipped", "PostgreSQL is not installed")
        pytest.skip(
            "PostgreSQL is not installed (apt-get install postgresql): the cluster test needs a real one"
        )
    server = Postgres()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def cluster(postgres: Postgres, tmp_path: Path) -> Iterator[Cluster]:
    if not (VENV_BIN / "gunicorn").exists() or not (VENV_BIN / "celery").exists():
        pytest.skip("the project's virtualenv (.venv, with gunicorn and celery) is not set up")
    from execution.devtools import localredis

    try:
        localredis.find_server_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    redis_port, mock_port = free_port(), free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("DJANGO_", "RUN_", "CELERY_", "STUDIO_", "REDIS_", "MOCKMODELS_", "LOCAL_MODELS_", "DATABASE_")
        )
    }
    env.update(
        # scripts/run.sh's settings.
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="1",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_HSTS_SECONDS="0",
        DJANGO_SECURE_COOKIES="0",
        DJANGO_LOG_LEVEL="WARNING",
        DATABASE_URL=postgres.url,
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        MOCKMODELS_URL=f"http://127.0.0.1:{mock_port}",
        # This test's: a dead worker is noticed in seconds, and one user sends the whole load.
        RUN_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
        RUN_HEARTBEAT_TIMEOUT=str(HEARTBEAT_TIMEOUT),
        RUN_REAPER_SECONDS=str(REAPER_SECONDS),
        RUN_MAX_IN_FLIGHT_PER_USER="0",
        PYTHONUNBUFFERED="1",
    )
    cluster = Cluster(tmp_path, env)
    try:
        cluster.start(
            "redis", sys.executable, "-m", "execution.devtools.localredis", "--port", str(redis_port)
        )
        cluster.start("mockmodels", sys.executable, "manage.py", "mockmodels", "--port", str(mock_port))
        cluster.manage("migrate", "--noinput", "-v", "0", timeout=300)
        cluster.manage("seed_demo")
        yield cluster
    finally:
        cluster.stop_all()


def start_services(cluster: Cluster) -> list[str]:
    """The web processes (their base URLs), the workers and beat, as scripts/run.sh starts them."""
    urls = []
    for i in range(1, WEB_PROCESSES + 1):
        port = free_port()
        cluster.start(
            f"web{i}", str(VENV_BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--worker-class", "gthread", "--workers", "1", "--threads", "16", "--timeout", "120",
            "--graceful-timeout", "5",
        )  # fmt: skip
        urls.append(f"http://127.0.0.1:{port}")
    for i in range(1, WORKERS + 1):
        cluster.start(
            f"worker{i}", str(VENV_BIN / "celery"), "-A", "config.celery_app", "worker", "--pool=threads",
            f"--concurrency={WORKER_THREADS}", f"--hostname=worker{i}@%h", "--loglevel=INFO",
        )  # fmt: skip
    cluster.start(
        "beat", str(VENV_BIN / "celery"), "-A", "config.celery_app", "beat", "--loglevel=INFO",
        "--schedule", str(cluster.workdir / "celerybeat-schedule"), "--pidfile", str(cluster.workdir / "celerybeat.pid"),
    )  # fmt: skip
    return urls


def ready(url: str) -> bool:
    return httpx.get(f"{url}/readyz", timeout=10).status_code == 200


def unready(url: str) -> bool:
    """``/readyz`` answers 503 and names the database."""
    response = httpx.get(f"{url}/readyz", timeout=10)
    return response.status_code == 503 and "database" in response.json()["detail"]


def worker_ready(cluster: Cluster, number: int) -> bool:
    """The worker said so in its log (Celery's "ready." line)."""
    return "ready." in cluster.log_tail(f"worker{number}", 100_000)


class Database:
    """Reads the cluster's database directly (what the runs' rows say, whatever the API shows)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url, connect_timeout=5) as connection:
            return connection.execute(sql, params).fetchall()

    def runs(self, ids: list[str]) -> dict[str, tuple[str, int]]:
        """run id -> (status, attempt)."""
        rows = self.query("SELECT id::text, status, attempt FROM execution_run WHERE id::text = ANY(%s)", ids)
        return {row[0]: (row[1], row[2]) for row in rows}

    def stop_announced(self, ids: list[str]) -> set[str]:
        rows = self.query(
            "SELECT DISTINCT run_id::text FROM execution_runevent WHERE type = %s AND run_id::text = ANY(%s)",
            STOP_ANNOUNCED,
            ids,
        )
        return {row[0] for row in rows}


def test_two_web_three_workers_one_beat_survive_a_worker_kill_and_a_database_outage(
    cluster: Cluster, postgres: Postgres, record_figure: Any
) -> None:
    from execution.devtools import demo

    token = cluster.manage("drf_create_token", "demo").split()[2]  # "Generated token <key> for user demo"
    headers = {"Authorization": f"Token {token}"}
    payload = demo.demo_request(GRAPH)
    mock = cluster.env["MOCKMODELS_URL"]
    database = Database(postgres.url)
    webs = start_services(cluster)
    for url in webs:
        wait_until(partial(ready, url), 60, f"{url}/readyz answers 200\n{cluster.log_tail('web1')}")
    wait_until(lambda: httpx.put(f"{mock}/_mock/config/*", json={"latency_ms": STEP_LATENCY_MS}).status_code == 200,
               30, "the mock model server takes its latency")  # fmt: skip
    for i in range(1, WORKERS + 1):
        wait_until(partial(worker_ready, cluster, i), 60, f"worker{i} ready")

    # 1. The load, spread over both web processes.
    def create(n: int) -> str:
        response = httpx.post(f"{webs[n % len(webs)]}/api/graphs/{GRAPH}/runs/", json={"payload": payload},
                              headers=headers, timeout=60)  # fmt: skip
        assert response.status_code == 202, (n, response.status_code, response.text[:500])
        return str(response.json()["id"])

    sent_at = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        ids = list(pool.map(create, range(RUNS)))
    assert len(set(ids)) == RUNS

    # 2. One worker stopped mid-run: SIGTERM (it records on each of its runs that it was asked to
    # stop), then SIGKILL before those runs end, as a pod's grace period running out.
    def running() -> int:
        return sum(1 for status, _ in database.runs(ids).values() if status == "running")

    wait_until(lambda: running() >= WORKERS * WORKER_THREADS // 2, 60, "runs in flight on the workers")
    victim = cluster.groups["worker1"]
    os.kill(victim.pid, signal.SIGTERM)
    wait_until(
        lambda: database.stop_announced(ids), 15, f"worker1 records its runs\n{cluster.log_tail('worker1')}"
    )
    # The SIGKILL comes when its announcements are all written (a grace period is 30 s or more),
    # and before its runs (3 s each) can end.
    seen: list[set[str]] = []

    def announced_all() -> set[str] | None:
        seen.append(database.stop_announced(ids))
        return seen[-1] if len(seen) >= 3 and seen[-1] == seen[-3] else None

    held = wait_until(announced_all, 10, "worker1's announcements settle", interval=0.2)
    with_group(victim.pid, signal.SIGKILL)
    killed_at = time.time()  # wall clock: compared with the rows' finished_at
    victim.wait(10)
    unfinished = {run for run, (status, _) in database.runs(list(held)).items() if status not in TERMINAL}

    wait_until(lambda: all(s in TERMINAL for s, _ in database.runs(ids).values()), 120,
               f"every run ends\n{cluster.log_tail('worker2')}\n{cluster.log_tail('beat')}")  # fmt: skip
    drained_at = time.monotonic()
    final = database.runs(ids)
    reexecuted = {run for run, (_, attempt) in final.items() if attempt >= 2}
    lost = [run for run in ids if final.get(run, ("missing", 0))[0] not in TERMINAL]
    failed = {run: final[run] for run in ids if run not in lost and final[run][0] != "succeeded"}
    record_figure("cluster_runs_sent", RUNS)
    record_figure("cluster_runs_succeeded", sum(1 for s, _ in final.values() if s == "succeeded"))
    record_figure("cluster_runs_reexecuted", len(reexecuted))
    record_figure("cluster_runs_held_by_killed_worker", len(held))
    record_figure("cluster_runs_lost", len(lost))
    record_figure("cluster_drain_s", round(drained_at - sent_at, 2))
    assert held, "the killed worker held no run"
    assert not lost, lost
    assert not failed, database.query(
        "SELECT id::text, attempt, error FROM execution_run WHERE id::text = ANY(%s)", list(failed)
    )
    # The kill cost at most the runs it held: each of those not finished in its grace was run once
    # more, and nothing else was.
    assert reexecuted == unfinished, (sorted(unfinished), sorted(reexecuted), sorted(held))
    assert all(attempt <= 2 for _, attempt in final.values()), final
    assert reexecuted, f"no run of the killed worker was left to re-execute (it held {len(held)})"
    # From the kill to the last of its runs ending, re-executed by the other workers.
    rerun_end = database.query(
        "SELECT EXTRACT(EPOCH FROM MAX(finished_at)) FROM execution_run WHERE id::text = ANY(%s)",
        list(reexecuted),
    )[0][0]
    record_figure("cluster_kill_to_rerun_s", round(float(rerun_end) - killed_at, 2))

    # 3. The database goes away: both web processes turn unready naming it, and stay alive.
    before = database.runs(ids)
    postgres.stop()
    stopped_at = time.monotonic()

    for url in webs:
        wait_until(partial(unready, url), 15, f"{url}/readyz turns 503 naming the database")
    record_figure("cluster_unready_s", round(time.monotonic() - stopped_at, 2))
    for url in webs:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        body = httpx.get(f"{url}/readyz", timeout=10).json()
        assert [issue["code"] for issue in body["issues"]] == ["ready.database"], body
    time.sleep(2)  # an outage of a few probe periods
    for url in webs:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200

    postgres.resume()
    resumed_at = time.monotonic()
    for url in webs:
        wait_until(partial(ready, url), 30, f"{url}/readyz is 200 again")
    record_figure("cluster_ready_again_s", round(time.monotonic() - resumed_at, 2))
    assert database.runs(ids) == before  # every run from before, with its final state

    # A new run on each web process succeeds after the outage.
    fresh = [create(n) for n in range(WEB_PROCESSES)]

    def status_of(run: str) -> str:
        return str(httpx.get(f"{webs[0]}/api/runs/{run}/", headers=headers, timeout=10).json()["status"])

    def ended(run: str) -> bool:
        return status_of(run) in TERMINAL

    for run in fresh:
        wait_until(partial(ended, run), 60, f"a new run ends after the outage\n{cluster.log_tail('worker2')}")
        assert status_of(run) == "succeeded", database.query(
            "SELECT error FROM execution_run WHERE id::text = %s", run
        )

    # 4. Everything stops, and nothing is left behind.
    cluster.stop_all()
    left = cluster.leftovers()
    assert not left, left
    postgres.stop()
    assert not postgres.running()
