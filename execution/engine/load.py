"""Load profiles: one graph, N requests, C at a time, through the engine; latencies aggregated as
they arrive (nothing per request is kept).

Pure Python like the rest of the engine: the caller gives the manifest, the config, the client
(one pooled client for the whole load test, so connections are reused as a router's are), the
clock, and two callbacks: ``should_stop`` (a cancel, polled before each request) and
``on_progress`` (called after each request with the running totals). Every request is a full
:func:`~execution.engine.runner.run_graph` with the graph's own semantics (deadlines, conditions,
Ensembles); the trace it reports is folded into :class:`LoadStats` and dropped.

Storage is bounded whatever N is: a latency histogram has at most :data:`MAX_BUCKETS` buckets
(log-spaced, each :data:`GROWTH` wider than the one before, so a percentile read from it is within
half a bucket, about 1 %, of the exact one), and there is one per step of the graph.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from execution.engine.config import EngineConfig
from execution.engine.runner import run_graph
from execution.engine.trace import TraceEvent
from graphs.language.model import Manifest

__all__ = [
    "GRAPH",
    "GROWTH",
    "Histogram",
    "LoadOutcome",
    "LoadStats",
    "compare_summaries",
    "run_load",
    "step_key",
]

# Bucket i holds latencies in [FLOOR_MS * GROWTH**i, FLOOR_MS * GROWTH**(i+1)). 2 % per bucket: a
# percentile is reported at its bucket's geometric middle, at most 1 % from any value in it.
GROWTH: Final = 1.02
FLOOR_MS: Final = 0.001
# From 1 µs to about an hour (FLOOR_MS * GROWTH**1110 ≈ 3.4e6 ms): anything slower lands in the last.
MAX_BUCKETS: Final = 1110
_LOG_GROWTH: Final = math.log(GROWTH)
# The key of the whole graph's latencies in a summary (step keys are ``node/step``).
GRAPH: Final = "graph"
# Bins of a histogram as the summary shows it (the fine buckets regrouped between min and max).
DISPLAY_BINS: Final = 20


def step_key(node: str | None, step_name: str | None, step_index: int | None) -> str:
    """How a summary (and a latency budget) names a step: ``node/name``, else ``node/index``."""
    return f"{node}/{step_name if step_name else step_index}"


def _bucket(ms: float) -> int:
    if ms <= FLOOR_MS:
        return 0
    return min(MAX_BUCKETS - 1, int(math.log(ms / FLOOR_MS) / _LOG_GROWTH))


def _middle(index: int) -> float:
    return float(FLOOR_MS * GROWTH ** (index + 0.5))


@dataclass
class Histogram:
    """Latencies in milliseconds, in log-spaced buckets (sparse: only buckets that hold one)."""

    counts: dict[int, int] = field(default_factory=dict)
    count: int = 0
    total_ms: float = 0.0
    min_ms: float = math.inf
    max_ms: float = 0.0

    def add(self, ms: float) -> None:
        index = _bucket(ms)
        self.counts[index] = self.counts.get(index, 0) + 1
        self.count += 1
        self.total_ms += ms
        self.min_ms = min(self.min_ms, ms)
        self.max_ms = max(self.max_ms, ms)

    def percentile(self, q: float) -> float | None:
        """The ``q``-th percentile (0-100) by nearest rank, None when empty; read at the bucket's
        middle, clamped to the smallest and largest value seen."""
        if not self.count:
            return None
        rank = max(1, math.ceil(q / 100 * self.count))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                return round(min(self.max_ms, max(self.min_ms, _middle(index))), 3)
        return round(self.max_ms, 3)

    def bins(self, n: int = DISPLAY_BINS) -> list[dict[str, float | int]]:
        """The latencies regrouped into ``n`` log-spaced bins from the smallest to the largest:
        ``[{"from_ms", "to_ms", "count"}]`` (what a chart draws)."""
        if not self.count:
            return []
        low, high = max(self.min_ms, FLOOR_MS), max(self.max_ms, FLOOR_MS)
        if high <= low * 1.0001:
            return [{"from_ms": round(low, 3), "to_ms": round(high, 3), "count": self.count}]
        step = (math.log(high) - math.log(low)) / n
        edges = [low * math.exp(step * i) for i in range(n + 1)]
        out = [{"from_ms": round(edges[i], 3), "to_ms": round(edges[i + 1], 3), "count": 0} for i in range(n)]
        for index, count in self.counts.items():
            ms = min(high, max(low, _middle(index)))
            at = min(n - 1, int((math.log(ms) - math.log(low)) / step))
            out[at]["count"] += count
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "mean_ms": round(self.total_ms / self.count, 3) if self.count else None,
            "min_ms": round(self.min_ms, 3) if self.count else None,
            "max_ms": round(self.max_ms, 3) if self.count else None,
            "p50_ms": self.percentile(50),
            "p95_ms": self.percentile(95),
            "p99_ms": self.percentile(99),
            "histogram": self.bins(),
        }


@dataclass
class _Series:
    """One thing measured (the graph, or one step): its latencies, statuses and errors."""

    latency: Histogram = field(default_factory=Histogram)
    statuses: dict[str, int] = field(default_factory=dict)
    errors: int = 0

    def add(self, ms: float, status: int | None, ok: bool) -> None:
        self.latency.add(ms)
        key = str(status) if status is not None else "none"
        self.statuses[key] = self.statuses.get(key, 0) + 1
        if not ok:
            self.errors += 1

    def summary(self) -> dict[str, Any]:
        n = self.latency.count
        return {
            **self.latency.summary(),
            "statuses": dict(sorted(self.statuses.items())),
            "errors": self.errors,
            "error_rate": round(self.errors / n, 6) if n else 0.0,
        }


@dataclass
class LoadStats:
    """The running aggregate of a load test: the whole graph's latencies and each step's."""

    graph: _Series = field(default_factory=_Series)
    steps: dict[str, _Series] = field(default_factory=dict)
    # The most distinct steps kept (a graph with more is cut here: its nested nodes repeat names).
    max_steps: int = 256

    def add_step(self, key: str, ms: float, status: int | None, outcome: str) -> None:
        series = self.steps.get(key)
        if series is None:
            if len(self.steps) >= self.max_steps:
                return
            series = self.steps[key] = _Series()
        series.add(ms, status, outcome == "ok")

    def add_request(self, ms: float, status: int | None) -> None:
        self.graph.add(ms, status, status is not None and 200 <= status <= 299)

    @property
    def completed(self) -> int:
        return self.graph.latency.count

    @property
    def errors(self) -> int:
        return self.graph.errors

    def summary(self, elapsed_s: float) -> dict[str, Any]:
        """Everything a load test reports, as JSON: throughput, the graph's and each step's
        latency percentiles, histogram, statuses and error rate."""
        return {
            "completed": self.completed,
            "elapsed_s": round(elapsed_s, 3),
            "throughput_rps": round(self.completed / elapsed_s, 3) if elapsed_s > 0 else None,
            "errors": self.errors,
            "error_rate": round(self.errors / self.completed, 6) if self.completed else 0.0,
            GRAPH: self.graph.summary(),
            "steps": {key: series.summary() for key, series in sorted(self.steps.items())},
        }


@dataclass(frozen=True)
class LoadOutcome:
    """How a load's loop ended: ``finished`` (every request made), ``cancelled`` (``should_stop``)
    or ``time-limit`` (``max_seconds`` passed), and what it measured."""

    ended: str
    completed: int
    elapsed_s: float
    stats: LoadStats


async def run_load(
    manifest: Manifest,
    body: bytes,
    headers: list[tuple[str, str]],
    *,
    config: EngineConfig,
    client: httpx.AsyncClient,
    requests: int,
    concurrency: int,
    max_seconds: float,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[LoadStats], None] | None = None,
    rng: random.Random | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> LoadOutcome:
    """Send ``requests`` requests through ``manifest``, ``concurrency`` at a time, and aggregate.

    Bounded in count (``requests``) and in time: no request starts after ``max_seconds``, and the
    ones in flight then are cancelled (not counted). ``should_stop`` is polled before each request;
    once it is true no more start and the ones in flight finish. Splitter draws come from ``rng``.
    """
    if requests < 1 or concurrency < 1:
        raise ValueError("requests and concurrency must be at least 1")
    stats = LoadStats()
    draw = rng if rng is not None else random.Random()
    issued = 0
    ended = "finished"
    started = clock()
    stop_at = started + max_seconds

    def on_event(event: TraceEvent) -> None:
        if event.type == "step.finished":
            data = event.data
            stats.add_step(
                step_key(event.node, event.step_name, event.step_index),
                float(data.get("duration_ms") or 0.0),
                data.get("status"),
                str(data.get("outcome")),
            )

    async def worker() -> None:
        nonlocal issued, ended
        while issued < requests:
            if should_stop():
                ended = "cancelled"
                return
            if clock() >= stop_at:
                ended = "time-limit"
                return
            issued += 1
            began = clock()
            result = await run_graph(
                manifest, body, headers, config=config, client=client, on_event=on_event,
                rng=draw, clock=clock, keep_trace=False,
            )  # fmt: skip
            stats.add_request((clock() - began) * 1000, result.status)
            if on_progress is not None:
                on_progress(stats)

    tasks = [asyncio.create_task(worker()) for _ in range(min(concurrency, requests))]
    remaining = max(0.0, stop_at - clock())
    done, pending = await asyncio.wait(tasks, timeout=remaining)
    if pending:
        ended = "time-limit"
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        task.result()  # an engine crash is the caller's to see
    return LoadOutcome(ended=ended, completed=stats.completed, elapsed_s=clock() - started, stats=stats)


def _p(series: Mapping[str, Any] | None, key: str) -> float | None:
    return None if series is None else series.get(key)


def compare_summaries(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two load test summaries side by side: the graph and each step (in either), with each
    percentile's change from ``a`` to ``b`` (ms and ratio) and whether ``b`` got slower (p95 up by
    more than 10 % and 1 ms, so that noise on a fast step is not called a regression)."""

    def row(name: str, sa: Mapping[str, Any] | None, sb: Mapping[str, Any] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name, "a": None, "b": None}
        for side, series in (("a", sa), ("b", sb)):
            if series is not None:
                out[side] = {k: series.get(k) for k in ("count", "p50_ms", "p95_ms", "p99_ms", "error_rate")}
        for q in ("p50_ms", "p95_ms", "p99_ms"):
            va, vb = _p(sa, q), _p(sb, q)
            out[f"{q}_delta"] = round(vb - va, 3) if va is not None and vb is not None else None
            out[f"{q}_ratio"] = round(vb / va, 3) if va and vb is not None else None
        delta, ratio = out["p95_ms_delta"], out["p95_ms_ratio"]
        out["slower"] = bool(delta is not None and delta > 1.0 and ratio is not None and ratio > 1.1)
        out["faster"] = bool(delta is not None and delta < -1.0 and ratio is not None and ratio < 1 / 1.1)
        return out

    steps_a: Mapping[str, Any] = a.get("steps") or {}
    steps_b: Mapping[str, Any] = b.get("steps") or {}
    names = sorted(set(steps_a) | set(steps_b))
    steps = [row(name, steps_a.get(name), steps_b.get(name)) for name in names]
    return {
        "graph": row(GRAPH, a.get(GRAPH), b.get(GRAPH)),
        "throughput_rps": [a.get("throughput_rps"), b.get("throughput_rps")],
        "error_rate": [a.get("error_rate"), b.get("error_rate")],
        "steps": steps,
        "slower_steps": [s["name"] for s in steps if s["slower"]],
    }
