"""The interpreter: run one request through an InferenceGraph with KServe router semantics.

This follows ROUTER-SEMANTICS §2.15 (the reference algorithm) step for step, plus the project's
deliberate deviations: cycles, zero-step Sequences and the whole-request deadline answer with an
error body instead of crashing or dropping the connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from execution.engine.conditions import ConditionResult, document_is_valid, evaluate_condition
from execution.engine.config import DEFAULT_DEADLINE_S, REDACTED, EngineConfig
from execution.engine.goerrors import go_url_error
from execution.engine.gojson import (
    GoJsonError,
    go_json_dumps,
    go_unmarshal_object,
    go_unmarshal_predictions,
)
from execution.engine.headers import CompiledPatterns, compile_patterns, normalise_headers, propagated_headers
from execution.engine.http import make_client
from execution.engine.outbound import ServiceCallError, call_service
from execution.engine.sniff import JSON_CONTENT_TYPE, response_content_type
from execution.engine.trace import EventCallback, TraceEvent, body_view
from graphs.spec.model import RESPONSE_DATA, ROOT_NODE, Manifest, Node, Step

__all__ = [
    "NO_MATCH",
    "GraphResult",
    "error_body",
    "map_predictions_to_instances",
    "run_graph",
    "run_graph_sync",
]

logger = logging.getLogger(__name__)

NO_MATCH: Final = "None of the routes matched with the switch condition"
NO_SPLIT: Final = "no route was selected by the splitter"
INVALID_RESPONSE: Final = "invalid response"
_ERROR_PREFIX: Final = b'{"error":"Failed to process request","cause":'
# Raw condition values in the trace: enough to recognise the match, not a copy of the document.
_RAW_CAP: Final = 1024
# Nested node calls run as a new task every this many levels: a level is four coroutine frames, so
# 32 levels stay far below Python's default recursion limit of 1,000 frames.
_FRESH_STACK_EVERY: Final = 32
# Node calls nested deeper than this end the request. A graph has at most 2,000 nodes
# (graphs.spec.MAX_GRAPH_NODES), so only a loop gets here: one fed a new input every round, which
# KServe follows until its stack overflows (a crash). 10,000 rounds is far past any loop that ends.
MAX_CALL_DEPTH: Final = 10_000

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


async def _route(run: _Run, node_name: str, data: bytes, where: _Where) -> tuple[bytes, int]:
    """``routeStep``: run one node on ``data``. Raises :class:`RouteError` for routing errors."""
    node = run.manifest.spec.nodes.get(node_name)
    started = run.clock()
    run.emit(
        "node.started",
        where.path,
        where.parent_step,
        node_name,
        {
            "router_type": node.router_type if node is not None else None,
            "input": run.view(data),
            "depth": where.depth,
        },
    )
    try:
        if where.caller is not None and (cycle := _repeats(where)) is not None:
            # Deliberate deviation: KServe recurses until its stack overflows and drops the connection.
            raise RouteError(500, "cycle detected: " + " -> ".join(cycle))
        if where.depth > MAX_CALL_DEPTH:
            # Deliberate deviation, as above: a loop whose input changes every round.
            raise RouteError(500, f"node calls nested deeper than {MAX_CALL_DEPTH} levels (a loop?)")
        if node is None:
            raise RouteError(500, "invalid route type: ")
        body, status = await _dispatch(run, node, data, where)
    except RouteError as exc:
        _node_finished(run, node_name, where, started, None, None, "error", exc.cause)
        raise
    except asyncio.CancelledError:
        outcome = "timeout" if run.deadline_hit else "cancelled"
        _node_finished(run, node_name, where, started, None, None, outcome, None)
        raise
    _node_finished(run, node_name, where, started, status, body, _outcome(status), None)
    return body, status


def _node_finished(
    run: _Run,
    node_name: str,
    where: _Where,
    started: float,
    status: int | None,
    body: bytes | None,
    outcome: str,
    error: str | None,
) -> None:
    data: dict[str, Any] = {
        "status": status,
        "outcome": outcome,
        "error": error,
        "duration_ms": round((run.clock() - started) * 1000, 3),
    }
    if body is not None:
        data["output"] = run.view(body)
    run.emit("node.finished", where.path, where.parent_step, node_name, data)


async def _dispatch(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    kind = node.router_type
    if kind == "Sequence":
        return await _sequence(run, node, data, where)
    if kind == "Switch":
        return await _switch(run, node, data, where)
    if kind == "Ensemble":
        return await _ensemble(run, node, data, where)
    if kind == "Splitter":
        return await _splitter(run, node, data, where)
    raise RouteError(500, f"invalid route type: {kind or ''}")


# --- routers --------------------------------------------------------------------------------------


async def _sequence(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    if not node.steps:
        # KServe returns (nil, 0, nil): an Ensemble above fails to decode the empty body, a Soft step
        # of a Sequence goes on; only where the status 0 reaches the client does KServe crash.
        run.empty_node = node.name
        return b"", 0
    prev_body = b""
    prev_status = 0
    for i, step in enumerate(node.steps):
        request = prev_body if (step.data == RESPONSE_DATA and i > 0) else data
        if step.map_predictions_to_instances:
            request = map_predictions_to_instances(request)
        matched: ConditionResult | None = None
        if step.condition:
            if not document_is_valid(prev_body):
                _sequence_stop(
                    run, node, where, i, step, INVALID_RESPONSE, prev_body, None, "invalid-response"
                )
                raise RouteError(500, INVALID_RESPONSE)
            result = evaluate_condition(prev_body, step.condition, valid=True)
            if not result.matches:
                _sequence_stop(
                    run, node, where, i, step, "condition-unmet", prev_body, result, "condition-unmet"
                )
                return prev_body, 200
            matched = result
        try:
            prev_body, prev_status = await _call_step(run, node, step, request, where, matched)
        except RouteError:
            _skip_rest(run, node, where, i + 1, "after-error")
            raise
        if step.is_hard and not _ok(prev_status):
            skipped = _skip_rest(run, node, where, i + 1, "after-hard-failure")
            run.emit(
                "route.decided",
                where.path,
                where.parent_step,
                node.name,
                {
                    "router": "Sequence",
                    "decision": "stop",
                    "reason": "hard-failure",
                    "step_index": i,
                    "status": prev_status,
                    "skipped": skipped,
                },
            )
            return prev_body, prev_status
    return prev_body, prev_status


def _condition_data(step: Step, result: ConditionResult | None) -> dict[str, Any]:
    raw = result.raw if result is not None else None
    if raw is not None and len(raw) > _RAW_CAP:
        raw = raw[:_RAW_CAP]
    return {
        "condition": step.condition,
        "matches": result.matches if result is not None else False,
        "raw": raw,
        "reason": result.reason if result is not None else None,
    }


def _sequence_stop(
    run: _Run,
    node: Node,
    where: _Where,
    index: int,
    step: Step,
    reason: str,
    prev_body: bytes,
    result: ConditionResult | None,
    skip_reason: str,
) -> None:
    cond = _condition_data(step, result)
    run.emit(
        "step.skipped",
        f"{where.path}/{step.index}",
        where.parent_step,
        node.name,
        {"reason": skip_reason, "condition": cond},
        step,
    )
    skipped = [index, *_skip_rest(run, node, where, index + 1, "after-unmet-condition")]
    run.emit(
        "route.decided",
        where.path,
        where.parent_step,
        node.name,
        {
            "router": "Sequence",
            "decision": "stop",
            "reason": reason,
            "step_index": index,
            "condition": step.condition,
            "matches": cond["matches"],
            "raw": cond["raw"],
            "evaluated": run.view(prev_body),
            "skipped": skipped,
        },
    )


def _skip_rest(run: _Run, node: Node, where: _Where, start: int, reason: str) -> list[int]:
    skipped: list[int] = []
    for step in node.steps[start:]:
        skipped.append(step.index)
        run.emit(
            "step.skipped",
            f"{where.path}/{step.index}",
            where.parent_step,
            node.name,
            {"reason": reason},
            step,
        )
    return skipped


async def _switch(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    valid = document_is_valid(data)
    conditions: list[dict[str, Any]] = []
    chosen: Step | None = None
    for step in node.steps:
        result = evaluate_condition(data, step.condition or "", valid=True) if valid else None
        entry = {"index": step.index, "name": step.name, **_condition_data(step, result)}
        if result is None:
            entry["reason"] = "input is not valid JSON"
        conditions.append(entry)
        if chosen is None and result is not None and result.matches:
            chosen = step
    run.emit(
        "route.decided",
        where.path,
        where.parent_step,
        node.name,
        {
            "router": "Switch",
            "valid_json": valid,
            "conditions": conditions,
            "chosen": chosen.index if chosen is not None else None,
        },
    )
    if chosen is None:
        raise RouteError(404, NO_MATCH)
    return await _call_step(run, node, chosen, data, where, None)


async def _splitter(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    draw = run.rng.randrange(100)  # uniform in [0, 100), KServe v0.19+
    cumulative: list[int] = []
    total = 0
    chosen: Step | None = None
    for step in node.steps:
        if step.weight is None and chosen is None:
            # Deliberate deviation: KServe dereferences the nil weight and crashes (the webhook
            # refuses such a graph; a test run may still meet one). Past the chosen step Go stops.
            raise RouteError(500, f'step {step.label} of Splitter node "{node.name}" has no weight')
        total += step.weight or 0
        cumulative.append(total)
        if chosen is None and draw < total:
            chosen = step
    run.emit(
        "route.decided",
        where.path,
        where.parent_step,
        node.name,
        {
            "router": "Splitter",
            "draw": draw,
            "weights": [step.weight for step in node.steps],
            "cumulative": cumulative,
            "chosen": chosen.index if chosen is not None else None,
        },
    )
    if chosen is None:
        raise RouteError(500, NO_SPLIT)
    return await _call_step(run, node, chosen, data, where, None)


async def _ensemble(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    """KServe's Ensemble, including the order in which its goroutines' answers are received.

    Every step runs concurrently and decodes its body into an object. Go then receives the results
    in step index order, but each wait also listens on one channel shared by every step's errors: an
    error (a routing error or a body that is not an object) of *any* step that arrives before the
    awaited step's result ends the node with 500 and that error's cause. So a fast failing step
    beats a slow Hard failure, and the first error to arrive names the cause. Where Go would find
    both ready at once (its ``select`` then picks at random), the one that finished first wins.
    """
    if not node.steps:
        return b"{}", 200

    async def member(step: Step) -> tuple[dict[str, Any] | None, int]:
        body, status = await _call_step(run, node, step, data, where, None)
        return go_unmarshal_object(body), status

    tasks = [asyncio.create_task(member(step)) for step in node.steps]
    finished: dict[asyncio.Task[Any], int] = {}  # task -> position in the order of completion

    def record(task: asyncio.Task[Any]) -> None:
        finished[task] = len(finished)

    for task in tasks:
        task.add_done_callback(record)
    try:
        merged: dict[str, Any] = {}
        first_error: asyncio.Task[Any] | None = None
        for i, (step, task) in enumerate(zip(node.steps, tasks, strict=True)):
            while True:
                if first_error is None:
                    first_error = _first_failed(finished)
                if first_error is not None and (
                    task not in finished or finished[first_error] <= finished[task]
                ):
                    exc = first_error.exception()
                    cause = exc.cause if isinstance(exc, RouteError) else str(exc)
                    failed = tasks.index(first_error)
                    _ensemble_decided(
                        run,
                        node,
                        where,
                        failed,
                        node.steps[failed],
                        tasks,
                        {"decision": "error", "error": cause},
                    )
                    raise RouteError(500, cause)
                if task in finished:
                    break
                await asyncio.wait(
                    [t for t in tasks if t not in finished], return_when=asyncio.FIRST_COMPLETED
                )
            parsed, status = task.result()
            if step.is_hard and not _ok(status):
                _ensemble_decided(
                    run, node, where, i, step, tasks, {"decision": "hard-failure", "status": status}
                )
                return go_json_dumps(parsed), status
            merged[step.key] = parsed
        return go_json_dumps(merged), 200
    finally:
        # Abandoned steps (after an error or a Hard failure, or on cancellation) are cancelled, and
        # every task is awaited so that its events are out and no exception goes unretrieved.
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _first_failed(finished: Mapping[asyncio.Task[Any], int]) -> asyncio.Task[Any] | None:
    """The earliest finished task that failed with a routing or decode error, if any."""
    failed = [
        task
        for task in finished
        if not task.cancelled() and isinstance(task.exception(), (RouteError, GoJsonError))
    ]
    return min(failed, key=finished.__getitem__) if failed else None


def _ensemble_decided(
    run: _Run,
    node: Node,
    where: _Where,
    index: int,
    step: Step,
    tasks: list[asyncio.Task[Any]],
    data: dict[str, Any],
) -> None:
    abandoned = [i for i, task in enumerate(tasks) if not task.done()]
    run.emit(
        "route.decided",
        where.path,
        where.parent_step,
        node.name,
        {"router": "Ensemble", **data, "step_index": index, "step_name": step.key, "abandoned": abandoned},
    )


# --- step calls -----------------------------------------------------------------------------------


async def _call_step(
    run: _Run, node: Node, step: Step, request: bytes, where: _Where, matched: ConditionResult | None
) -> tuple[bytes, int]:
    """``executeStep``: a nested node or an HTTP POST; a nested error becomes a 500 here."""
    call_id = f"{where.path}/{step.index}"
    target = _step_target(run, step)
    started = run.clock()
    started_data: dict[str, Any] = {"request": run.view(request)}
    finished_data: dict[str, Any] = {}  # what the call adds to step.finished (its redirects)
    if matched is not None:
        started_data["condition"] = _condition_data(step, matched)
    try:
        if step.node_name:
            started_data["kind"] = "node"
            run.emit("step.started", call_id, where.parent_step, node.name, started_data, step, target)
            inner = _Where(
                f"{call_id}>{step.node_name}",
                call_id,
                step.node_name,
                request,
                where,
                where.depth + 1,
                _is_splitter(run, step.node_name),
            )
            nested = _route(run, step.node_name, request, inner)
            try:
                if inner.depth % _FRESH_STACK_EVERY == 0:
                    # A deep chain of nodeName calls would exhaust Python's recursion limit (each
                    # level is four coroutine frames); a task starts on a fresh stack.
                    body, status = await asyncio.create_task(nested)
                else:
                    body, status = await nested
            except RouteError as exc:
                raise RouteError(500, exc.cause) from None
            content_type = response_content_type(body)
        else:
            body, status, content_type = await _post(
                run, call_id, where, node, step, target, request, started_data, finished_data
            )
    except RouteError as exc:
        _step_finished(
            run, call_id, where, node, step, target, started, None, None, None, "error", exc.cause,
            finished_data,
        )  # fmt: skip
        raise
    except asyncio.CancelledError:
        outcome = "timeout" if run.deadline_hit else "cancelled"
        cause = f"graph deadline of {_seconds(run.deadline)} s exceeded" if run.deadline_hit else None
        _step_finished(run, call_id, where, node, step, target, started, None, None, None, outcome, cause)
        raise
    _step_finished(
        run, call_id, where, node, step, target, started, status, body, content_type, _outcome(status), None,
        finished_data,
    )  # fmt: skip
    return body, status


def _step_finished(
    run: _Run,
    call_id: str,
    where: _Where,
    node: Node,
    step: Step,
    target: str,
    started: float,
    status: int | None,
    body: bytes | None,
    content_type: str | None,
    outcome: str,
    error: str | None,
    extra: dict[str, Any] | None = None,
) -> None:
    data: dict[str, Any] = {
        "status": status,
        "response": run.view(body) if body is not None else None,
        "content_type": content_type,
        "duration_ms": round((run.clock() - started) * 1000, 3),
        "outcome": outcome,
        "error": error,
        **(extra or {}),
    }
    run.emit("step.finished", call_id, where.parent_step, node.name, data, step, target)


async def _post(
    run: _Run,
    call_id: str,
    where: _Where,
    node: Node,
    step: Step,
    url: str,
    request: bytes,
    started_data: dict[str, Any],
    finished_data: dict[str, Any],
) -> tuple[bytes, int, str | None]:
    """``callService``: POST ``request`` to ``url``; returns (body, status, step content type).

    Redirects are followed as Go's client does (:func:`~execution.engine.outbound.call_service`);
    the hops go to ``finished_data["redirects"]`` for the step's ``step.finished`` event.
    """
    headers = propagated_headers(run.headers, run.propagate)
    started_data.update(
        {
            "kind": "http",
            "method": "POST",
            "url": url,
            "headers": [[name, REDACTED if name in run.redact else value] for name, value in headers],
            "timeout_s": run.step_timeout,
        }
    )
    run.emit("step.started", call_id, where.parent_step, node.name, started_data, step, url)
    problem = go_url_error(url)
    if problem is not None:
        raise RouteError(500, problem)
    # httpx's own per-operation timeouts are a backstop; the Go-like total is call_service's.
    backstop = run.step_timeout if run.step_timeout is not None else run.deadline
    try:
        reply = await call_service(
            run.client, url, request, headers, guard=run.config.guard, timeout=run.step_timeout,
            backstop=backstop, max_response_bytes=run.config.max_response_bytes,
        )  # fmt: skip
    except ServiceCallError as exc:
        finished_data["redirects"] = list(exc.redirects)
        raise RouteError(500, exc.cause) from None
    finished_data["redirects"] = list(reply.redirects)
    return reply.body, reply.status, reply.content_type


# --- entry points ---------------------------------------------------------------------------------


async def run_graph(
    manifest: Manifest,
    body: bytes,
    headers: HeadersIn,
    *,
    config: EngineConfig,
    client: httpx.AsyncClient,
    on_event: EventCallback | None = None,
    rng: random.Random | None = None,
    clock: Clock = time.time,
    keep_trace: bool = True,
) -> GraphResult:
    """Run ``body`` through ``manifest`` starting at node ``root``, as KServe's router would.

    ``headers`` are the client's request headers (any case; list values keep every value).
    Every outcome the router can produce, including routing errors and the deadline (504), is a
    :class:`GraphResult`; nothing is raised for graph or step failures. Trace events go to
    ``on_event`` as they happen and, with ``keep_trace``, into ``GraphResult.trace``.

    Cancelling the calling task cancels the in-flight step calls (each reports ``step.finished``
    with outcome ``cancelled``) and re-raises :class:`asyncio.CancelledError`.
    ``rng`` draws the Splitter route (default: a system-entropy source); ``clock`` stamps events.
    """
    timeouts = manifest.spec.router_timeouts
    service_client = float(timeouts.service_client) if timeouts and timeouts.service_client else None
    server_write = float(timeouts.server_write) if timeouts and timeouts.server_write else None
    deadline = _tighter(config.deadline, server_write) or DEFAULT_DEADLINE_S
    compiled = compile_patterns(tuple(config.propagate_headers))
    warnings = tuple(f"header pattern {pattern!r} skipped: {error}" for pattern, error in compiled.invalid)
    run = _Run(
        manifest=manifest,
        config=config,
        client=client,
        emit_to=on_event,
        rng=rng if rng is not None else random.SystemRandom(),
        clock=clock,
        headers=normalise_headers(headers),
        propagate=compiled,
        step_timeout=_tighter(config.step_timeout, service_client),
        deadline=deadline,
        namespace=config.namespace or manifest.namespace,
        redact=frozenset(config.redact_headers),
        events=[] if keep_trace else None,
    )
    started = clock()
    root = _Where(ROOT_NODE, None, ROOT_NODE, body, splitter=_is_splitter(run, ROOT_NODE))
    inner = asyncio.create_task(_route(run, ROOT_NODE, body, root))

    def on_deadline() -> None:
        run.deadline_hit = True
        inner.cancel()

    timer = asyncio.get_running_loop().call_later(deadline, on_deadline)
    error: str | None = None
    outcome: str
    try:
        out_body, status = await inner
        if status == 0:
            # Deliberate deviation: KServe's WriteHeader(0) panics and the client sees EOF.
            raise RouteError(500, f'node "{run.empty_node}" has no steps')
        content_type = response_content_type(out_body)
        outcome = _outcome(status)
    except RouteError as exc:
        status, error, outcome = exc.status, exc.cause, "error"
        out_body, content_type = error_body(exc.cause), JSON_CONTENT_TYPE
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not run.deadline_hit or (current is not None and current.cancelling()):
            _run_finished(run, started, None, None, b"", None, "cancelled", warnings)
            raise
        error = f"graph deadline of {_seconds(deadline)} s exceeded"
        status, outcome = 504, "timeout"
        out_body, content_type = error_body(error), JSON_CONTENT_TYPE
    finally:
        timer.cancel()
    _run_finished(run, started, status, content_type, out_body, error, outcome, warnings)
    return GraphResult(
        status=status,
        body=out_body,
        content_type=content_type,
        error=error,
        trace=tuple(run.events or ()),
        warnings=warnings,
    )


def _run_finished(
    run: _Run,
    started: float,
    status: int | None,
    content_type: str | None,
    body: bytes,
    error: str | None,
    outcome: str,
    warnings: tuple[str, ...],
) -> None:
    run.emit(
        "run.finished",
        ROOT_NODE,
        None,
        None,
        {
            "status_code": status,
            "content_type": content_type,
            "response": run.view(body),
            "error": error,
            "outcome": outcome,
            "duration_ms": round((run.clock() - started) * 1000, 3),
            "deadline_s": run.deadline,
            "warnings": list(warnings),
        },
    )


def run_graph_sync(
    manifest: Manifest,
    body: bytes,
    headers: HeadersIn,
    *,
    config: EngineConfig,
    client: httpx.AsyncClient | None = None,
    on_event: EventCallback | None = None,
    rng: random.Random | None = None,
    clock: Clock = time.time,
    keep_trace: bool = True,
) -> GraphResult:
    """:func:`run_graph` from synchronous code, on a fresh event loop.

    Without ``client``, one is made with :func:`make_client` from ``config`` and closed afterwards.
    Called from a thread whose event loop is running (a sync wrapper around async code, such as
    Playwright's sync API), it runs the graph on a loop of its own in a helper thread and waits.
    """

    async def main() -> GraphResult:
        if client is not None:
            return await run_graph(
                manifest, body, headers, config=config, client=client, on_event=on_event, rng=rng,
                clock=clock, keep_trace=keep_trace,
            )  # fmt: skip
        async with make_client(
            max_response_bytes=config.max_response_bytes,
            max_run_bytes=config.max_run_bytes,
            guard=config.guard,
        ) as own:
            return await run_graph(
                manifest, body, headers, config=config, client=own, on_event=on_event, rng=rng,
                clock=clock, keep_trace=keep_trace,
            )  # fmt: skip

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()
