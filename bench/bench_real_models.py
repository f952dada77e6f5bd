"""face-recognition on the real models (models/server.py, KServe's model server): what the studio adds.

    python bench/bench_real_models.py [--rounds 20]

Needs the models' virtualenv (``make models-venv``). Starts the model server on loopback, then, in
rounds that alternate so that the machine's load falls on every side alike, measures on the
astronaut's photo:

- ``direct``: the models' own inference times, each model called over HTTP by a bare client (the
  least any router pays): detector, extractor, the two matchers at once (as the Ensemble calls
  them), merger. Their critical path (detector + extractor + the slower matcher + merger) is the
  baseline;
- ``engine``: the same graph run by the engine in this process (``run_graph``), with its per-step
  latencies from the trace;
- ``studio``: whole runs as the browser starts them (``run_create``: the database, Redis, a Celery
  worker process, the engine, the trace written back), timed from the worker's start of the run to
  its end, and from the request to the end (queueing included).

Each row prints its median and its ratio to the direct critical path of the same rounds; the goal
is that the studio adds at most 5 % to what the models take.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from execution.engine import EngineConfig, UrlGuard, make_client, run_graph  # noqa: E402
from graphs.language import manifest_from_document  # noqa: E402

MODELS_PYTHON = ROOT / ".venv-models" / "bin" / "python"
PHOTO = ROOT / "models" / "samples" / "astronaut.jpg"
SERVICES = ("face-detector", "feature-extractor", "face-db-employees", "face-db-visitors", "result-merger")
STEP_OF = {  # call id in the engine's trace -> model
    "root/0": "face-detector",
    "root/1": "feature-extractor",
    "match#1/0": "face-db-employees",
    "match#1/1": "face-db-visitors",
    "root/3": "result-merger",
}


def start_model_server(logdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    from benchkit import free_port

    port = free_port()
    with open(logdir / "models.log", "wb") as log:
        proc = subprocess.Popen(
            [str(MODELS_PYTHON), "-m", "models.server", "--host", "127.0.0.1", "--http_port", str(port)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/v2/health/ready", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the model server did not start (log in {logdir / 'models.log'})")
        time.sleep(0.1)


async def direct(client: httpx.AsyncClient, url: str, body: bytes) -> dict[str, float]:
    """One pass of the models by a bare client; each call's wall in ms, and the critical path."""
    times: dict[str, float] = {}

    async def call(model: str, content: bytes) -> bytes:
        began = time.perf_counter()
        response = await client.post(
            f"{url}/v1/models/{model}:predict", content=content, headers={"Content-Type": "application/json"}
        )
        times[model] = (time.perf_counter() - began) * 1000
        response.raise_for_status()
        return response.content

    began = time.perf_counter()
    faces = await call("face-detector", body)
    features = await call("feature-extractor", faces)
    employees, visitors = await asyncio.gather(
        call("face-db-employees", features), call("face-db-visitors", features)
    )
    merged = b'{"db-employees":' + employees + b',"db-visitors":' + visitors + b"}"
    await call("result-merger", merged)
    times["whole"] = (time.perf_counter() - began) * 1000
    times["path"] = (
        times["face-detector"]
        + times["feature-extractor"]
        + max(times["face-db-employees"], times["face-db-visitors"])
        + times["result-merger"]
    )
    return times


