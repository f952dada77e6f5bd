"""Load profiles (execution/engine/load.py): the histogram's percentiles against exact ones, and a
load against a real step server whose latencies are drawn from a seeded distribution."""

from __future__ import annotations

import asyncio
import math
import random
import threading
from typing import Any

import pytest
from stepserver import Dynamic, Recorded, Reply, StepServer

from execution.engine import EngineConfig, UrlGuard, make_client
from execution.engine.load import GRAPH, Histogram, compare_summaries, run_load
from graphs.language import manifest_from_document


def exact(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def test_histogram_percentiles_are_within_one_percent_of_the_exact_ones() -> None:
    rng = random.Random(7)
    values = [rng.lognormvariate(3, 1) for _ in range(20_000)]
    histogram = Histogram()
    for value in values:
        histogram.add(value)
    for q in (50, 95, 99):
        got = histogram.percentile(q)
        assert got is not None and got == pytest.approx(exact(values, q), rel=0.011)
    assert histogram.count == 20_000 and len(histogram.counts) < 1110
    bins = histogram.bins()
    assert sum(b["count"] for b in bins) == 20_000 and bins[0]["from_ms"] == round(min(values), 3)


def test_an_empty_histogram_has_no_percentiles() -> None:
    assert Histogram().percentile(50) is None and Histogram().bins() == []


def _manifest(url_fast: str, url_slow: str) -> Any:
    return manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "seeded"},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "fast", "serviceUrl": url_fast},
                            {"name": "slow", "serviceUrl": url_slow, "data": "$request"},
                        ],
                    }
                }
            },
        }
    )


class Seeded:
    """Latencies from a seeded bimodal distribution: 90 % in 5-15 ms, 10 % in 60-100 ms (so the
    median and the tail are far apart, and a mean or a wrong percentile cannot pass for either)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.drawn: list[float] = []

    def __call__(self, _: Recorded) -> Reply:
        with self.lock:
            slow = self.rng.random() < 0.1
            ms = self.rng.uniform(60, 100) if slow else self.rng.uniform(5, 15)
            self.drawn.append(ms)
        return Reply(json={"predictions": [1]}, delay=ms / 1000)


def test_a_load_measures_the_seeded_percentiles_of_each_step(server: StepServer) -> None:
    """Tolerance: each measured percentile is at least 99 % of the seeded one (the histogram's
    half bucket) and at most 12 ms above it (the HTTP hop and thread scheduling on a busy 2-core
    machine; the two modes are 45 ms apart, so a wrong percentile cannot hide in it)."""
    seeded = Seeded(seed=36)
    server.route("/fast", Reply(json={"predictions": [0]}))
    server.route("/slow", Dynamic(seeded))
    manifest = _manifest(server.url("/fast"), server.url("/slow"))
    config = EngineConfig(guard=UrlGuard(allow_loopback=True), body_cap=0)
    progress: list[int] = []

    async def go() -> Any:
        async with make_client(guard=config.guard) as client:
            return await run_load(
                manifest, b'{"instances": [1]}', [("Content-Type", "application/json")],
                config=config, client=client, requests=400, concurrency=8, max_seconds=120,
                on_progress=lambda stats: progress.append(stats.completed),
            )  # fmt: skip

    outcome = asyncio.run(go())
    assert outcome.ended == "finished" and outcome.completed == 400 and len(seeded.drawn) == 400
    summary = outcome.stats.summary(outcome.elapsed_s)
    assert progress == list(range(1, 401))
    slow = summary["steps"]["root/slow"]
    for q in (50, 95, 99):
        want = exact(seeded.drawn, q)
        assert want * 0.99 <= slow[f"p{q}_ms"] <= want + 12, (q, want, slow)
    assert summary["steps"]["root/fast"]["p50_ms"] < 12
    assert summary[GRAPH]["p50_ms"] >= slow["p50_ms"] and summary[GRAPH]["statuses"] == {"200": 400}
    assert summary["error_rate"] == 0.0 and summary["throughput_rps"] > 0
    assert sum(b["count"] for b in slow["histogram"]) == 400


def test_a_load_counts_errors_by_status_and_by_step(server: StepServer) -> None:
    server.route("/fast", Reply(json={"predictions": [0]}))
    server.route("/slow", Reply(status=503, json={"error": "overloaded"}))
    manifest = _manifest(server.url("/fast"), server.url("/slow"))
    config = EngineConfig(guard=UrlGuard(allow_loopback=True))

    async def go() -> Any:
        async with make_client(guard=config.guard) as client:
            return await run_load(
                manifest, b"{}", [], config=config, client=client, requests=20, concurrency=4, max_seconds=60
            )

    summary = asyncio.run(go()).stats.summary(1.0)
    assert summary["errors"] == 20 and summary["error_rate"] == 1.0
    assert summary[GRAPH]["statuses"] == {"503": 20}
    assert summary["steps"]["root/slow"]["errors"] == 20 and summary["steps"]["root/fast"]["errors"] == 0


def test_a_load_stops_when_asked_and_at_its_time_limit(server: StepServer) -> None:
    server.route("/fast", Reply(json={}, delay=0.02))
    server.route("/slow", Reply(json={}, delay=0.02))
    manifest = _manifest(server.url("/fast"), server.url("/slow"))
    config = EngineConfig(guard=UrlGuard(allow_loopback=True))

    async def go(**kwargs: Any) -> Any:
        async with make_client(guard=config.guard) as client:
            return await run_load(manifest, b"{}", [], config=config, client=client, concurrency=2, **kwargs)

    asked = {"n": 0}

    def should_stop() -> bool:
        asked["n"] += 1
        return asked["n"] > 10

    cancelled = asyncio.run(go(requests=10_000, max_seconds=60, should_stop=should_stop))
    assert cancelled.ended == "cancelled" and cancelled.completed < 20
    timed = asyncio.run(go(requests=10_000, max_seconds=0.5))
    assert timed.ended == "time-limit" and 0 < timed.completed < 10_000


def test_a_load_reaches_only_what_the_guard_allows(server: StepServer) -> None:
    """Loopback is blocked unless the environment allows it: every request fails at the guard and
    nothing reaches the server."""
    server.route("/fast", Reply(json={}))
    manifest = _manifest(server.url("/fast"), server.url("/fast"))
    config = EngineConfig(guard=UrlGuard())

    async def go() -> Any:
        async with make_client(guard=config.guard) as client:
            return await run_load(
                manifest, b"{}", [], config=config, client=client, requests=5, concurrency=2, max_seconds=30
            )

    outcome = asyncio.run(go())
    assert outcome.stats.errors == 5 and server.requests == []


def test_two_summaries_compare_step_by_step() -> None:
    def series(p50: float, p95: float) -> dict[str, Any]:
        return {"count": 10, "p50_ms": p50, "p95_ms": p95, "p99_ms": p95, "error_rate": 0.0}

    a = {"graph": series(20, 30), "steps": {"root/a": series(10, 12), "root/b": series(10, 15)}}
    b = {"graph": series(40, 60), "steps": {"root/a": series(10, 12.5), "root/b": series(30, 45)}}
    out = compare_summaries(a, b)
    assert out["slower_steps"] == ["root/b"] and out["graph"]["slower"]
    assert out["steps"][1]["p95_ms_delta"] == 30 and out["steps"][1]["p95_ms_ratio"] == 3.0
