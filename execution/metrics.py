"""The studio's own metrics, served at ``/metrics`` in the Prometheus text format.

What is counted where:

- runs and suite runs by status, the queue (runs and suite runs waiting, the age of the oldest):
  read from the database at each scrape (counts on indexed columns);
- step calls (by graph, node, step and outcome) and their durations (a histogram by graph, node
  and step): each worker adds a finished run's steps to counters in Redis, one pipeline per run,
  so every worker process's calls are in one place whichever web process is scraped;
- event streams open: each web process writes its count to Redis when a stream opens or closes;
  an entry older than ``RUN_SSE_MAX_SECONDS`` (no stream lives longer) is a process gone;
- worker heartbeats: each worker's consumer writes the time to Redis every
  ``WORKER_HEARTBEAT_SECONDS`` (config/celery_app.py), reported with its age.

Label sets are bounded: at most ``STUDIO_METRICS_MAX_SERIES`` (graph, node, step) series per step
metric are reported (the most called first; ``studio_metrics_series_dropped`` counts the rest).
A Redis that does not answer leaves those families out of the scrape (``studio_metrics_redis_up``
is 0) rather than failing it. Access: a staff user's session, or
``Authorization: Bearer $STUDIO_METRICS_TOKEN`` (docs/observability.md).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import redis
from django.conf import settings
from django.db.models import Count, Min
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from execution import bus
from execution.models import Run
from execution.suites.models import SuiteRun

__all__ = [
    "DURATION_BUCKETS",
    "metrics_view",
    "record_run_steps",
    "record_streams_open",
    "record_worker_heartbeat",
    "render",
]

logger = logging.getLogger(__name__)

_PREFIX: Final = "studio:metrics:"
_STEP_CALLS: Final = _PREFIX + "step_calls"  # [graph, node, step, outcome] -> count
_STEP_BUCKETS: Final = _PREFIX + "step_seconds_bucket"  # [graph, node, step, bucket index] -> count
_STEP_SUM: Final = _PREFIX + "step_seconds_sum"  # [graph, node, step] -> seconds
_STEP_COUNT: Final = _PREFIX + "step_seconds_count"  # [graph, node, step] -> count
_WORKERS: Final = _PREFIX + "workers"  # worker name -> last heartbeat (epoch seconds)
_STREAMS: Final = _PREFIX + "streams"  # host:pid -> "count epoch"

# Seconds. Model calls range from a millisecond (a mock) to a minute (KServe's default
# serverWrite): Prometheus's default buckets, stretched to 60 s.
DURATION_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# A worker whose heartbeat is older than this is reported as not alive (six missed beats).
_WORKER_ALIVE_SECONDS: Final = 60.0
# Workers silent for a day are forgotten (scaled down, renamed).
_WORKER_FORGET_SECONDS: Final = 86_400.0


def _redis() -> redis.Redis:
    return bus.get_redis()


# -- writers -----------------------------------------------------------------------------------


def _bucket_index(seconds: float) -> int:
    for index, bound in enumerate(DURATION_BUCKETS):
        if seconds <= bound:
            return index
    return len(DURATION_BUCKETS)  # +Inf


def record_run_steps(graph: str, finished: Iterable[Mapping[str, Any]]) -> None:
    """Add a run's finished step calls (``step.finished`` data: ``node``, ``step_name``,
    ``step_index``, ``outcome``, ``duration_ms``) to the shared counters: one Redis round trip.
    Never raises: a metric is not worth a run (a failure is logged)."""
    calls: Counter[str] = Counter()
    buckets: Counter[str] = Counter()
    sums: dict[str, float] = {}
    counts: Counter[str] = Counter()
    for data in finished:
        node = str(data.get("node") or "")
        name = data.get("step_name")
        step = str(name) if name else str(data.get("step_index"))
        calls[json.dumps([graph, node, step, str(data.get("outcome") or "")])] += 1
        duration = data.get("duration_ms")
        if isinstance(duration, (int, float)):
            seconds = float(duration) / 1000
            key = json.dumps([graph, node, step])
            buckets[json.dumps([graph, node, step, _bucket_index(seconds)])] += 1
            sums[key] = sums.get(key, 0.0) + seconds
            counts[key] += 1
    if not calls:
        return
    try:
        pipe = _redis().pipeline(transaction=False)
        for field, n in calls.items():
            pipe.hincrby(_STEP_CALLS, field, n)
        for field, n in buckets.items():
            pipe.hincrby(_STEP_BUCKETS, field, n)
        for field, total in sums.items():
            pipe.hincrbyfloat(_STEP_SUM, field, total)
        for field, n in counts.items():
            pipe.hincrby(_STEP_COUNT, field, n)
        pipe.execute()
    except (redis.RedisError, OSError):
        logger.warning("could not add a run's step calls to the metrics", exc_info=True)


def record_worker_heartbeat(worker: str) -> None:
    """Note that ``worker`` is alive now (its consumer calls this on a timer)."""
    try:
        _redis().hset(_WORKERS, worker, repr(time.time()))
    except (redis.RedisError, OSError):
        logger.warning("could not record the worker's heartbeat for the metrics", exc_info=True)


class _LatestWriter:
    """Writes the latest of many values from many threads with one Redis call at a time: a thread
    that finds another writing leaves its value for that one, which writes the newest before it
    returns. Two hundred streams opening at once then hold one Redis connection, not one each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: int | None = None
        self._writing = False

    def offer(self, count: int) -> None:
        with self._lock:
            self._pending = count
            if self._writing:
                return
            self._writing = True
        while True:
            with self._lock:
                value, self._pending = self._pending, None
                if value is None:
                    self._writing = False
                    return
            try:
                _redis().hset(_STREAMS, f"{socket.gethostname()}:{os.getpid()}", f"{value} {time.time()!r}")
            except (redis.RedisError, OSError):
                logger.warning("could not record the open event streams for the metrics", exc_info=True)


