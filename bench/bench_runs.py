"""Benchmark of test runs through the real pieces; prints a table (not a test).

    .venv/bin/python bench/bench_runs.py [--runs 1000] [--concurrency 8]

It starts its own Redis (execution.localredis), the mock model server (in-process thread), a Celery
worker (threads pool, in-process, like ``make run``'s) and the Django app in a WSGI server thread,
on a throwaway SQLite database. Three measures:

1. enqueue -> task start: from ``apply_async`` (after the run's row is committed) to the worker's
   ``task_prerun`` signal, one run at a time (no backlog), over ``--runs`` runs: p50 / p99.
   Goal: <= 10 ms / <= 50 ms.
2. step finished -> event received: from the engine's ``step.finished`` timestamp to the moment an
   SSE client (httpx over real HTTP) reads that event: p95. Goal: <= 100 ms.
3. 50 concurrent runs of a 3-step Sequence whose steps each sleep ``STEP_MS`` on the mock server:
   measured runs/s divided by the bound the steps impose, ``worker concurrency / (3 * STEP_MS)``
   (a run cannot be faster than its three step latencies, and the worker runs ``concurrency`` runs
   at a time). Goal: >= 0.8.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STEP_MS = 100


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1000, help="runs for the enqueue -> start measure")
    parser.add_argument("--sse-runs", type=int, default=20, help="runs followed over SSE")
    parser.add_argument("--concurrency", type=int, default=8, help="worker threads (make run uses 8)")
    parser.add_argument(
        "--sqlite-sync-normal",
        action="store_true",
        help="PRAGMA synchronous=NORMAL (WAL's usual setting: no fsync per commit)",
    )
    parser.add_argument(
        "--cache-ssl-context",
        action="store_true",
        help="build httpx's default SSL context once per process instead of once per client "
        "(what execution.engine.http.make_client should do; see the note below)",
    )
    args = parser.parse_args()
    if args.cache_ssl_context:
        _cache_ssl_context()

    from execution import localredis, mockmodels

    workdir = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    redis_port = free_port()
    redis_proc = localredis.start(redis_port)
    mock = mockmodels.serve_in_thread()
    try:
        _bench(args, workdir, redis_port, mock)
    finally:  # never leave a server behind, whatever failed
        mock.shutdown()
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def setup_django(workdir: Path, redis_port: int, mock_url: str) -> None:
    """Django on a throwaway SQLite database in ``workdir``, with this Redis and mock model server
    (``make run``'s settings otherwise); call before anything imports Django's models."""
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_DEBUG": "1",
            "DJANGO_SECRET_KEY": "bench-only",
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "MOCKMODELS_URL": mock_url,
            "RUN_EVENTS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "DJANGO_LOG_LEVEL": "ERROR",
        }
    )
    import django

    django.setup()


def _bench(args: argparse.Namespace, workdir: Path, redis_port: int, mock: Any) -> None:
    setup_django(workdir, redis_port, mock.url)
    import django
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_prerun
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from django.db import transaction
    from rest_framework.authtoken.models import Token

    import execution.tasks  # noqa: F401 - registers the task
    from config.celery_app import app
    from execution import demo
    from execution.models import Environment, Run
    from execution.services import runs
    from execution.tasks import runs as run_tasks
    from graphs import services as graph_services
    from graphs.models import Graph

    if args.sqlite_sync_normal:
        from django.db.backends.signals import connection_created

        def sync_normal(sender: Any, connection: Any, **kw: Any) -> None:
            if connection.vendor == "sqlite":
                connection.cursor().execute("PRAGMA synchronous=NORMAL")

        connection_created.connect(sync_normal, weak=False)
    call_command("migrate", verbosity=0)
    list(demo.seed())
    user = django.contrib.auth.get_user_model().objects.get(username=demo.DEMO_USER)
    token = Token.objects.get_or_create(user=user)[0].key
    one_step = graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "one-step"},
            "spec": {
                "nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "success-200"}]}}
            },
        },
    )
    three_steps = graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "three-steps"},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"serviceName": "echo"},
                            {"serviceName": "echo", "data": "$response"},
                            {"serviceName": "echo", "data": "$response"},
                        ],
                    }
                }
            },
        },
    )
    slow = Environment.objects.create(
        name="slow",
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=mock.url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_MS),
        allow_loopback=True,
    )

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

    web_port = free_port()
    web = ThreadedWSGIServer(("127.0.0.1", web_port), QuietHandler)
    web.daemon_threads = True
    web.set_app(get_wsgi_application())
    threading.Thread(target=web.serve_forever, daemon=True).start()

    started_at: dict[str, float] = {}
    started_event: dict[str, threading.Event] = {}

    @task_prerun.connect
    def on_prerun(task_id: str = "", task: Any = None, args: Any = (), **kw: Any) -> None:
        if task is not None and task.name == "execution.run_graph" and args:
            started_at[args[0]] = time.perf_counter()
            ev = started_event.get(args[0])
            if ev is not None:
                ev.set()

    rows: list[tuple[str, str, str, str]] = []
    with start_worker(
        app,
        pool="threads",
        concurrency=args.concurrency,
        perform_ping_check=False,
        loglevel="ERROR",
        shutdown_timeout=60,
    ):
        # 1. enqueue -> task start
        latencies: list[float] = []
        original_enqueue = run_tasks.enqueue
        sent_at: dict[str, float] = {}

        def timed_enqueue(run: Run) -> None:
            sent_at[str(run.pk)] = time.perf_counter()
            original_enqueue(run)

        run_tasks.enqueue = timed_enqueue  # type: ignore[assignment]
        try:
            for _ in range(args.runs):
                run, _ = runs.run_create(
                    graph=one_step, version=one_step.latest_version, user=user, payload={"instances": [1]}
                )
                key = str(run.pk)
                ev = started_event.setdefault(key, threading.Event())
                if key not in started_at:
                    ev.wait(10)
                latencies.append((started_at[key] - sent_at[key]) * 1000)
                _wait_terminal(Run, key)  # no backlog: one run at a time
        finally:
            run_tasks.enqueue = original_enqueue  # type: ignore[assignment]
        rows.append(
            (
                "enqueue -> task start, p50",
                f"{percentile(latencies, 50):.2f} ms",
                "<= 10 ms",
                _ok(percentile(latencies, 50) <= 10),
            )
        )
        rows.append(
            (
                "enqueue -> task start, p99",
                f"{percentile(latencies, 99):.2f} ms",
                "<= 50 ms",
                _ok(percentile(latencies, 99) <= 50),
            )
        )

        # 2. step finished -> SSE client
        import httpx

        delays: list[float] = []
        face = Graph.objects.get(name="face-recognition")
        with httpx.Client(
            base_url=f"http://127.0.0.1:{web_port}",
            timeout=30,
            headers={"Authorization": f"Token {token}", "Accept": "text/event-stream"},
        ) as client:
            for _ in range(args.sse_runs):
                run_id = client.post(
                    f"/api/graphs/{face.name}/runs/",
                    json={"payload": demo.demo_request("face-recognition"), "environment": "slow"},
                    headers={"Accept": "application/json"},
                ).json()["id"]
                with client.stream("GET", f"/api/runs/{run_id}/events/") as response:
                    buffer = ""
                    for chunk in response.iter_text():
                        received = time.time()
                        buffer += chunk
                        while "\n\n" in buffer:
                            block, buffer = buffer.split("\n\n", 1)
                            data = next(
                                (line[6:] for line in block.split("\n") if line.startswith("data: ")), None
                            )
                            if data is None:
                                continue
                            event = json.loads(data)
                            if event["type"] == "step.finished":
                                delays.append((received - event["data"]["at"]) * 1000)
        rows.append(
            (
                "step finished -> SSE client, p95",
                f"{percentile(delays, 95):.1f} ms",
                "<= 100 ms",
                _ok(percentile(delays, 95) <= 100),
            )
        )
        rows.append(("  (p50, events)", f"{percentile(delays, 50):.1f} ms", f"{len(delays)} events", ""))

        # 3. 50 concurrent runs of a 3-step graph
        n = 50
        began = time.perf_counter()
        with transaction.atomic():  # submitted together: enqueued when this commits
            ids = [
                str(
                    runs.run_create(
                        graph=three_steps,
                        version=three_steps.latest_version,
                        user=user,
                        payload={"instances": [1]},
                        environment=slow,
                    )[0].pk
                )
                for _ in range(n)
            ]
        for run_id in ids:
            _wait_terminal(Run, run_id, timeout=120)
        elapsed = time.perf_counter() - began
        ok = Run.objects.filter(pk__in=ids, status="succeeded").count()
        throughput = n / elapsed
        bound = args.concurrency / (3 * STEP_MS / 1000)
        rows.append(
            ("50 concurrent 3-step runs", f"{throughput:.1f} runs/s", f"bound {bound:.1f} runs/s", "")
        )
        rows.append(
            ("  throughput / bound", f"{throughput / bound:.2f}", ">= 0.8", _ok(throughput / bound >= 0.8))
        )
        rows.append(("  succeeded", f"{ok}/{n}", "", _ok(ok == n)))

    web.shutdown()
    width = max(len(r[0]) for r in rows)
    print(f"\n{'measure':<{width}}  {'value':>14}  {'goal':>20}  ok")
    print("-" * (width + 42))
    for name, value, goal, verdict in rows:
        print(f"{name:<{width}}  {value:>14}  {goal:>20}  {verdict}")


def _cache_ssl_context() -> None:
    """Every ``make_client`` builds a new ``httpx.AsyncHTTPTransport``, which loads certifi's CA
    bundle into a new SSL context: tens of milliseconds of CPU under the GIL per run, the largest
    single cost of a short run. This measures the runs as they would be with one shared context."""
    import httpx._transports.default as transport_module

    original = transport_module.create_ssl_context
    shared: dict[str, Any] = {}

    def cached(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is True and cert is None:
            if "ctx" not in shared:
                shared["ctx"] = original(verify=verify, cert=cert, trust_env=trust_env)
            return shared["ctx"]
        return original(verify=verify, cert=cert, trust_env=trust_env)

    transport_module.create_ssl_context = cached


def _ok(passed: bool) -> str:
    return "yes" if passed else "NO"


def _wait_terminal(model: Any, run_id: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not model.objects.filter(pk=run_id, status__in=model.TERMINAL).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} did not finish within {timeout} s")
        time.sleep(0.01)


if __name__ == "__main__":
    main()