async def engine_rounds(
    url: str, body: bytes, rounds: int, document: dict[str, Any]
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    manifest = manifest_from_document(document)
    services = {name: f"{url}/v1/models/{name}:predict" for name in SERVICES}
    guard = UrlGuard(allow_loopback=True)
    config = EngineConfig(service_urls=services, guard=guard, step_timeout=60)
    bare, engine = [], []
    async with make_client(guard=guard) as client, httpx.AsyncClient(timeout=60) as plain:
        for _ in range(2):  # warm-up: connections, the models' first calls
            await direct(plain, url, body)
            await run_graph(manifest, body, {}, config=config, client=client)
        for _ in range(rounds):
            bare.append(await direct(plain, url, body))
            began = time.perf_counter()
            result = await run_graph(manifest, body, {}, config=config, client=client)
            wall = (time.perf_counter() - began) * 1000
            assert result.status == 200, result.body[:300]
            row = {"whole": wall}
            for event in result.trace:
                if event.type == "step.finished" and event.call_id in STEP_OF:
                    row[STEP_OF[event.call_id]] = float(event.data.get("duration_ms") or 0)
            engine.append(row)
    return bare, engine


def studio_rounds(
    url: str, body: bytes, rounds: int, workdir: Path
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """Whole runs through the studio (one worker process, as a small `make run`), each after a
    direct pass of the models; Django is set up (benchkit.setup_django) already."""
    from benchkit import worker_processes
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from execution.devtools import demo
    from execution.models import Environment, Run
    from execution.services import runs
    from graphs import services as graph_services

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create(username="bench")
    graph = graph_services.graph_create(owner=user, manifest=demo.demo_manifest("face-recognition"))
    environment = Environment.objects.create(
        name="real",
        owner=user,
        allow_loopback=True,
        step_timeout=60,
        service_urls={name: f"{url}/v1/models/{name}:predict" for name in SERVICES},
    )
    payload = json.loads(body)
    bare, studio = [], []

    def one() -> dict[str, float]:
        run, _ = runs.run_create(
            graph=graph, version=graph.latest_version, user=user, payload=payload, environment=environment
        )
        while not Run.objects.filter(pk=run.pk, status__in=Run.TERMINAL).exists():
            time.sleep(0.002)
        done = Run.objects.get(pk=run.pk)
        assert done.status == "succeeded", done.error
        assert done.started_at and done.finished_at
        row = {
            "run": (done.finished_at - done.started_at).total_seconds() * 1000,
            "request to end": (done.finished_at - done.created_at).total_seconds() * 1000,
        }
        steps = [step for step in done.steps.all() if step.started_at and step.finished_at]
        for step in steps:
            if step.call_id in STEP_OF and step.duration_ms is not None:
                row[STEP_OF[step.call_id]] = step.duration_ms
        if steps:  # where the time outside the model calls goes
            first = min(step.started_at for step in steps)
            last = max(step.finished_at for step in steps)
            row["before the first step"] = (first - done.started_at).total_seconds() * 1000
            row["after the last step"] = (done.finished_at - last).total_seconds() * 1000
        return row

    async def bare_pass() -> dict[str, float]:
        async with httpx.AsyncClient(timeout=60) as plain:
            await direct(plain, url, body)  # its connections are new, as a worker's first are not
            return await direct(plain, url, body)

    with worker_processes(1, 8, workdir):
        for _ in range(2):
            one()
        for _ in range(rounds):
            bare.append(asyncio.run(bare_pass()))
            studio.append(one())
    return bare, studio


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows if key in row)


def critical_path(row: dict[str, float]) -> float:
    """The models' own time in one run: detector + extractor + the slower matcher + merger."""
    return (
        row["face-detector"]
        + row["feature-extractor"]
        + max(row["face-db-employees"], row["face-db-visitors"])
        + row["result-merger"]
    )


def added(rows: list[dict[str, float]], key: str) -> float:
    """The median, over runs, of a run's wall against its own steps' critical path."""
    return statistics.median(row[key] / critical_path(row) for row in rows if all(m in row for m in SERVICES))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--no-studio", action="store_true", help="the engine only (no Redis, worker, database)"
    )
    args = parser.parse_args()
    if not MODELS_PYTHON.exists():
        print(f"the models' virtualenv is missing ({MODELS_PYTHON}): run `make models-venv`")
        return 1
    sys.path.insert(0, str(ROOT / "bench"))
    body = json.dumps(
        {"instances": [{"image": {"b64": base64.b64encode(PHOTO.read_bytes()).decode()}}]}
    ).encode()
    workdir = Path(tempfile.mkdtemp(prefix="bench-real-models-"))
    from benchkit import SERVICE_PIDS, free_port, setup_django

    from execution.devtools import localredis

    redis_port = free_port()
    redis_proc = localredis.start(redis_port)
    SERVICE_PIDS["redis"] = redis_proc.pid
    proc, url = start_model_server(workdir)
    try:
        setup_django(workdir, redis_port, "http://127.0.0.1:9")
        from execution.devtools import demo

        document = demo.demo_manifest("face-recognition")
        bare, engine = asyncio.run(engine_rounds(url, body, args.rounds, document))
        studio_bare, studio = ([], []) if args.no_studio else studio_rounds(url, body, args.rounds, workdir)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)

    path = median(bare, "path")
    print(f"face-recognition on the astronaut's photo, {args.rounds} rounds, medians in ms")
    print(
        f"{'step':<22} {'model alone':>12} {'in the engine':>14} {'ratio':>7} {'in the studio':>14} {'ratio':>7}"
    )
    for model in SERVICES:
        alone, inside = median(bare, model), median(engine, model)
        line = f"{model:<22} {alone:>12.1f} {inside:>14.1f} {inside / alone:>7.3f}"
        if studio:
            alone_s, in_studio = median(studio_bare, model), median(studio, model)
            line += f" {in_studio:>14.1f} {in_studio / alone_s:>7.3f}"
        print(line)
    print()
    print(f"{'whole run':<40} {'ms':>8} {'vs models':>10}  goal")
    print(f"{'models alone: critical path (baseline)':<40} {path:>8.1f} {1:>10.3f}")
    print(
        f"{'models alone: a bare client chaining them':<40} {median(bare, 'whole'):>8.1f} {median(bare, 'whole') / path:>10.3f}"
    )
    engine_wall = median(engine, "whole")
    print(f"{'engine (run_graph, in process)':<40} {engine_wall:>8.1f} {engine_wall / path:>10.3f}")
    if studio:
        base = median(studio_bare, "path")
        print(f"{'models alone, in the studio rounds':<40} {base:>8.1f} {1:>10.3f}")
        for key in ("run", "request to end"):
            value = median(studio, key)
            print(f"{'studio: ' + key:<40} {value:>8.1f} {value / base:>10.3f}")
    print()
    print(
        "what a run adds to its own steps' time (each run's wall / the critical path of its steps' durations)"
    )
    print(f"{'engine (run_graph, in process)':<40} {added(engine, 'whole'):>8.3f}  goal <= 1.05")
    if studio:
        print(f"{'studio: run (worker, DB, Redis)':<40} {added(studio, 'run'):>8.3f}  goal <= 1.05")
        print(f"{'studio: request to end (queue too)':<40} {added(studio, 'request to end'):>8.3f}")
        print()
        print("where the studio's own time goes (medians, ms)")
        for key in ("before the first step", "after the last step"):
            print(f"{key:<40} {median(studio, key):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
