"""How cost grows: the work grown tenfold at a time, each curve printed as a ratio (not a test).

    .venv/bin/python bench/bench_scale.py [--quick] [--only graph,history,runs,fanout]

On a throwaway SQLite database (``make run``'s settings otherwise), with its own Redis
(execution.devtools.localredis) and, for the event streams, the web server ``make run`` uses (gunicorn,
gthread) in a child process. Four curves:

1. graph size 50 -> 500 -> 5,000 nodes (4 steps each): parse (YAML -> model), validate, export
   (YAML), diff (two versions a few edits apart), save (``graph_version_create``) and load (the
   version detail API). Time per node, the best of 5; ratio = per node at the largest size / at
   the smallest, goal <= 1.5. The product refuses graphs over ``language.MAX_GRAPH_NODES`` (2,000)
   nodes, so save and load stop at 2,000; the pure core is read with the limit raised (the same
   reader) up to 5,000.
2. history: graphs of 10, 100, 1,000 and 10,000 versions: the versions list API the editor's
   history reads (first page: 10 rows for the smallest, 50 for the others) and the editor page
   that opens a version: p95; ratio largest / smallest, goal <= 2.
3. runs: graphs of 1,000, 10,000 and 100,000 runs in one table: the runs list API (first page,
   default filters, and ?status= of a rare status) and one run's detail: p95, ratio largest /
   smallest, goal <= 2; and each list filter's query plan (``EXPLAIN QUERY PLAN``, after
   ``ANALYZE``): read from an index that searches by the filter, no temporary B-tree sort.
4. event-stream fan-out, 10 -> 500 SSE watchers of one run over real HTTP (raw sockets, one
   reader thread): from an event's emit (stored, committed, published) to the last watcher reading
   it, the median of 7 events, divided by the watchers: the per-watcher cost; ratio largest /
   smallest, goal <= 1.5.

Every size of a curve is measured in turn (one request or operation of each, then again), so that
a busy moment of a shared machine costs every size alike. ``--quick`` stops each curve a size
earlier. The queries of one list request are printed too: that is the cost that used to grow.
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_spec import build  # noqa: E402
from benchkit import free_port, percentile, setup_django  # noqa: E402  (bench/ is on sys.path)

Row = tuple[str, str, str, str]


def interleaved(operations: dict[Any, Callable[[], object]], repeats: int) -> dict[Any, list[float]]:
    """``repeats`` timings (ms) of each operation, taken in turn (one of each, then again), after
    one warm-up call each: on a shared, noisy machine a busy moment then costs every size alike
    instead of whichever size happened to be measuring."""
    for operation in operations.values():
        operation()
    samples: dict[Any, list[float]] = {key: [] for key in operations}
    for _ in range(repeats):
        for key, operation in operations.items():
            started = time.perf_counter()
            operation()
            samples[key].append((time.perf_counter() - started) * 1000)
    return samples


def getter(client: Any, url: str) -> Callable[[], object]:
    """A GET of ``url`` that must answer 200."""
    return lambda: _ok(client.get(url))


def verdict(ratio: float, goal: float) -> str:
    return "yes" if ratio <= goal else "NO"


def curve(
    name: str, sizes: list[int], values: dict[int, float], unit: str, goal: float | None, per: str
) -> Row:
    """One curve as a row: the value at each size and largest/smallest (against ``goal``, if any)."""
    shown = "  ".join(f"{size:,}: {values[size]:.3g}" for size in sizes if size in values)
    measured = [s for s in sizes if s in values]
    ratio = values[measured[-1]] / values[measured[0]]
    if goal is None:
        return (f"{name} ({unit}{per})", shown, f"{ratio:.2f} (for information)", "")
    return (f"{name} ({unit}{per})", shown, f"{ratio:.2f} (<= {goal:g})", verdict(ratio, goal))


# --- 1. graph size ----------------------------------------------------------------------------------


def edited(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` a few edits apart: a step's model changed, a step added, a node removed."""
    import copy

    changed = copy.deepcopy(document)
    nodes = changed["spec"]["nodes"]
    nodes["node-1"]["steps"][0]["serviceName"] = "model-changed"
    nodes["node-2"]["steps"].append({"name": "extra", "serviceName": "model-extra"})
    last = f"node-{len(nodes) - 1}"
    del nodes[last]
    nodes["root"]["steps"] = [s for s in nodes["root"]["steps"] if s.get("nodeName") != last]
    return changed


