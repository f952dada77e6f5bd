"""Benchmark of test runs through the real pieces, as ``make run`` starts them; prints a table.

    .venv/bin/python bench/bench_runs.py [--db sqlite|postgres] [--workers N] [--concurrency 8]
                                         [--runs 200] [--suite-cases 200]

It starts its own Redis (execution.devtools.localredis), the mock model server (a child process, so its
threads do not compete with anything measured), ``--workers`` Celery worker processes (``celery -A
config.celery_app worker --pool=threads --concurrency N``, as scripts/run.sh starts them; default:
run.sh's defaults, one process per core with 8 threads each) and the Django app in a WSGI server
thread (for the event stream), on a throwaway database: SQLite (a file, WAL, as ``make run``) or
PostgreSQL (a throwaway cluster from scripts/postgres.sh, as the test suite's PostgreSQL pass).
Measures:

1. enqueue -> claimed: from ``apply_async`` (after the run's row is committed) to the run's
   ``started_at`` (the worker's claim, committed), one run at a time (no backlog): p50 / p99.
   Goal: <= 10 ms / <= 50 ms (these include the claim's write).
2. per-run overhead, the same runs: enqueue -> finished minus the step's own time: p50 / p99.
3. step finished -> event received: from the engine's ``step.finished`` timestamp to the moment an
   SSE client (httpx over real HTTP) reads that event: p95. Goal: <= 100 ms.
4. 50 concurrent runs of a 3-step Sequence whose steps each sleep ``STEP_MS`` on the mock server:
   created in one transaction and enqueued as it commits; from that commit to the last run's end,
   runs/s divided by the bound the steps impose. The workers run ``threads = workers x
   concurrency`` runs at a time and a run cannot be faster than its three step latencies, so 50
   runs need at least ``ceil(50 / threads)`` rounds of three steps: the bound is
   ``50 / (ceil(50 / threads) * 3 * STEP_MS)`` (with 16 threads: 4 rounds; the per-thread rate
   ``threads / (3 * STEP_MS)``, which no batch of 50 can reach, is printed beside it). Goal: >= 0.8
   on PostgreSQL with two worker processes, >= 0.65 on SQLite with ``make run``'s defaults. Also
   printed: the in-worker overhead of these runs (claim -> finished minus step time).
5. The 200-case suite run of bench/bench_graphtests.py (each case a run) through these workers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import (  # noqa: E402  (bench/ is on sys.path)
    SERVICE_PIDS,
    WORKER_PIDS,
    cpu_seconds,
    database,
    free_port,
    make_run_workers,
    percentile,
    serve_mock_models,
    setup_django,
    worker_processes,
)

STEP_MS = 100
CONCURRENT_RUNS = 50
GOALS = {"postgres": 0.8, "sqlite": 0.65}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: make run's, one per core)"
    )
    parser.add_argument("--concurrency", type=int, default=8, help="threads per worker (make run: 8)")
    parser.add_argument("--runs", type=int, default=200, help="runs for measures 1 and 2")
    parser.add_argument("--sse-runs", type=int, default=20, help="runs followed over SSE")
    parser.add_argument("--suite-cases", type=int, default=200, help="cases of the suite run (0: none)")
    parser.add_argument("--suite-step-ms", type=int, default=50, help="latency of the suite's model calls")
    parser.add_argument(
        "--worker-tree",
        type=Path,
        default=ROOT,
        help="run the workers from this checkout (an A/B comparison against another branch in the "
        "same run: the database schema must be the same)",
    )
    args = parser.parse_args()
    args.workers = args.workers or (2 if args.db == "postgres" else make_run_workers())

    from execution.devtools import localredis

    workdir = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    redis_port = free_port()
    redis_proc = localredis.start(redis_port)
    SERVICE_PIDS["redis"] = redis_proc.pid
    try:
        with serve_mock_models() as mock_url, database(args.db, workdir) as db_url:
            setup_django(workdir, redis_port, mock_url, db_url)
            rows = _bench(args, mock_url)
    finally:  # never leave a server behind, whatever failed
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"\n{args.db}, {args.workers} worker process(es) x {args.concurrency} threads "
        f"(code: {args.worker_tree}); "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>14}  {'goal':>22}  ok")
    print("-" * (width + 44))
    for name, value, goal, verdict in rows:
        print(f"{name:<{width}}  {value:>14}  {goal:>22}  {verdict}")


def _graph(user: Any, name: str, steps: int, service: str) -> Any:
    from graphs import services as graph_services

    return graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": name},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [{"serviceName": service}]
                        + [{"serviceName": service, "data": "$response"}] * (steps - 1),
                    }
                }
            },
        },
    )


def _bench(args: argparse.Namespace, mock_url: str) -> list[tuple[str, str, str, str]]:
    import django
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    import execution.tasks  # noqa: F401 - registers the tasks
    from execution.devtools import demo
    from execution.models import Environment

    call_command("migrate", verbosity=0)
    list(demo.seed())
    user = django.contrib.auth.get_user_model().objects.get(username=demo.DEMO_USER)
    token = Token.objects.get_or_create(user=user)[0].key
    slow = Environment.objects.create(
        name="slow",
        visibility="shared",  # usable by every test user, like a staff-shared one
        url_template=mock_url + "/v1/models/{name}:predict?latency_ms=" + str(STEP_MS),
        allow_loopback=True,
    )
    web_port, web = _web_server()
    rows: list[tuple[str, str, str, str]] = []
    logdir = Path(tempfile.mkdtemp(prefix="bench-runs-workers-"))
    try:
        with worker_processes(args.workers, args.concurrency, logdir, args.worker_tree):
            rows += _one_at_a_time(args, user, _graph(user, "one-step", 1, "success-200"))
            rows += _event_stream(args, web_port, token)
            rows += _concurrent(args, user, _graph(user, "three-steps", 3, "echo"), slow)
            if args.suite_cases:
                rows += _suite(args, mock_url)
    finally:
        web.shutdown()
        shutil.rmtree(logdir, ignore_errors=True)
    return rows


def _web_server() -> tuple[int, Any]:
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

    port = free_port()
    web = ThreadedWSGIServer(("127.0.0.1", port), QuietHandler)
    web.daemon_threads = True
    web.set_app(get_wsgi_application())
    threading.Thread(target=web.serve_forever, daemon=True).start()
    return port, web


def _step_seconds(run_ids: list[str]) -> dict[str, float]:
    """The time each run spent in its steps (a Sequence: their durations add up)."""
    from django.db.models import Sum

    from execution.models import RunStep

    rows = RunStep.objects.filter(run_id__in=run_ids).values("run_id").annotate(ms=Sum("duration_ms"))
    return {str(row["run_id"]): (row["ms"] or 0.0) / 1000 for row in rows}


def _one_at_a_time(args: argparse.Namespace, user: Any, graph: Any) -> list[tuple[str, str, str, str]]:
    """Measures 1 and 2: runs one after another (no backlog)."""
    from execution.models import Run
    from execution.services import dispatch as run_tasks
    from execution.services import runs

    sent_at: dict[str, float] = {}
    original_enqueue = run_tasks.enqueue

    def timed_enqueue(run: Run) -> None:
        sent_at[str(run.pk)] = time.time()
        original_enqueue(run)

    run_tasks.enqueue = timed_enqueue  # type: ignore[assignment]
    ids = []
    try:
        for _ in range(args.runs + 5):
            run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=user, payload={"x": [1]})
            _wait_terminal(Run, str(run.pk))
            ids.append(str(run.pk))
    finally:
        run_tasks.enqueue = original_enqueue  # type: ignore[assignment]
    ids = ids[5:]  # the first runs warm up the workers' connections
    steps = _step_seconds(ids)
    claimed: list[float] = []
    overhead: list[float] = []
    for run in Run.objects.filter(pk__in=ids):
        assert run.started_at is not None and run.finished_at is not None
        claimed.append((run.started_at.timestamp() - sent_at[str(run.pk)]) * 1000)
        overhead.append(
            (run.finished_at.timestamp() - sent_at[str(run.pk)] - steps.get(str(run.pk), 0)) * 1000
        )
    p50, p99 = percentile(claimed, 50), percentile(claimed, 99)
    return [
        ("enqueue -> claimed, p50", f"{p50:.2f} ms", "<= 10 ms", _ok(p50 <= 10)),
        ("enqueue -> claimed, p99", f"{p99:.2f} ms", "<= 50 ms", _ok(p99 <= 50)),
        ("per-run overhead, p50", f"{percentile(overhead, 50):.1f} ms", "enqueue->finished", ""),
        ("per-run overhead, p99", f"{percentile(overhead, 99):.1f} ms", "minus step time", ""),
    ]


def _event_stream(args: argparse.Namespace, web_port: int, token: str) -> list[tuple[str, str, str, str]]:
    """Measure 3: step finished -> SSE client."""
    import httpx

    from execution.devtools import demo

    delays: list[float] = []
    with httpx.Client(
        base_url=f"http://127.0.0.1:{web_port}",
        timeout=30,
        headers={"Authorization": f"Token {token}", "Accept": "text/event-stream"},
    ) as client:
        for _ in range(args.sse_runs):
            run_id = client.post(
                "/api/graphs/face-recognition/runs/",
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
    p95 = percentile(delays, 95)
    return [
        ("step finished -> SSE client, p95", f"{p95:.1f} ms", "<= 100 ms", _ok(p95 <= 100)),
        ("  (p50, events)", f"{percentile(delays, 50):.1f} ms", f"{len(delays)} events", ""),
    ]


def _concurrent(
    args: argparse.Namespace, user: Any, graph: Any, environment: Any
) -> list[tuple[str, str, str, str]]:
    """Measure 4: CONCURRENT_RUNS runs of a 3-step graph, submitted together."""
    from django.db import transaction

    from execution.models import Run
    from execution.services import runs

    n = CONCURRENT_RUNS
    began: list[float] = []  # when the runs were committed, and so enqueued
    created = time.perf_counter()
    with transaction.atomic():  # submitted together: enqueued when this commits
        ids = [
            str(
                runs.run_create(
                    graph=graph,
                    version=graph.latest_version,
                    user=user,
                    payload={"x": [1]},
                    environment=environment,
                )[0].pk
            )
            for _ in range(n)
        ]
        transaction.on_commit(lambda: began.append(time.perf_counter()), robust=True)
    creating = began[0] - created
    cpu_before = cpu_seconds(WORKER_PIDS)
    for run_id in ids:
        _wait_terminal(Run, run_id, timeout=120)
    elapsed = time.perf_counter() - began[0]
    cpu_per_run = (cpu_seconds(WORKER_PIDS) - cpu_before) / n
    ok = Run.objects.filter(pk__in=ids, status="succeeded").count()
    steps = _step_seconds(ids)
    in_worker = [
        ((run.finished_at - run.started_at).total_seconds() - steps.get(str(run.pk), 0)) * 1000
        for run in Run.objects.filter(pk__in=ids)
        if run.finished_at and run.started_at
    ]
    threads = args.workers * args.concurrency
    step_s = 3 * STEP_MS / 1000
    rounds = math.ceil(n / threads)
    throughput, bound, rate = n / elapsed, n / (rounds * step_s), threads / step_s
    goal = GOALS[args.db]
    return [
        (f"{n} concurrent 3-step runs", f"{throughput:.1f} runs/s", f"bound {bound:.1f} runs/s", ""),
        ("  throughput / bound", f"{throughput / bound:.2f}", f">= {goal}", _ok(throughput / bound >= goal)),
        ("  (bound: rounds of 3 steps)", f"{rounds}", f"{threads} threads", ""),
        ("  throughput / per-thread rate", f"{throughput / rate:.2f}", f"rate {rate:.1f} runs/s", ""),
        ("  (creating them, not counted)", f"{creating * 1000:.0f} ms", "before the commit", ""),
        ("  workers' CPU per run", f"{cpu_per_run * 1000:.1f} ms", "user + system", ""),
        ("  in-worker overhead, p50", f"{percentile(in_worker, 50):.1f} ms", "claim->finished", ""),
        ("  in-worker overhead, p99", f"{percentile(in_worker, 99):.1f} ms", "minus step time", ""),
        ("  succeeded", f"{ok}/{n}", "", _ok(ok == n)),
    ]


def _suite(args: argparse.Namespace, mock_url: str) -> list[tuple[str, str, str, str]]:
    """Measure 5: bench_graphtests' suite run through Celery, on these worker processes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_graphtests

    figures = bench_graphtests.through_celery(
        cases=args.suite_cases, step_ms=args.suite_step_ms, mock_url=mock_url
    )
    return [(name, value, goal, "") for name, value, goal in figures]


def _ok(passed: bool) -> str:
    return "yes" if passed else "NO"


def _wait_terminal(model: Any, run_id: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not model.objects.filter(pk=run_id, status__in=model.TERMINAL).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} did not finish within {timeout} s")
        time.sleep(0.005)


if __name__ == "__main__":
    main()
