"""A run's trace: OpenTelemetry spans derived from its stored events.

The stored events are the only record of a run, so the trace is computed from them, not kept
beside them: every stored run has one, and it can never disagree with the console. The spans:

- the run (kind SERVER, the graph answering one request), the root;
- each node invocation (INTERNAL), under the run or under the ``nodeName`` step that called it;
- each step call (CLIENT for a URL step, INTERNAL for a ``nodeName`` step), under its node.

Their attributes: ``igs.graph``, ``igs.version``, ``igs.node``, ``igs.step``, ``igs.target``,
``igs.status`` (the HTTP status), ``igs.outcome``, ``igs.bytes_in`` / ``igs.bytes_out`` and, where
a Switch or Splitter chose, ``igs.route`` (on the node: the step taken) and ``igs.route.taken``
(on that step). The trace id is the run's id; span ids are derived from the call ids
(:mod:`execution.engine.tracecontext`), which is also what the engine sent in ``traceparent``, so
the spans a model server makes nest under the step call that reached it.

:func:`run_trace_otlp` answers OTLP JSON (``GET /api/runs/{id}/trace/``); :func:`export_run`
sends the same spans through the OpenTelemetry SDK's OTLP/HTTP exporter, which the worker does
after a run ends when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``…_TRACES_ENDPOINT``) is set.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.conf import settings
from django.db import close_old_connections

from execution.engine.tracecontext import RUN_SPAN_KEY, span_id_for
from execution.models import Run, RunEvent

__all__ = [
    "SERVICE_NAME",
    "RunInfo",
    "Span",
    "export_enabled",
    "export_run",
    "export_run_later",
    "run_spans",
    "run_trace_otlp",
    "spans_from_events",
    "spans_to_otlp",
]

logger = logging.getLogger(__name__)

SERVICE_NAME: Final = "inference-graph-studio"
_SCOPE: Final = "execution.tracing"
AttrValue = str | int | float | bool

# OTLP's SpanKind numbers (opentelemetry/proto/trace/v1/trace.proto).
_KIND_NUMBER: Final = {"internal": 1, "server": 2, "client": 3}
# OTLP's Status.code numbers: UNSET 0, OK 1, ERROR 2.
_STATUS_NUMBER: Final = {"unset": 0, "ok": 1, "error": 2}
# Events read from the database per round trip when a run's spans are derived.
_EVENT_CHUNK: Final = 500
# The events spans are made of (the others say nothing about the calls' times or tree).
_SPAN_EVENTS: Final = ("node.started", "node.finished", "step.started", "step.finished", "route.decided")


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the run span says of the run itself."""

    run_id: str
    graph: str
    version: int
    environment: str
    status: str
    status_code: int | None
    error: str
    created: float
    started: float | None
    finished: float | None


@dataclass(slots=True)
class Span:
    """One span; times in seconds since the epoch. ``status`` is ``ok``, ``error`` or ``unset``."""

    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start: float
    end: float
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    status: str = "unset"
    message: str = ""


def _size(view: Any) -> int | None:
    if isinstance(view, Mapping) and isinstance(view.get("size"), int):
        return int(view["size"])
    return None


def _finish(span: Span, data: Mapping[str, Any], at: float, bytes_key: str) -> None:
    span.end = max(at, span.start)
    outcome = data.get("outcome")
    if outcome is not None:
        span.attributes["igs.outcome"] = str(outcome)
    status = data.get("status")
    if isinstance(status, int):
        span.attributes["igs.status"] = status
        if span.kind == "client":
            span.attributes["http.response.status_code"] = status
    size = _size(data.get(bytes_key))
    if size is not None:
        span.attributes["igs.bytes_out"] = size
    if outcome == "ok":
        span.status = "ok"
    elif outcome is not None:
        span.status = "error"
        span.message = str(data.get("error") or (f"HTTP {status}" if status is not None else outcome))


