"""Calling a node (``routeStep``) and a step (``executeStep``, ``callService``), with their trace
events."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Final

from execution.engine.conditions import ConditionResult
from execution.engine.config import REDACTED
from execution.engine.goports.goerrors import go_url_error
from execution.engine.goports.sniff import response_content_type
from execution.engine.headers import propagated_headers, propagated_headers_exact
from execution.engine.runstate import (
    RouteError,
    _is_splitter,
    _outcome,
    _repeats,
    _Run,
    _seconds,
    _step_target,
    _Where,
    node_call_id,
    release_crash,
)
from execution.engine.transport.outbound import ServiceCallError, call_service
from graphs.language.model import Node, Step

# Raw condition values in the trace: enough to recognise the match, not a copy of the document.
_RAW_CAP: Final = 1024
# Nested node calls run as a new task every this many levels: a level is four coroutine frames, so
# 32 levels stay far below Python's default recursion limit of 1,000 frames.
_FRESH_STACK_EVERY: Final = 32
# Node calls nested deeper than this end the request. A graph has at most 2,000 nodes
# (graphs.language.MAX_GRAPH_NODES), so only a loop gets here: one fed a new input every round, which
# KServe follows until its stack overflows (a crash). 10,000 rounds is far past any loop that ends.
MAX_CALL_DEPTH: Final = 10_000
# go_url_error is pure and a graph calls the same few URLs over and over: parsing each URL once
# instead of on every call was about a tenth of a hop's CPU (bench/bench_engine.py, P3).
_url_problem: Final = functools.lru_cache(maxsize=1024)(go_url_error)
# The client's own trace headers are replaced by the step call's: the step's spans are the call's
# children, and a stale tracestate would describe another trace.
_TRACE_HEADERS: Final = frozenset({"Traceparent", "Tracestate"})


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
        # The routers call steps, which call nodes: the routers' module is imported at the call.
        from execution.engine.routers import _dispatch

        body, status = await _dispatch(run, node, data, where)
    except RouteError as exc:
        _node_finished(run, node_name, where, started, None, None, "error", exc.cause)
        raise
    except asyncio.CancelledError:
        outcome, cause = _stopped(run)
        _node_finished(run, node_name, where, started, None, None, outcome, cause)
        raise
    _node_finished(run, node_name, where, started, status, body, _outcome(status), None)
    return body, status


def _stopped(run: _Run) -> tuple[str, str | None]:
    """The outcome and cause of a call cut short: by the deadline (``timeout``), by a limit
    (``error``, the limit's message) or by a cancel from outside (``cancelled``)."""
    if run.deadline_hit:
        return "timeout", f"graph deadline of {_seconds(run.deadline)} s exceeded"
    if run.stop_cause is not None:
        return "error", run.stop_cause
    return "cancelled", None


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


async def _call_step(
    run: _Run, node: Node, step: Step, request: bytes, where: _Where, matched: ConditionResult | None
) -> tuple[bytes, int]:
    """``executeStep``: a nested node or an HTTP POST; a nested error becomes a 500 here."""
    run.count_step_call()  # a stopped run (deadline, limits) makes no more calls
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
                node_call_id(run, step.node_name),
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
        outcome, cause = _stopped(run)
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

    Redirects are followed as Go's client does (:func:`~execution.engine.transport.outbound.call_service`);
    the hops go to ``finished_data["redirects"]`` for the step's ``step.finished`` event.
    """
    release = run.config.release
    if release.header_matching == "exact":
        headers = propagated_headers_exact(run.headers, run.config.propagate_headers)
    else:
        headers = propagated_headers(run.headers, run.propagate)
    trace = run.config.trace
    if trace is not None:
        span_id, parent = trace.header(call_id)
        headers = [pair for pair in headers if pair[0] not in _TRACE_HEADERS]
        headers.append(("Traceparent", parent))
        started_data["span_id"] = span_id
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
    problem = _url_problem(url)
    if problem is not None:
        if release.bad_url_crashes and problem.startswith("parse "):
            # v0.11 ignores http.NewRequest's error and dereferences the nil request: a panic.
            raise RouteError(500, release_crash(release, problem))
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