def bench_graph(quick: bool, client: Any, user: Any) -> list[Row]:
    from graphs import language, services
    from graphs.language.reader import MAX_BYTES

    sizes = [50, 500] if quick else [50, 500, 5000]
    cap = language.MAX_GRAPH_NODES
    stored = [s for s in sizes if s <= cap] + ([cap] if sizes[-1] > cap else [])
    operations: dict[tuple[str, int], Callable[[], object]] = {}
    for size in sizes:
        document = build(size)
        manifest = language.manifest_from_document(document)
        other = language.manifest_from_document(edited(document))
        text = language.export_yaml(manifest)
        # the import's reader, its node cap raised past the product's 2,000
        limits = {"max_bytes": 8 * MAX_BYTES, "max_graph_nodes": 10_000, "max_steps": 100_000}
        operations["parse (YAML -> model)", size] = lambda t=text, k=limits: language.load_documents(t, **k)
        operations["validate", size] = lambda m=manifest: language.validate(m)
        operations["export (YAML)", size] = lambda m=manifest: language.export_yaml(m)
        operations["diff (a few edits)", size] = lambda a=manifest, b=other: language.diff(a, b)
    for size in stored:
        graph = services.graph_create(owner=user, manifest=build(size) | {"metadata": {"name": f"g{size}"}})
        alternating = [edited(build(size)), build(size)]

        def save(g: Any = graph, documents: list[dict[str, Any]] = alternating) -> None:
            documents.reverse()  # alternate between two manifests: each save is a new version
            doc = documents[0] | {"metadata": {"name": g.name}}
            services.graph_version_create(
                graph=g, manifest=doc, layout={}, author=user, message="", base_version=None
            )

        operations["save (version create)", size] = save
        operations["load (version API)", size] = getter(client, f"/api/graphs/{graph.name}/versions/1/")
    # The best of several: CPU work, which other processes only ever slow down (timeit's advice).
    samples = interleaved(operations, 3 if quick else 5)
    per_node: dict[str, dict[int, float]] = {}
    for (operation, size), values in samples.items():
        per_node.setdefault(operation, {})[size] = min(values) / size * 1000
    print(f"graph sizes {sizes} (save/load {stored}: the product refuses graphs over {cap} nodes)")
    rows = [curve(op, sorted(values), values, "µs", 1.5, "/node") for op, values in per_node.items()]
    calls: dict[int, int] = {}
    for (operation, size), run in operations.items():
        if operation.startswith(("parse", "validate", "export", "diff")):
            calls[size] = calls.get(size, 0) + _python_calls(run)
    rows.append(
        curve(
            "  parse+validate+export+diff, Python calls",
            sizes,
            {k: v / k for k, v in calls.items()},
            "",
            None,
            "/node",
        )
    )
    return rows