def spans_from_events(trace_id: str, info: RunInfo, events: Iterable[Mapping[str, Any]]) -> list[Span]:
    """The spans of a run from its stored events, in the order they began (the run's first).

    ``events`` are ``{"type", "data", "created_at"}`` (``created_at`` in seconds since the epoch;
    an engine event's own ``at`` is preferred). A call whose ending was never stored (a worker
    that died) ends where the run's trace ends, with status ``error`` and ``igs.unfinished``.
    Pure: reads nothing else.
    """
    run_span_id = span_id_for(trace_id, "", RUN_SPAN_KEY)
    base: dict[str, AttrValue] = {"igs.graph": info.graph, "igs.version": info.version}
    nodes: dict[tuple[int, str], Span] = {}
    steps: dict[tuple[int, str], Span] = {}
    order: list[Span] = []
    first = info.started if info.started is not None else info.created
    last = info.finished if info.finished is not None else first

    for event in events:
        data: Mapping[str, Any] = event.get("data") or {}
        at = data.get("at")
        at = float(at) if isinstance(at, (int, float)) else float(event["created_at"])
        first, last = min(first, at), max(last, at)
        kind = event["type"]
        if kind not in _SPAN_EVENTS:
            continue
        attempt = int(data.get("attempt") or 1)
        salt = str(attempt)
        call_id = str(data.get("call_id") or "")
        if kind == "node.started":
            parent_call = data.get("parent_call_id")
            parent_id = run_span_id
            if parent_call:
                caller = steps.get((attempt, parent_call))
                parent_id = caller.span_id if caller else span_id_for(trace_id, salt, parent_call)
            node = str(data.get("node") or "")
            span = Span(
                span_id_for(trace_id, salt, call_id),
                parent_id,
                f"node {node}",
                "internal",
                at,
                at,
                {**base, "igs.node": node, "igs.call_id": call_id, "igs.attempt": attempt},
            )
            if data.get("router_type"):
                span.attributes["igs.router_type"] = str(data["router_type"])
            size = _size(data.get("input"))
            if size is not None:
                span.attributes["igs.bytes_in"] = size
            nodes[(attempt, call_id)] = span
            order.append(span)
        elif kind == "step.started":
            node_call = call_id.rsplit("/", 1)[0]
            node = str(data.get("node") or "")
            step_name = data.get("step_name")
            index = data.get("step_index")
            label = str(step_name) if step_name else str(index)
            span_id = data.get("span_id") or span_id_for(trace_id, salt, call_id)
            http = data.get("kind") == "http"
            span = Span(
                str(span_id),
                span_id_for(trace_id, salt, node_call),
                f"step {node}/{label}",
                "client" if http else "internal",
                at,
                at,
                {
                    **base,
                    "igs.node": node,
                    "igs.step": label,
                    "igs.call_id": call_id,
                    "igs.attempt": attempt,
                    "igs.target": str(data.get("target") or ""),
                },
            )
            if isinstance(index, int):
                span.attributes["igs.step.index"] = index
            if http:
                span.attributes["http.request.method"] = str(data.get("method") or "POST")
                span.attributes["url.full"] = str(data.get("url") or data.get("target") or "")
            size = _size(data.get("request"))
            if size is not None:
                span.attributes["igs.bytes_in"] = size
            node_span = nodes.get((attempt, node_call))
            if node_span is not None and node_span.attributes.get("igs.route.chosen") == index:
                span.attributes["igs.route.taken"] = True
            steps[(attempt, call_id)] = span
            order.append(span)
        elif kind == "step.finished":
            step_span = steps.get((attempt, call_id))
            if step_span is not None:
                _finish(step_span, data, at, "response")
                step_span.attributes["igs.finished"] = True
        elif kind == "node.finished":
            node_span = nodes.get((attempt, call_id))
            if node_span is not None:
                _finish(node_span, data, at, "output")
                node_span.attributes["igs.finished"] = True
        else:  # route.decided: call_id is the node's
            node_span = nodes.get((attempt, call_id))
            chosen = data.get("chosen")
            if node_span is not None and isinstance(chosen, int):
                node_span.attributes["igs.route.chosen"] = chosen
                node_span.attributes["igs.route"] = f"step {chosen}"
            elif node_span is not None and data.get("decision"):
                node_span.attributes["igs.route"] = str(data["decision"])

    for span in order:
        if span.attributes.pop("igs.finished", None) is None:
            span.end = max(last, span.start)
            span.status, span.message = "error", "not finished (the run ended first)"
            span.attributes["igs.unfinished"] = True
    run_span = Span(
        run_span_id,
        None,
        f"run {info.graph} v{info.version}",
        "server",
        first,
        max(last, first),
        {**base, "igs.run_id": info.run_id, "igs.environment": info.environment, "igs.status": info.status},
    )
    if info.status_code is not None:
        run_span.attributes["http.response.status_code"] = info.status_code
    if info.status == "succeeded":
        run_span.status = "ok"
    elif info.status in ("failed", "cancelled"):
        run_span.status, run_span.message = "error", info.error or info.status
    return [run_span, *order]


def _epoch(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def run_spans(run: Run) -> tuple[str, list[Span]]:
    """The trace id and spans of ``run`` (any state), read from its stored events in chunks."""
    info = RunInfo(
        run_id=str(run.pk),
        graph=run.graph.name,
        version=run.version.number,
        environment=run.environment_name,
        status=run.status,
        status_code=run.response_status,
        error=run.error,
        created=run.created_at.timestamp(),
        started=_epoch(run.started_at),
        finished=_epoch(run.finished_at),
    )
    rows = (
        RunEvent.objects.filter(run_id=run.pk, type__in=_SPAN_EVENTS)
        .order_by("seq")
        .values_list("type", "data", "created_at")
        .iterator(chunk_size=_EVENT_CHUNK)
    )
    events = ({"type": t, "data": d, "created_at": c.timestamp()} for t, d, c in rows)
    trace_id = run.pk.hex
    return trace_id, spans_from_events(trace_id, info, events)


def _otlp_value(value: AttrValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 is a string in OTLP JSON
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _nanos(seconds: float) -> str:
    return str(round(seconds * 1_000_000_000))


def spans_to_otlp(trace_id: str, spans: Iterable[Span]) -> dict[str, Any]:
    """OTLP JSON (``ExportTraceServiceRequest``) of ``spans``: what an OTLP/HTTP JSON receiver
    takes, and what Jaeger, Tempo and the collector's file receiver load."""
    out = []
    for span in spans:
        item: dict[str, Any] = {
            "traceId": trace_id,
            "spanId": span.span_id,
            "parentSpanId": span.parent_span_id or "",
            "name": span.name,
            "kind": _KIND_NUMBER[span.kind],
            "startTimeUnixNano": _nanos(span.start),
            "endTimeUnixNano": _nanos(span.end),
            "attributes": [{"key": k, "value": _otlp_value(v)} for k, v in span.attributes.items()],
            "status": {"code": _STATUS_NUMBER[span.status]},
        }
        if span.message:
            item["status"]["message"] = span.message
        out.append(item)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": SERVICE_NAME}}]},
                "scopeSpans": [{"scope": {"name": _SCOPE}, "spans": out}],
            }
        ]
    }


