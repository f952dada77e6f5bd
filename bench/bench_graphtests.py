"""Graph tests benchmark: a suite in-process (``testgraph FILE --cases``) and through Celery.

    python bench/bench_graphtests.py [--cases N] [--repeats R] [--step-ms MS] [--no-celery]
                                     [--no-in-process] [--ab OTHER_CHECKOUT --rounds R]

A suite of N cases (default 200, the issue's size) of the face-recognition demo (its three demo
cases, repeated under new names) runs against the mock model server, which serves from a child
process so that its threads do not compete with the engine (or the worker) for this process's GIL.

1. In-process: the suite's wall time, cases per second, and the ratio against a baseline of the same
   requests through the engine alone (no expectations judged), medians over repeats after a warm-up.
   Goal: >= 100 cases/s on this machine class.
2. Through Celery, with ``make run``'s defaults (``celery worker`` processes as scripts/run.sh
   starts them, one per core with 8 threads each; ``SUITE_CONCURRENCY``; SQLite; Redis): one
   suite run of the N stored cases (``execution.suites``: every case a run) in an environment
   whose every model call takes ``--step-ms`` on the mock server. The bound is
   N x critical path / concurrency, the critical path being the graph's 4 calls in a row (the
   Ensemble's two calls overlap). Printed: wall time, cases per second, bound / wall (goal: >= 0.8),
   and the ratio against a baseline in the same run: the same N requests as plain runs; also where
   a case's time went (queued, running, judged) and how much of the suite's slots its runs held.
   ``--ab OTHER`` alternates worker processes running another checkout's code with this one's,
   ``--rounds`` times each (an interleaved A/B comparison on a noisy machine; medians printed).

Nothing is asserted; the goals are printed beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _serve(conn: Connection) -> None:
    from execution.devtools import mockmodels

    server = mockmodels.serve_in_thread()
    conn.send(server.server_address[1])
    conn.recv()
    server.shutdown()


def _suite(count: int) -> Any:
    import yaml

    from execution.casecore import load_suite

    return load_suite(yaml.safe_dump(_suite_document(count)))


async def _once(manifest: Any, suite: Any, config: Any, judge: bool) -> float:
    from execution.casecore import run_suite
    from execution.engine import make_client, run_graph

    async with make_client(guard=config.guard) as client:
        started = time.perf_counter()
        if judge:
            results = await run_suite(manifest, suite.cases, config=config, client=client, keep_results=False)
            assert all(r.outcome == "passed" for r in results), [
                r.as_dict() for r in results if r.outcome != "passed"
            ][:1]
        else:
            gate = asyncio.Semaphore(8)  # run_suite's default concurrency, for a like-for-like baseline

            async def one(body: bytes, headers: Any) -> None:
                async with gate:
                    result = await run_graph(manifest, body, headers, config=config, client=client)
                    assert result.status == 200

            await asyncio.gather(*(one(c.request.body, c.request.headers) for c in suite.cases))
        return time.perf_counter() - started


# Calls in a row on the face-recognition demo's longest path: detect, extract, the Ensemble (its two
# database calls at once), merge.
CRITICAL_CALLS = 4


def _suite_document(count: int) -> dict[str, Any]:
    import yaml

    document = yaml.safe_load(
        (ROOT / "execution" / "devtools" / "demotests" / "face-recognition.tests.yaml").read_text()
    )
    base = document["cases"]
    cases = []
    for i in range(count):
        case = copy.deepcopy(base[i % len(base)])
        case["name"] = f"{case['name']} #{i}"
        cases.append(case)
    document["cases"] = cases
    return dict(document)


def _prepare(cases: int, step_ms: int, mock_url: str) -> dict[str, Any]:
    """The N stored cases on the face-recognition demo and an environment whose model calls take
    ``step_ms``; Django is set up (benchkit.setup_django) already."""
    import yaml
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    import execution.tasks  # noqa: F401 - registers the tasks
    from execution.cases import services as case_services
    from execution.devtools import demo
    from execution.models import Environment
    from graphs.models import Graph

    call_command("migrate", verbosity=0)
    list(demo.seed())
    user = get_user_model().objects.get(username=demo.DEMO_USER)
    graph = Graph.objects.select_related("latest_version").get(name="face-recognition")
    text = yaml.safe_dump(_suite_document(cases))
    case_services.test_cases_import(graph=graph, user=user, text=text.encode(), mode="replace")
    slow = Environment.objects.create(
        name="bench-slow",
        visibility="shared",
        url_template=f"{mock_url}/v1/models/{{name}}:predict?latency_ms={step_ms}",
        allow_loopback=True,
    )
    return {"graph": graph, "user": user, "environment": slow}


def _measure(setup: dict[str, Any]) -> dict[str, Any]:
    """One suite run of every stored case (after a warm-up suite of ``concurrency`` cases), then the
    same requests as plain runs; wall times and where a case's time went."""
    from django.conf import settings
    from django.db import transaction

    from execution.models import Run
    from execution.services import runs
    from execution.suites import services as suites
    from execution.suites.models import SuiteCaseResult, SuiteRun

    graph, user, slow = setup["graph"], setup["user"], setup["environment"]
    version = graph.latest_version

    def one_suite(case_ids: list[int] | None) -> tuple[float, SuiteRun]:
        began = time.perf_counter()
        suite = suites.suite_start(
            graph=graph, version=version, user=user, environment=slow, case_ids=case_ids
        )
        while not SuiteRun.objects.filter(pk=suite.pk, status__in=SuiteRun.TERMINAL).exists():
            time.sleep(0.01)
        return time.perf_counter() - began, SuiteRun.objects.get(pk=suite.pk)

    def plain_runs() -> float:
        """The baseline: the same requests as plain runs, all queued at once (the workers' threads
        bound them as the suite run's concurrency bounds its cases), nothing judged."""
        began = time.perf_counter()
        with transaction.atomic():  # enqueued together when this commits
            ids = [
                runs.run_create(
                    graph=graph,
                    version=version,
                    user=user,
                    payload=row.document["request"]["payload"],
                    environment=slow,
                )[0].pk
                for row in graph.test_cases.all()
            ]
        while Run.objects.filter(pk__in=ids).exclude(status__in=Run.TERMINAL).exists():
            time.sleep(0.01)
        return time.perf_counter() - began

    from benchkit import cpu_by_process

    ids = list(graph.test_cases.order_by("name").values_list("pk", flat=True))
    one_suite(ids[: settings.SUITE_CONCURRENCY])  # warm-up: connections, imports
    cpu_before = cpu_by_process()
    wall, suite = one_suite(None)
    cpu = {name: used - cpu_before[name] for name, used in cpu_by_process().items()}
    baseline = plain_runs()
    queued, running, judged = [], [], []
    for row in SuiteCaseResult.objects.filter(suite=suite).select_related("run"):
        run = row.run
        if run is None or not (run.started_at and run.finished_at and row.finished_at):
            continue
        queued.append((run.started_at - run.created_at).total_seconds())
        running.append((run.finished_at - run.started_at).total_seconds())
        judged.append((row.finished_at - run.finished_at).total_seconds())
    return {
        "wall": wall,
        "suite": suite,
        "cpu": cpu,
        "baseline": baseline,
        "concurrency": suite.concurrency,
        "queued": statistics.mean(queued or [0]),
        "running": statistics.mean(running or [0]),
        "judged": statistics.mean(judged or [0]),
        # How much of the suite's slots (concurrency x wall) its runs held, created to finished.
        "occupancy": sum(q + r for q, r in zip(queued, running, strict=True)) / (suite.concurrency * wall),
    }


