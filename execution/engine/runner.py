"""The interpreter: run one request through an InferenceGraph with KServe router semantics.

This follows docs/router-semantics.md (a request's way through the graph, the routers) step for
step, plus the project's deliberate deviations: cycles, zero-step Sequences and the whole-request
deadline answer with an error body instead of crashing or dropping the connection.

The entry points are here; the run's state is in :mod:`.runstate`, calling a node or a step in
:mod:`.calls` and the four routers in :mod:`.routers`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import time

import httpx

from execution.engine.calls import _route
from execution.engine.config import DEFAULT_DEADLINE_S, EngineConfig
from execution.engine.goports.gjson import gjson_context
from execution.engine.goports.sniff import JSON_CONTENT_TYPE, response_content_type
from execution.engine.headers import compile_patterns, is_exact_header_name, normalise_headers
from execution.engine.runstate import (
    NO_MATCH,
    Clock,
    GraphResult,
    HeadersIn,
    RouteError,
    _is_splitter,
    _outcome,
    _Run,
    _seconds,
    _tighter,
    _Where,
    error_body,
    map_predictions_to_instances,
)
from execution.engine.trace import EventCallback
from execution.engine.transport.http import make_client
from graphs.language.model import ROOT_NODE, Manifest

__all__ = [
    "NO_MATCH",
    "GraphResult",
    "error_body",
    "map_predictions_to_instances",
    "run_graph",
    "run_graph_sync",
]


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
    release = config.release
    # Before routerTimeouts existed (v0.16) the router ignores the field.
    timeouts = manifest.spec.router_timeouts if release.router_timeouts else None
    service_client = float(timeouts.service_client) if timeouts and timeouts.service_client else None
    server_write = float(timeouts.server_write) if timeouts and timeouts.server_write else None
    deadline = _tighter(config.deadline, server_write) or DEFAULT_DEADLINE_S
    # Before v0.12 the entries are exact header names: nothing to compile, nothing to skip.
    compiled = compile_patterns(tuple(config.propagate_headers) if release.header_matching == "re2" else ())
    warnings = tuple(f"header pattern {pattern!r} skipped: {error}" for pattern, error in compiled.invalid)
    if release.header_matching == "exact":
        warnings += tuple(
            f"header {entry!r} propagates nothing: KServe {release.name} compares header names exactly "
            "(patterns came in v0.12.0), and only the canonical spelling matches"
            for entry in config.propagate_headers
            if not is_exact_header_name(entry)
        )
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
    # The task (and every task it starts) evaluates conditions with this release's gjson.
    inner = run.root = asyncio.create_task(
        _route(run, ROOT_NODE, body, root), context=gjson_context(legacy=release.legacy_gjson)
    )

    def on_deadline() -> None:
        run.stop(504, f"graph deadline of {_seconds(deadline)} s exceeded", deadline=True)

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
        if run.stop_cause is None or (current is not None and current.cancelling()):
            _run_finished(run, started, None, None, b"", None, "cancelled", warnings)
            raise
        # Stopped by its deadline (504) or by a limit (500): the router's error JSON says which.
        error, status = run.stop_cause, run.stop_status
        outcome = "timeout" if run.deadline_hit else "error"
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