_STREAMS_WRITER = _LatestWriter()


def record_streams_open(count: int) -> None:
    """This process now serves ``count`` event streams."""
    _STREAMS_WRITER.offer(count)


# -- the scrape --------------------------------------------------------------------------------


def _by_status(model: Any, statuses: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(statuses, 0)
    for row in model.objects.values("status").annotate(n=Count("pk")).order_by():
        counts[row["status"]] = row["n"]
    return counts


def _database_metrics(now: float) -> Iterator[Metric]:
    runs = GaugeMetricFamily("studio_runs", "Test runs stored, by status", labels=["status"])
    for status, n in _by_status(Run, Run.Status.values).items():
        runs.add_metric([status], n)
    yield runs
    suites = GaugeMetricFamily("studio_suite_runs", "Suite runs stored, by status", labels=["status"])
    for status, n in _by_status(SuiteRun, SuiteRun.Status.values).items():
        suites.add_metric([status], n)
    yield suites
    depth = GaugeMetricFamily(
        "studio_queue_depth", "Runs and suite runs waiting for a worker", labels=["kind"]
    )
    age = GaugeMetricFamily(
        "studio_queue_oldest_age_seconds",
        "How long the oldest waiting run (suite run) has waited; 0 when none waits",
        labels=["kind"],
    )
    for kind, model in (("run", Run), ("suite_run", SuiteRun)):
        queued = model.objects.filter(status="queued").aggregate(n=Count("pk"), oldest=Min("created_at"))
        depth.add_metric([kind], queued["n"])
        oldest = queued["oldest"]
        age.add_metric([kind], max(0.0, now - oldest.timestamp()) if oldest is not None else 0.0)
    yield depth
    yield age


def _series(raw: Mapping[bytes, bytes]) -> dict[tuple[str, ...], float]:
    out: dict[tuple[str, ...], float] = {}
    for field, value in raw.items():
        try:
            key = tuple(str(part) for part in json.loads(field))
            out[key] = float(value)
        except (ValueError, TypeError):
            continue
    return out


def _redis_metrics(now: float) -> Iterator[Metric]:
    client = _redis()
    pipe = client.pipeline(transaction=False)
    for key in (_STEP_CALLS, _STEP_BUCKETS, _STEP_SUM, _STEP_COUNT, _WORKERS, _STREAMS):
        pipe.hgetall(key)
    calls_raw, buckets_raw, sums_raw, counts_raw, workers_raw, streams_raw = pipe.execute()

    counts = _series(counts_raw)
    limit = max(0, int(settings.STUDIO_METRICS_MAX_SERIES))
    ranked = sorted(counts, key=lambda key: (-counts[key], key))
    kept = set(ranked[:limit])
    dropped = len(ranked) - len(kept)

    calls = CounterMetricFamily(
        "studio_step_calls", "Step calls made by test runs", labels=["graph", "node", "step", "outcome"]
    )
    for (graph, node, step, outcome), n in sorted(_series(calls_raw).items()):
        if (graph, node, step) in kept:
            calls.add_metric([graph, node, step, outcome], n)
    yield calls

    per_bucket: dict[tuple[str, ...], list[float]] = {}
    for (graph, node, step, index), n in _series(buckets_raw).items():
        if (graph, node, step) in kept and index.isdigit() and int(index) <= len(DURATION_BUCKETS):
            per_bucket.setdefault((graph, node, step), [0.0] * (len(DURATION_BUCKETS) + 1))[int(index)] += n
    sums = _series(sums_raw)
    durations = HistogramMetricFamily(
        "studio_step_duration_seconds",
        "How long step calls of test runs took",
        labels=["graph", "node", "step"],
    )
    for series in sorted(kept):
        raw = per_bucket.get(series, [0.0] * (len(DURATION_BUCKETS) + 1))
        cumulative: list[tuple[str, float]] = []
        running = 0.0
        for bound, n in zip((*(str(b) for b in DURATION_BUCKETS), "+Inf"), raw, strict=True):
            running += n
            cumulative.append((bound, running))
        durations.add_metric(list(series), cumulative, sums.get(series, 0.0))
    yield durations
    yield GaugeMetricFamily(
        "studio_metrics_series_dropped",
        "Step series left out of this scrape by STUDIO_METRICS_MAX_SERIES",
        value=dropped,
    )

    beats = GaugeMetricFamily(
        "studio_worker_heartbeat_timestamp_seconds", "When each worker last beat", labels=["worker"]
    )
    ages = GaugeMetricFamily(
        "studio_worker_heartbeat_age_seconds", "Seconds since each worker beat", labels=["worker"]
    )
    alive = 0
    stale: list[bytes] = []
    for name, value in sorted(workers_raw.items()):
        try:
            at = float(value)
        except ValueError:
            continue
        if now - at > _WORKER_FORGET_SECONDS:
            stale.append(name)
            continue
        worker = name.decode(errors="replace")
        beats.add_metric([worker], at)
        ages.add_metric([worker], max(0.0, now - at))
        alive += now - at <= _WORKER_ALIVE_SECONDS
    if stale:
        client.hdel(_WORKERS, *stale)
    yield beats
    yield ages
    yield GaugeMetricFamily(
        "studio_workers_alive", f"Workers that beat within the last {_WORKER_ALIVE_SECONDS:g} s", value=alive
    )

    open_streams = 0
    gone: list[bytes] = []
    for name, value in streams_raw.items():
        try:
            count, at = value.split()
            n, when = int(count), float(at)
        except ValueError:
            continue
        if now - when > settings.RUN_SSE_MAX_SECONDS + 60 and n > 0:
            gone.append(name)  # no stream outlives RUN_SSE_MAX_SECONDS: that process is gone
            continue
        open_streams += n
    if gone:
        client.hdel(_STREAMS, *gone)
    yield GaugeMetricFamily(
        "studio_event_streams_open",
        "Event streams (runs' and suite runs') open, all web processes",
        value=open_streams,
    )


class _StudioCollector:
    def collect(self) -> Iterator[Metric]:
        now = time.time()
        yield from _database_metrics(now)
        up = 1
        try:
            yield from list(_redis_metrics(now))
        except (redis.RedisError, OSError):
            logger.warning("the metrics could not read Redis", exc_info=True)
            up = 0
        yield GaugeMetricFamily("studio_metrics_redis_up", "Whether this scrape could read Redis", value=up)


def render() -> bytes:
    """The metrics in the Prometheus text format (version 0.0.4: every name is a legacy one, so
    the classic format every Prometheus reads)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StudioCollector())  # type: ignore[arg-type]
    return generate_latest(registry)


def _allowed(request: HttpRequest) -> bool | None:
    """True: may read; False: signed in but not allowed; None: no credentials at all."""
    token = settings.STUDIO_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        return bool(token) and hmac.compare_digest(header[len("Bearer ") :].encode(), token.encode())
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    return bool(user.is_staff)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: for a staff user's session, or ``Authorization: Bearer`` with
    ``STUDIO_METRICS_TOKEN``. 401 without credentials, 403 with wrong ones."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    allowed = _allowed(request)
    if not allowed:
        status = 401 if allowed is None else 403
        response = HttpResponse(
            "metrics need a staff session or the metrics token\n", status=status, content_type="text/plain"
        )
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    response = HttpResponse(render(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response
