"""The state of one run: the result, the routing error, the per-run state shared by every
coroutine and where a node invocation sits in the call path."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from execution.engine.config import EngineConfig
from execution.engine.gojson import (
    GoJsonError,
    go_json_dumps,
    go_unmarshal_predictions,
)
from execution.engine.headers import CompiledPatterns
from execution.engine.trace import EventCallback, TraceEvent, body_view
from graphs.spec.model import Manifest, Step

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


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a node invocation sits: its call path, the step that called it, the caller's frame.

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


def _is_splitter(run: _Run, node_name: str) -> bool:
    node = run.manifest.spec.nodes.get(node_name)
    return node is not None and node.router_type == "Splitter"


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