def _python_calls(operation: Callable[[], object]) -> int:
    """The function calls ``operation`` makes (cProfile's count): the same on any machine, so a
    curve of them shows an algorithm's growth apart from the noise of a shared machine's timings."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.runcall(operation)
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


# --- 2. history -------------------------------------------------------------------------------------


def bench_history(quick: bool, client: Any, user: Any) -> list[Row]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from graphs import services
    from graphs.models import Graph, GraphVersion

    sizes = [10, 100, 1000] if quick else [10, 100, 1000, 10_000]
    operations: dict[tuple[str, int], Callable[[], object]] = {}
    queries: dict[int, int] = {}
    for size in sizes:  # one graph per history length, measured in turn
        graph = services.graph_create(
            owner=user, manifest=build(5) | {"metadata": {"name": f"history-{size}"}}
        )
        first = GraphVersion.objects.get(graph=graph, number=1)
        rows = [
            GraphVersion(
                graph=graph, number=n, manifest=first.manifest, layout={}, spec_hash=first.spec_hash,
                valid=True, issues=[], message=f"save {n}", node_count=first.node_count,
                step_count=first.step_count, author=user, parent_id=first.pk,
            )
            for n in range(2, size + 1)
        ]  # fmt: skip
        GraphVersion.objects.bulk_create(rows, batch_size=500)
        Graph.objects.filter(pk=graph.pk).update(
            latest_version=GraphVersion.objects.get(graph=graph, number=size)
        )
        url = f"/api/graphs/{graph.name}/versions/"
        with CaptureQueriesContext(connection) as captured:
            _ok(client.get(url))
        queries[size] = len(captured)
        operations["versions list API, first page", size] = getter(client, url)
        operations["editor page (?version=)", size] = getter(
            client, f"/graphs/{graph.name}/?version={size // 2}"
        )
    p95 = _p95s(interleaved(operations, 60 if quick else 100))
    rows = [curve(name, sizes, values, "p95 ms", 2.0, "") for name, values in p95.items()]
    shown = "  ".join(f"{size:,}: {count}" for size, count in queries.items())
    rows.append(("  queries per versions page (10 rows, then 50)", shown, "", ""))
    return rows


def _p95s(samples: dict[tuple[str, int], list[float]]) -> dict[str, dict[int, float]]:
    """The p95 of each (curve, size)'s samples, by curve and size."""
    out: dict[str, dict[int, float]] = {}
    for (name, size), values in samples.items():
        out.setdefault(name, {})[size] = percentile(values, 95)
    return out


# --- 3. runs ----------------------------------------------------------------------------------------


def bench_runs(quick: bool, client: Any, user: Any) -> list[Row]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from execution import selectors
    from execution.models import Environment, Run, RunStep
    from graphs import services

    sizes = [1000, 10_000] if quick else [1000, 10_000, 100_000]
    environment = Environment.objects.get(name="local")
    operations: dict[tuple[str, int], Callable[[], object]] = {}
    queries: dict[int, int] = {}
    graphs = {}
    for size in sizes:  # one graph per size, all in one table, measured in turn
        graph = services.graph_create(owner=user, manifest=build(3) | {"metadata": {"name": f"runs-{size}"}})
        graphs[size] = graph
        Run.objects.bulk_create(
            (
                Run(
                    graph=graph, version=graph.latest_version, environment=environment,
                    environment_name="local" if n % 3 else "local-before-a-rename",  # the name then
                    seed=n, created_by=user, response_status=200,
                    status="cancelled" if n % 20 == 1 else "failed" if n % 4 == 3 else "succeeded",
                )
                for n in range(size)
            ),
            batch_size=1000,
        )  # fmt: skip
        detail = Run.objects.filter(graph=graph).first()
        assert detail is not None
        RunStep.objects.bulk_create(
            RunStep(run=detail, attempt=1, call_id=f"root/{i}", order=i, node="root", step_index=i)
            for i in range(3)
        )
        url = f"/api/graphs/{graph.name}/runs/"
        operations["runs list API, first page", size] = getter(client, url)
        operations["runs list API, ?status=cancelled", size] = getter(client, url + "?status=cancelled")
        operations["run detail API", size] = getter(client, f"/api/runs/{detail.pk}/")
    connection.cursor().execute("ANALYZE")  # the statistics a long-lived database has
    for size, graph in graphs.items():
        with CaptureQueriesContext(connection) as captured:
            _ok(client.get(f"/api/graphs/{graph.name}/runs/"))
        queries[size] = len(captured)
    p95 = _p95s(interleaved(operations, 60 if quick else 100))
    out = [curve(name, sizes, values, "p95 ms", 2.0, "") for name, values in p95.items()]
    out.append(("  queries per runs page", "  ".join(f"{s:,}: {c}" for s, c in queries.items()), "", ""))
    graph = graphs[sizes[-1]]
    filters: dict[str, tuple[dict[str, Any], str]] = {  # each with the column its index searches
        "default": ({}, "graph_id=?"),
        "?status=": ({"status": "cancelled"}, "status=?"),
        "?version=": ({"version": 1}, "version_id=?"),
        "?environment=name": ({"environment": "local"}, "environment_name=?"),
        "?environment=id": ({"environment": environment.pk}, "environment_id=?"),
    }
    for label, (kwargs, searched) in filters.items():
        qs = selectors.run_list(graph=graph, user=user, **kwargs)
        plans = [_plan(qs[:50]), _plan(qs.order_by())]  # the page; the count reads what this reads
        bad = [line for plan in plans for line in plan if _full_scan_or_sort(line)]
        bad += [f"not by {searched}" for plan in plans if searched not in _run_line(plan)]
        out.append(
            (
                f"  plan of the list, {label}",
                "; ".join(bad) or _run_line(plans[0]),
                f"index on {searched}, no sort",
                verdict(len(bad), 0),
            )
        )
    return out


