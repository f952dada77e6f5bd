"""The four routers: Sequence, Switch, Splitter and Ensemble, as KServe's router runs them."""

from __future__ import annotations

import asyncio
import collections
import random
from typing import Any

from execution.engine.calls import _call_step, _condition_data
from execution.engine.conditions import ConditionResult, document_is_valid, evaluate_condition
from execution.engine.goports.gojson import (
    GoJsonError,
    go_json_dumps,
    go_unmarshal_object,
)
from execution.engine.runstate import (
    INVALID_RESPONSE,
    NO_MATCH,
    NO_SPLIT,
    RouteError,
    _ok,
    _Run,
    _Where,
    map_predictions_to_instances,
    release_crash,
)
from graphs.language.model import RESPONSE_DATA, Node, Step


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
        if step.map_predictions_to_instances and run.config.release.map_predictions:
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
                # 500 up to v0.15.0, 200 from v0.15.1 on: the previous response either way.
                return prev_body, run.config.release.unmet_condition_status
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
    release = run.config.release
    # Uniform in [0, 99) before v0.13 (math/rand Intn(99)), [0, 101) v0.13 to v0.18, [0, 100) after.
    draw = run.rng.randrange(release.splitter_draws)
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
        if release.splitter_no_route_crashes:
            # Before v0.19 the nil route is dereferenced: the handler panics, no answer.
            raise RouteError(500, release_crash(release, f"{NO_SPLIT} (draw {draw})"))
        raise RouteError(500, NO_SPLIT)
    return await _call_step(run, node, chosen, data, where, None)


async def _ensemble(run: _Run, node: Node, data: bytes, where: _Where) -> tuple[bytes, int]:
    """KServe's Ensemble, including the order in which its goroutines' answers are received.

    Every step runs concurrently and decodes its body into an object. Go then receives the results
    in step index order with ``select { case res := <-resultChan[i]: … case err := <-errChan: … }``:
    one unbuffered channel per step and one shared by every step's errors (a routing error or a
    body that is not an object), which end the node with 500 and that error's cause.

    The engine plays that loop over the order in which the steps finish (see :class:`_Arrivals`):

    - a ``select`` that finds both its step's result and an error waiting picks one of the two
      uniformly at random (Go's ``select``); errors wait in line, so the one taken is the first
      error to have arrived;
    - a ``select`` that blocks takes the first of the two to arrive; what arrives with it waits;
    - steps that finish together (in one turn of the event loop) arrived in an order Go's
      scheduler leaves to chance: a random one.

    The draws come from the run's random source, so a seeded run is replayable; an Ensemble
    without errors draws nothing.
    """
    if not node.steps:
        return b"{}", 200

    async def member(step: Step) -> tuple[dict[str, Any] | None, int]:
        body, status = await _call_step(run, node, step, data, where, None)
        return go_unmarshal_object(body), status

    tasks = [asyncio.create_task(member(step)) for step in node.steps]
    arrivals = _Arrivals(tasks, run.rng)
    try:
        merged: dict[str, Any] = {}
        for i, (step, task) in enumerate(zip(node.steps, tasks, strict=True)):
            error = await arrivals.select(task)
            if error is not None:
                exc = error.exception()
                cause = exc.cause if isinstance(exc, RouteError) else str(exc)
                failed = tasks.index(error)
                _ensemble_decided(
                    run, node, where, failed, node.steps[failed], tasks, {"decision": "error", "error": cause}
                )
                raise RouteError(500, cause)
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


def _is_error(task: asyncio.Task[Any]) -> bool:
    """Whether a finished step sends on Go's ``errChan``: a routing error or a decode error."""
    return not task.cancelled() and isinstance(task.exception(), (RouteError, GoJsonError))


class _Arrivals:
    """The Ensemble's channels as Go's receiving loop sees them.

    ``arrived`` are the finished steps (goroutines blocked on their send), ``errors`` the line of
    senders on ``errChan`` in their order of arrival (Go's channel wait queue is first in, first
    out). Steps found finished together are put in a random order first.
    """

    def __init__(self, tasks: list[asyncio.Task[Any]], rng: random.Random) -> None:
        self._tasks = tasks
        self._rng = rng
        self._arrived: set[asyncio.Task[Any]] = set()
        self._errors: collections.deque[asyncio.Task[Any]] = collections.deque()

    def _collect(self) -> list[asyncio.Task[Any]]:
        """The steps that finished since the last look, in the order Go could have received them."""
        batch = [task for task in self._tasks if task.done() and task not in self._arrived]
        # Only an error's place in the order changes an answer: without one, draw nothing.
        if len(batch) > 1 and any(_is_error(task) for task in batch):
            self._rng.shuffle(batch)
        self._arrived.update(batch)
        self._errors.extend(task for task in batch if _is_error(task))
        return batch

    async def select(self, awaited: asyncio.Task[Any]) -> asyncio.Task[Any] | None:
        """One ``select`` on ``awaited``'s result channel and ``errChan``: the error taken (the
        first in line), or None when ``awaited``'s result is taken."""
        self._collect()
        result_ready = awaited in self._arrived and not _is_error(awaited)
        if result_ready and self._errors:
            # Both cases ready: Go's select chooses uniformly among them.
            return self._errors.popleft() if self._rng.random() < 0.5 else None
        if self._errors:
            return self._errors.popleft()
        if result_ready:
            return None
        # Blocked: the first sender on either channel is handed over at once.
        while True:
            pending = [task for task in self._tasks if not task.done()]
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in self._collect():
                if _is_error(task):
                    return self._errors.popleft()  # the line was empty: this is its head
                if task is awaited:
                    return None


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
