"""Graph tests benchmark, in-process (what ``testgraph FILE --cases`` does): cases per second.

    python bench/bench_graphtests.py [--cases N] [--repeats R]

A suite of N cases (default 200, the issue's size) of the face-recognition demo (its three demo
cases, repeated under new names) runs against the mock model server, which serves from a child
process so that its threads do not compete with the engine for this process's GIL. Printed: the
suite's wall time, cases per second, and the ratio against a baseline of the same requests
through the engine alone (no expectations judged), all medians over repeats after a warm-up.
Nothing is asserted; the goal (>= 100 cases/s on this machine class, issue 11) is printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import multiprocessing
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _serve(conn: Connection) -> None:
    from execution import mockmodels

    server = mockmodels.serve_in_thread()
    conn.send(server.server_address[1])
    conn.recv()
    server.shutdown()


def _suite(count: int) -> Any:
    import yaml

    from execution.graphtests import load_suite

    document = yaml.safe_load((ROOT / "execution" / "demotests" / "face-recognition.tests.yaml").read_text())
    base = document["cases"]
    cases = []
    for i in range(count):
        case = copy.deepcopy(base[i % len(base)])
        case["name"] = f"{case['name']} #{i}"
        cases.append(case)
    document["cases"] = cases
    return load_suite(yaml.safe_dump(document))


async def _once(manifest: Any, suite: Any, config: Any, judge: bool) -> float:
    from execution.engine import make_client, run_graph
    from execution.graphtests import run_suite

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    # Django only to read the demo manifest from execution/demo.py; the suite itself runs without it.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    import django

    django.setup()
    from execution import demo
    from execution.engine import DEFAULT_MAX_RESPONSE_BYTES, EngineConfig, UrlGuard
    from graphs import spec

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    port = parent.recv()
    try:
        config = EngineConfig(
            url_template=f"http://127.0.0.1:{port}/v1/models/{{name}}:predict",
            guard=UrlGuard(allow_loopback=True),
            body_cap=DEFAULT_MAX_RESPONSE_BYTES,
        )
        manifest = spec.parse(demo.demo_manifest("face-recognition"))
        suite = _suite(args.cases)
        asyncio.run(_once(manifest, suite, config, judge=True))  # warm-up
        judged_s: list[float] = []
        bare_s: list[float] = []
        for _ in range(args.repeats):  # interleaved, so that a busy moment of the machine hits both
            judged_s.append(asyncio.run(_once(manifest, suite, config, True)))
            bare_s.append(asyncio.run(_once(manifest, suite, config, False)))
        judged, bare = statistics.median(judged_s), statistics.median(bare_s)
    finally:
        parent.send("stop")
        proc.join(timeout=10)
    rows = [
        (f"suite of {args.cases} face-recognition cases: wall", f"{judged:.3f} s", ""),
        ("  cases per second (in-process, testgraph FILE)", f"{args.cases / judged:.0f}", ">= 100"),
        ("  the same requests, engine only: cases per second", f"{args.cases / bare:.0f}", ""),
        ("  suite wall / engine-only wall", f"{judged / bare:.3f}", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>10}  goal")
    print("-" * (width + 22))
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {goal}")
    print(f"(medians of {args.repeats} repeats; mock model server in a child process)")


if __name__ == "__main__":
    main()