def _rows(cases: int, step_ms: int, m: dict[str, Any], label: str = "") -> list[tuple[str, str, str]]:
    concurrency, wall, suite = m["concurrency"], m["wall"], m["suite"]
    bound = cases * CRITICAL_CALLS * step_ms / 1000 / concurrency
    return [
        (f"suite run of {cases} cases through Celery{label}: wall", f"{wall:.2f} s", ""),
        (f"  bound ({cases} x {CRITICAL_CALLS} x {step_ms} ms / {concurrency})", f"{bound:.2f} s", ""),
        ("  bound / wall", f"{bound / wall:.2f}", ">= 0.8"),
        ("  cases per second (Celery)", f"{cases / wall:.1f}", ""),
        ("  outcome", f"{suite.status} {suite.passed}/{suite.total}", "passed"),
        ("  per case: queued -> claimed", f"{m['queued'] * 1000:.0f} ms", ""),
        (
            f"  per case: claimed -> run ended ({CRITICAL_CALLS * step_ms} ms in calls)",
            f"{m['running'] * 1000:.0f} ms",
            "",
        ),
        ("  per case: run ended -> verdict", f"{m['judged'] * 1000:.0f} ms", ""),
        ("  slots held by a run (created -> ended)", f"{m['occupancy']:.2f}", ""),
        (
            "  CPU per case, all processes",
            f"{sum(m['cpu'].values()) * 1000 / cases:.1f} ms",
            "user + system",
        ),
        *[(f"    {name}", f"{used * 1000 / cases:.1f} ms", "") for name, used in m["cpu"].items()],
        (f"  the same {cases} requests as plain runs: wall", f"{m['baseline']:.2f} s", ""),
        ("  suite wall / plain-runs wall", f"{wall / m['baseline']:.2f}", ""),
    ]