def run_trace_otlp(run: Run) -> dict[str, Any]:
    """``run``'s trace as OTLP JSON."""
    trace_id, spans = run_spans(run)
    return spans_to_otlp(trace_id, spans)


# -- export through the OpenTelemetry SDK ----------------------------------------------------------


def export_enabled() -> bool:
    """Whether an OTLP endpoint is configured (the SDK's standard variables); nothing is sent
    otherwise."""
    return bool(
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def readable_spans(trace_id: str, spans: Iterable[Span]) -> list[Any]:
    """The SDK's ``ReadableSpan`` of each span, for any ``SpanExporter``."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    kinds = {"internal": SpanKind.INTERNAL, "server": SpanKind.SERVER, "client": SpanKind.CLIENT}
    codes = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
    resource = Resource.create({"service.name": SERVICE_NAME})
    scope = InstrumentationScope(_SCOPE)
    trace = int(trace_id, 16)
    flags = TraceFlags(TraceFlags.SAMPLED)

    def context(span_id: str) -> SpanContext:
        return SpanContext(trace, int(span_id, 16), is_remote=False, trace_flags=flags)

    return [
        ReadableSpan(
            name=span.name,
            context=context(span.span_id),
            parent=context(span.parent_span_id) if span.parent_span_id else None,
            resource=resource,
            attributes=span.attributes,
            kind=kinds[span.kind],
            instrumentation_scope=scope,
            status=Status(codes[span.status], span.message or None)
            if span.status == "error"
            else Status(codes[span.status]),
            start_time=round(span.start * 1_000_000_000),
            end_time=round(span.end * 1_000_000_000),
        )
        for span in spans
    ]


def export_run(run_id: str, exporter: Any = None) -> bool:
    """Send run ``run_id``'s trace through ``exporter`` (an SDK ``SpanExporter``; by default the
    OTLP/HTTP exporter configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables, bounded by
    ``TRACE_EXPORT_TIMEOUT`` seconds). Returns whether the exporter took it; never raises for a
    failed export (it is logged): a run's outcome does not depend on a tracing backend."""
    try:
        run = Run.objects.select_related("graph", "version").get(pk=run_id)
        trace_id, spans = run_spans(run)
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(timeout=settings.TRACE_EXPORT_TIMEOUT)
            try:
                result = exporter.export(readable_spans(trace_id, spans))
            finally:
                exporter.shutdown()
        else:
            result = exporter.export(readable_spans(trace_id, spans))
    except Exception:
        logger.exception("run %s: its trace could not be exported", run_id)
        return False
    ok = getattr(result, "name", "") == "SUCCESS"
    if not ok:
        logger.warning("run %s: the trace exporter answered %s", run_id, result)
    return ok


# One thread per worker process exports finished runs' traces, so a slow or absent backend never
# holds up the thread that runs graphs; past this many waiting runs, traces are dropped (logged).
_EXPORT_QUEUE_MAX: Final = 1000
_export_queue: queue.Queue[str] = queue.Queue(maxsize=_EXPORT_QUEUE_MAX)
_export_thread: threading.Thread | None = None
_export_lock = threading.Lock()


def _export_loop() -> None:
    while True:
        run_id = _export_queue.get()
        try:
            close_old_connections()
            export_run(run_id)
        finally:
            _export_queue.task_done()


def export_run_later(run_id: str) -> bool:
    """Queue run ``run_id``'s trace for export when an OTLP endpoint is configured (else do
    nothing). Returns whether it was queued."""
    global _export_thread
    if not export_enabled():
        return False
    with _export_lock:
        if _export_thread is None or not _export_thread.is_alive():
            _export_thread = threading.Thread(target=_export_loop, name="trace-export", daemon=True)
            _export_thread.start()
    try:
        _export_queue.put_nowait(str(run_id))
    except queue.Full:
        logger.warning(
            "run %s: %d traces wait for export already; this one is dropped", run_id, _EXPORT_QUEUE_MAX
        )
        return False
    return True


def export_idle(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for the queued exports to be done (tests, a stopping worker)."""
    done = threading.Event()

    def wait() -> None:
        _export_queue.join()
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    return done.wait(timeout)