def _plan(qs: Any) -> list[str]:
    from django.db import connection

    sql, params = qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return [str(row[-1]) for row in cursor.fetchall()]


def _full_scan_or_sort(line: str) -> bool:
    """A plan line that reads the whole runs table (SCAN without an index) or sorts in a temporary
    B-tree. (SQLite may well scan a joined table of a few rows, environments or users, first.)"""
    if "TEMP B-TREE" in line:
        return True
    return line.startswith("SCAN execution_run") and "INDEX" not in line


def _run_line(plan: list[str]) -> str:
    """How a query reads the runs table."""
    return next((line for line in plan if "execution_run" in line), "?")


# --- 4. event-stream fan-out --------------------------------------------------------------------------


def bench_fanout(quick: bool, user: Any, token: str, env: dict[str, str]) -> list[Row]:
    from execution import events
    from execution.models import Run
    from graphs import services

    sizes = [10, 100] if quick else [10, 100, 500]
    graph = services.graph_create(owner=user, manifest=build(3) | {"metadata": {"name": "fanout"}})
    port = free_port()
    threads = sizes[-1] + 32
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--worker-class", "gthread", "--workers", "1", "--threads", str(threads), "--backlog", "2048",
         "--log-level", "warning"],
        cwd=ROOT,
        env=env | {"RUN_SSE_MAX_STREAMS": str(threads), "RUN_SSE_MAX_STREAMS_PER_USER": str(threads)},
    )  # fmt: skip
    per_watcher: dict[int, float] = {}
    last: dict[int, float] = {}
    try:
        _wait_port(port)
        for size in sizes:
            run = Run.objects.create(
                graph=graph, version=graph.latest_version, seed=1, created_by=user, status="running"
            )
            watchers = _open_watchers(port, run.pk, token, size)
            delays = []
            for _ in range(5 if quick else 7):
                started = time.perf_counter()
                event = events.emit(run.pk, "run.warning", {"message": "bench"})
                _read_until(watchers, f"id: {event.seq}\n".encode())
                delays.append((time.perf_counter() - started) * 1000)
                time.sleep(0.2)
            events.emit(run.pk, "run.finished", {"status": "succeeded"})
            for sock in watchers:
                sock.close()
            last[size] = statistics.median(delays)
            per_watcher[size] = last[size] / size
    finally:
        server.terminate()
        server.wait(10)
    return [
        curve("emit -> last of N watchers", sizes, last, "median ms", None, ""),
        curve("  per watcher", sizes, {k: v * 1000 for k, v in per_watcher.items()}, "µs", 1.5, "/watcher"),
    ]