def through_celery(
    *,
    cases: int,
    step_ms: int,
    mock_url: str,
    trees: list[Path] | None = None,
    rounds: int = 1,
    workers: int | None = None,
) -> list[tuple[str, str, str]]:
    """Figure 2 of the module docstring. ``trees``: the checkouts whose code the worker processes
    run, started here as scripts/run.sh starts them (one per core, 8 threads each), alternated
    ``rounds`` times (an interleaved A/B); None: the caller's workers are running already
    (bench_runs.py)."""
    setup = _prepare(cases, step_ms, mock_url)
    if trees is None:
        return _rows(cases, step_ms, _measure(setup))
    from benchkit import make_run_workers, worker_processes

    workers = workers or make_run_workers()

    results: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in trees}
    logdir = Path(tempfile.mkdtemp(prefix="bench-graphtests-workers-"))
    try:
        for _ in range(rounds):
            for tree in trees:
                with worker_processes(workers, 8, logdir, tree):
                    results[tree].append(_measure(setup))
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    rows: list[tuple[str, str, str]] = []
    for tree, measured in results.items():
        best = sorted(measured, key=lambda m: m["wall"])[len(measured) // 2]  # the median's
        label = f" ({tree.name}, median of {len(measured)})" if len(trees) > 1 or rounds > 1 else ""
        rows += _rows(cases, step_ms, best, label)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--step-ms", type=int, default=50, help="latency of every model call (Celery part)")
    parser.add_argument("--no-celery", action="store_true", help="only the in-process figures")
    parser.add_argument("--no-in-process", action="store_true", help="only the Celery figures")
    parser.add_argument(
        "--ab",
        type=Path,
        default=None,
        help="another checkout (same database schema): its workers and this one's alternate, --rounds times",
    )
    parser.add_argument("--rounds", type=int, default=1, help="suite runs per checkout (Celery part)")
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite", help="make run: SQLite")
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: make run's, one per core)"
    )
    args = parser.parse_args()
    from benchkit import SERVICE_PIDS, database, free_port, make_run_workers, setup_django

    args.workers = args.workers or make_run_workers()

    from execution.devtools import localredis

    workdir = Path(tempfile.mkdtemp(prefix="bench-graphtests-"))
    redis_port = free_port()
    redis_proc = localredis.start(redis_port)
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    port = parent.recv()
    SERVICE_PIDS.update({"mock model server": proc.pid, "redis": redis_proc.pid})
    try:
        with database(args.db, workdir) as db_url:
            setup_django(workdir, redis_port, f"http://127.0.0.1:{port}", db_url)
            rows = [] if args.no_in_process else _in_process(args, port)
            if not args.no_celery:
                rows += through_celery(
                    cases=args.cases,
                    step_ms=args.step_ms,
                    mock_url=f"http://127.0.0.1:{port}",
                    trees=[ROOT] if args.ab is None else [args.ab.resolve(), ROOT],
                    rounds=args.rounds,
                    workers=args.workers,
                )
    finally:  # never leave a server behind, whatever failed
        parent.send("stop")
        proc.join(timeout=10)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>10}  goal")
    print("-" * (width + 22))
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {goal}")
    load = os.getloadavg()
    print(f"(in-process: medians of {args.repeats} repeats; mock model server in a child process)")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def _in_process(args: argparse.Namespace, port: int) -> list[tuple[str, str, str]]:
    from execution.devtools import demo
    from execution.engine import DEFAULT_MAX_RESPONSE_BYTES, EngineConfig, UrlGuard
    from graphs import language

    config = EngineConfig(
        url_template=f"http://127.0.0.1:{port}/v1/models/{{name}}:predict",
        guard=UrlGuard(allow_loopback=True),
        body_cap=DEFAULT_MAX_RESPONSE_BYTES,
    )
    manifest = language.parse(demo.demo_manifest("face-recognition"))
    suite = _suite(args.cases)
    asyncio.run(_once(manifest, suite, config, judge=True))  # warm-up
    judged_s: list[float] = []
    bare_s: list[float] = []
    for _ in range(args.repeats):  # interleaved, so that a busy moment of the machine hits both
        judged_s.append(asyncio.run(_once(manifest, suite, config, True)))
        bare_s.append(asyncio.run(_once(manifest, suite, config, False)))
    judged, bare = statistics.median(judged_s), statistics.median(bare_s)
    return [
        (f"suite of {args.cases} face-recognition cases: wall", f"{judged:.3f} s", ""),
        ("  cases per second (in-process, testgraph FILE)", f"{args.cases / judged:.0f}", ">= 100"),
        ("  the same requests, engine only: cases per second", f"{args.cases / bare:.0f}", ""),
        ("  suite wall / engine-only wall", f"{judged / bare:.3f}", ""),
    ]


if __name__ == "__main__":
    main()
