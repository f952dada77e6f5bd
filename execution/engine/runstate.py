"""The state of one run: the result, the routing error, the per-run state shared by every
coroutine and where a node invocation sits in the call path."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from execution.engine.config import EngineConfig
from execution.engine.goports.gojson import (
    GoJsonError,
    go_json_dumps,
    go_unmarshal_predictions,
)
from execution.engine.headers import CompiledPatterns
from execution.engine.trace import EventCallback, TraceEvent, body_view
from graphs.language.model import Manifest, Step
from graphs.language.releases import Release

logger = logging.getLogger(__name__)

NO_MATCH: Final = "None of the routes matched with the switch condition"
NO_SPLIT: Final = "no route was selected by the splitter"
INVALID_RESPONSE: Final = "invalid response"
_ERROR_PREFIX: Final = b'{"error":"Failed to process request","cause":'
Clock = Callable[[], float]
HeadersIn = Mapping[str, str | list[str]] | Iterable[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class GraphResult:
    """What the router would answer: status, body bytes, Content-Type, and the trace.

    ``error`` is the cause when the body is the router's error JSON, else None.
    """

    status: int
    body: bytes
    content_type: str | None
    error: str | None = None
    trace: tuple[TraceEvent, ...] = ()
    warnings: tuple[str, ...] = ()


class RouteError(Exception):
    """A routing error (Go's ``err != nil``): becomes the error JSON with ``status``."""

    def __init__(self, status: int, cause: str) -> None:
        super().__init__(cause)
        self.status = status
        self.cause = cause


def error_body(cause: str) -> bytes:
    """The router's error JSON, fields in Go's order: ``{"error":…,"cause":…}``."""
    return _ERROR_PREFIX + go_json_dumps(cause) + b"}"


def release_crash(release: Release, what: str) -> str:
    """The cause the engine answers where ``release``'s router panics and closes the connection
    without an answer (a deliberate deviation: the client learns why)."""
    return f"{what} (KServe {release.name} crashes here and closes the connection)"


def _ok(status: int) -> bool:
    return 200 <= status <= 299


def _outcome(status: int) -> str:
    return "ok" if _ok(status) else "http-error"


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _tighter(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def map_predictions_to_instances(body: bytes) -> bytes:
    """KServe's ``mapPredictionsToInstances`` rewrite (docs/router-semantics.md, Sequence).

    Go decodes the body into ``struct{Predictions, Instances []any}``; when that succeeds and
    ``predictions`` is a non-empty array, the result is ``{"instances": predictions}`` re-encoded by
    Go, every other key dropped. Otherwise (any decode error included) the body is unchanged.
    """
    try:
        predictions = go_unmarshal_predictions(body)
    except GoJsonError:
        return body
    if not predictions:
        return body
    return go_json_dumps({"instances": predictions})


@dataclass(slots=True)
class _Run:
    """Per-run state shared by every coroutine of one graph execution."""

    manifest: Manifest
    config: EngineConfig
    client: httpx.AsyncClient
    emit_to: EventCallback | None
    rng: random.Random
    clock: Clock
    headers: tuple[tuple[str, str], ...]
    propagate: CompiledPatterns
    step_timeout: float | None
    deadline: float
    namespace: str
    redact: frozenset[str]
    events: list[TraceEvent] | None = field(default_factory=list)  # None: the trace is not kept
    seq: int = 0
    deadline_hit: bool = False
    empty_node: str | None = None  # the last zero-step Sequence that answered (status 0)
    # The task running the root node: what :meth:`stop` cancels.
    root: asyncio.Task[Any] | None = None
    # Why the run was stopped before the graph answered (its deadline or a limit), and the status
    # it then answers with; None while it runs on.
    stop_cause: str | None = None
    stop_status: int = 500
    node_calls: int = 0  # nested node invocations so far: numbers their call ids
    step_calls: int = 0
    event_bytes: int = 0  # about the JSON size of the events reported so far (max_event_bytes)

    def stop(self, status: int, cause: str, *, deadline: bool = False) -> None:
        """End the run now with ``status`` and ``cause``: every call in flight is cancelled (each
        reports its ending), and no call is made after this. The first stop wins; a stop after
        the graph answered changes nothing."""
        if self.stop_cause is not None or self.root is None or self.root.done():
            return
        self.stop_cause, self.stop_status, self.deadline_hit = cause, status, deadline
        self.root.cancel()

    def limit_name(self, limit: str) -> str:
        return self.config.limit_names.get(limit, limit)

    def count_step_call(self) -> None:
        """Count a step call about to be made; raises :class:`asyncio.CancelledError` instead when
        the run was stopped or this call would pass ``max_step_calls`` (which stops it)."""
        if self.stop_cause is not None:
            raise asyncio.CancelledError  # stopped: the calls still running unwind, none starts
        self.step_calls += 1
        limit = self.config.max_step_calls
        if limit is not None and self.step_calls > limit:
            self.stop(500, f"stopped after {limit:,} step calls ({self.limit_name('max_step_calls')})")
            raise asyncio.CancelledError

    def emit(
        self,
        type_: str,
        call_id: str,
        parent: str | None,
        node: str | None,
        data: dict[str, Any],
        step: Step | None = None,
        target: str | None = None,
    ) -> None:
        self.seq += 1
        event = TraceEvent(
            type=type_,
            seq=self.seq,
            call_id=call_id,
            parent_call_id=parent,
            node=node,
            step_index=step.index if step is not None else None,
            step_name=step.name if step is not None else None,
            target=target,
            timestamp=self.clock(),
            data=data,
        )
        limit = self.config.max_event_bytes
        if limit is not None:
            self.event_bytes += event_weight(event)
            if self.event_bytes > limit:
                self.stop(
                    500,
                    f"stopped after its trace events passed {_size(limit)} "
                    f"({self.limit_name('max_event_bytes')})",
                )
        if self.events is not None:
            self.events.append(event)
        if self.emit_to is not None:
            try:
                self.emit_to(event)
            except Exception:
                # A failing observer must not change the graph's answer; it is logged instead.
                logger.exception("on_event callback failed for %s %s", type_, call_id)

    def view(self, body: bytes) -> dict[str, Any]:
        return body_view(body, self.config.body_cap)


# What an event's JSON adds beyond its strings (field names, punctuation, numbers, the worker's own
# attempt and at): tests/engine/test_engine_limits.py checks the weight against json.dumps.
_EVENT_OVERHEAD: Final = 200


def event_weight(event: TraceEvent) -> int:
    """About the size of ``event`` as stored JSON, in bytes (characters of its strings, plus a
    fixed allowance per field): cheap enough to take for every event, close enough for a cap."""
    size = _EVENT_OVERHEAD + len(event.call_id) + len(event.parent_call_id or "") + len(event.node or "")
    size += len(event.step_name or "") + len(event.target or "")
    return size + _weight(event.data)


def _weight(value: Any) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, Mapping):
        return 2 + sum(len(key) + 4 + _weight(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return 2 + sum(1 + _weight(item) for item in value)
    return 8


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit:,} bytes"


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a node invocation sits: its call id, the step that called it, the caller's frame.

    ``path`` is the invocation's call id (:func:`node_call_id`): short, whatever the depth.

    ``node`` and ``data`` are this invocation's node and input; ``caller`` links to the invocation
    that called it (None at the root), so the whole call path can be walked for cycle detection.
    """

    path: str
    parent_step: str | None
    node: str
    data: bytes = field(repr=False)
    # Not in the repr: it would print the whole call path, recursively (deep loops made it slow).
    caller: _Where | None = field(default=None, repr=False)
    depth: int = 0
    splitter: bool = False  # this node is a Splitter (its draws may leave a loop)


def node_call_id(run: _Run, node_name: str) -> str:
    """The call id of a nested invocation of ``node_name``: ``<node>#<n>``, ``n`` counting the
    run's nested node invocations from 1 (the root invocation is ``root``). Bounded whatever the
    depth: the structure is in each event's ``parent_call_id``, not in the id."""
    run.node_calls += 1
    return f"{node_name}#{run.node_calls}"


def _is_splitter(run: _Run, node_name: str) -> bool:
    """Whether ``node_name`` is a Splitter whose draws can lead to more than one outcome on the run's
    release (a way out of a loop). One that always picks the same route (a single reachable range,
    such as one step of weight 100) is as deterministic as any other node."""
    node = run.manifest.spec.nodes.get(node_name)
    if node is None or node.router_type != "Splitter":
        return False
    draws = run.config.release.splitter_draws
    outcomes = 0
    start = 0
    for step in node.steps:
        if step.weight is None or step.weight < 0:
            return True  # the draw decides whether this step is reached (and fails); be safe
        end = start + step.weight
        outcomes += 1 if min(end, draws) > start else 0
        start = max(start, end)
    return outcomes + (1 if start < draws else 0) > 1


def _repeats(where: _Where) -> list[str] | None:
    """The node cycle this invocation closes, or None when it does not close one.

    A cycle is closed when the same node is entered again on its own call path *with the same input*
    and no Splitter sits on the path in between: from there KServe's router, which is deterministic
    apart from Splitters, would repeat the same calls until its stack overflows (it crashes). A
    node re-entered with another input, or through a Splitter, may leave the loop, and does in
    KServe, so it runs on.
    """
    frame = where.caller
    while frame is not None:
        if frame.splitter:
            return None
        if frame.node == where.node and frame.data == where.data:
            names = [where.node]
            inner: _Where | None = where.caller
            while inner is not None and inner is not frame:
                names.append(inner.node)
                inner = inner.caller
            return [frame.node, *names[::-1]]
        frame = frame.caller
    return None


def _step_target(run: _Run, step: Step) -> str:
    if step.node_name:
        return step.node_name
    if step.service_url:
        return step.service_url
    if step.service_name:
        mapped = run.config.service_urls.get(step.service_name)
        if mapped is not None:
            return mapped
        return run.config.url_template.replace("{name}", step.service_name).replace(
            "{namespace}", run.namespace
        )
    return ""  # Go posts to "" and fails with: unsupported protocol scheme ""