def _wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the web server did not listen on {port} within {timeout} s")


def _open_watchers(port: int, run_id: uuid.UUID, token: str, count: int) -> list[socket.socket]:
    """``count`` raw HTTP connections, each following the run's event stream once it has started
    (its ``retry:`` line read: the stream is subscribed)."""
    request = (
        f"GET /api/runs/{run_id}/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"Authorization: Token {token}\r\n\r\n"
    ).encode()
    watchers = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(request)
        watchers.append(sock)
    _read_until(watchers, b"retry: ")
    return watchers


def _read_until(watchers: list[socket.socket], marker: bytes, timeout: float = 60) -> None:
    """Read every watcher until each has received ``marker`` (one thread, one selector)."""
    waiting = selectors.DefaultSelector()
    buffers = {}
    for sock in watchers:
        waiting.register(sock, selectors.EVENT_READ)
        buffers[sock] = b""
    deadline = time.monotonic() + timeout
    while buffers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(buffers)} watchers did not receive {marker!r} within {timeout} s")
        for key, _ in waiting.select(timeout=1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError(f"a watcher's stream closed before {marker!r}: {buffers[sock][-300:]!r}")
            buffers[sock] = buffers[sock][-200:] + chunk
            if marker in buffers[sock]:
                waiting.unregister(sock)
                del buffers[sock]
    waiting.close()


# --- the whole ----------------------------------------------------------------------------------------


def _ok(response: Any) -> Any:
    if response.status_code != 200:
        raise RuntimeError(f"{response.status_code}: {getattr(response, 'content', b'')[:300]!r}")
    return response


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="stop each curve a size earlier (~1 min)")
    parser.add_argument("--only", default="graph,history,runs,fanout", help="comma-separated curves")
    args = parser.parse_args()
    from execution.devtools import localredis

    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    redis_port = free_port()
    redis_proc = localredis.start(redis_port)
    try:
        _bench(args, workdir, redis_port)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def _bench(args: argparse.Namespace, workdir: Path, redis_port: int) -> None:
    os.environ["RUN_SSE_KEEPALIVE_SECONDS"] = "60"
    setup_django(workdir, redis_port, "http://127.0.0.1:9")
    import django
    from django.core.management import call_command
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from execution.devtools import demo

    call_command("migrate", verbosity=0)
    list(demo.seed())
    user = django.contrib.auth.get_user_model().objects.get(username=demo.DEMO_USER)
    token = Token.objects.get_or_create(user=user)[0].key
    client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST="127.0.0.1")
    client.force_login(user)
    chosen = set(args.only.split(","))
    rows: list[Row] = []
    began = time.monotonic()
    sections: list[tuple[str, Callable[[], list[Row]]]] = [
        ("graph", lambda: bench_graph(args.quick, client, user)),
        ("history", lambda: bench_history(args.quick, client, user)),
        ("runs", lambda: bench_runs(args.quick, client, user)),
        ("fanout", lambda: bench_fanout(args.quick, user, token, dict(os.environ))),
    ]
    for name, section in sections:
        if name in chosen:
            started = time.monotonic()
            rows.append((f"[{name}]", "", "", ""))
            rows.extend(section())
            print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)
    width = max(len(r[0]) for r in rows)
    values = max(len(r[1]) for r in rows)
    print(
        f"\nload average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {time.monotonic() - began:.0f} s"
    )
    print(f"{'curve':<{width}}  {'value at each size':<{values}}  {'largest/smallest (goal)':<24}  ok")
    print("-" * (width + values + 32))
    for name, shown, goal, ok in rows:
        print(f"{name:<{width}}  {shown:<{values}}  {goal:<24}  {ok}")


if __name__ == "__main__":
    main()
