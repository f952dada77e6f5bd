"""A run that cannot run away: the deadline, the step-call cap and the event-byte cap each stop a
looping graph, name themselves, and what the run reports grows linearly with its calls."""

from __future__ import annotations

import asyncio
import itertools
import json
import time

import httpx

from execution.engine import EngineConfig, GraphResult
from execution.engine.runstate import event_weight
from tests.engine.graphkit import manifest, seq
from tests.engine.mockkit import Harness, of_type

M1 = "http://m1.test/predict"

# root calls a model, then b with the model's answer; b calls the model, then root with its answer.
# The model answers something new every time, so no cycle is ever closed (same node, same input):
# KServe would follow it until its stack overflows.
LOOP = manifest(
    {
        "root": seq({"serviceUrl": M1}, {"nodeName": "b", "data": "$response"}),
        "b": seq({"serviceUrl": M1}, {"nodeName": "root", "data": "$response"}),
    }
)


def counting(delay: float = 0.0) -> tuple[Harness, list[float]]:
    """A harness whose model answers ``{"n": <call number>}``; also the time (``time.time``) of each call."""
    numbers = itertools.count(1)
    times: list[float] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        times.append(time.time())
        if delay:
            await asyncio.sleep(delay)
        return httpx.Response(200, json={"n": next(numbers)})

    return Harness({M1: handler}), times


def stored_bytes(result: GraphResult) -> int:
    return sum(len(json.dumps(event.as_dict())) for event in result.trace)


def test_the_deadline_stops_a_loop_and_no_call_starts_after_it() -> None:
    h, times = counting(delay=0.002)
    started = time.monotonic()
    result = h.run(LOOP, config=EngineConfig(deadline=0.3))
    assert result.status == 504 and result.error == "graph deadline of 0.3 s exceeded"
    # The calls in flight end as timeouts the moment the deadline stops the run; none starts later.
    stopped = min(e.timestamp for e in of_type(result, "step.finished") if e.data["outcome"] == "timeout")
    assert times and max(times) <= stopped
    assert not [e for e in of_type(result, "step.started") if e.timestamp > stopped]
    assert len(of_type(result, "step.started")) == len(of_type(result, "step.finished"))
    assert {e.data["outcome"] for e in of_type(result, "step.finished")} == {"ok", "timeout"}
    assert time.monotonic() - started < 5.0
    assert result.trace[-1].data["outcome"] == "timeout"


def test_the_step_call_cap_stops_the_run_and_names_its_setting() -> None:
    h, times = counting()
    config = EngineConfig(max_step_calls=50, limit_names={"max_step_calls": "RUN_MAX_STEP_CALLS"})
    result = h.run(LOOP, config=config)
    assert result.status == 500
    assert result.error == "stopped after 50 step calls (RUN_MAX_STEP_CALLS)"
    assert json.loads(result.body) == {"error": "Failed to process request", "cause": result.error}
    assert len(of_type(result, "step.started")) == 50
    assert len(times) <= 50
    finished = of_type(result, "step.finished")
    assert len(finished) == 50
    assert {e.data["outcome"] for e in finished if e.data["outcome"] != "ok"} == {"error"}
    assert all(e.data["error"] == result.error for e in finished if e.data["outcome"] == "error")
    last = result.trace[-1]
    assert (last.type, last.data["outcome"], last.data["error"]) == ("run.finished", "error", result.error)


def test_a_step_cap_the_graph_stays_under_changes_nothing() -> None:
    h, _ = counting()
    graph = manifest({"root": seq({"serviceUrl": M1}, {"serviceUrl": M1})})
    assert h.run(graph, config=EngineConfig(max_step_calls=2)).status == 200


def test_the_event_byte_cap_stops_the_run_and_names_its_limit() -> None:
    h, times = counting()
    result = h.run(LOOP, config=EngineConfig(max_event_bytes=20_000))
    seen = list(result.trace)
    assert result.status == 500
    assert result.error == "stopped after its trace events passed 20,000 bytes (max_event_bytes)"
    # The run stopped at the event that passed the cap: only the calls in flight closed after it.
    weights = list(itertools.accumulate(event_weight(e) for e in seen))
    passed = next(i for i, total in enumerate(weights) if total > 20_000)
    assert all(e.type in ("step.finished", "node.finished", "run.finished") for e in seen[passed + 1 :])
    closing = seen[passed + 1 : -1]
    assert not [e for e in closing if e.data.get("response") or e.data.get("output")]
    assert {e.data["outcome"] for e in closing} <= {"error"}
    # The cap let a few dozen calls through, not the loop's thousands.
    assert 5 < len(times) < 100


def test_the_weight_of_an_event_is_close_to_its_stored_json() -> None:
    h, _ = counting()
    result = h.run(LOOP, config=EngineConfig(max_step_calls=200))
    for event in result.trace:
        real = len(json.dumps(event.as_dict()))
        assert real * 0.7 <= event_weight(event) <= real * 1.5 + 100, (event.type, real, event_weight(event))


def test_call_ids_stay_short_and_the_trace_grows_linearly_with_the_calls() -> None:
    sizes = {}
    for calls in (100, 400):
        h, _ = counting()
        result = h.run(LOOP, config=EngineConfig(max_step_calls=calls))
        assert max(len(e.call_id) for e in result.trace) <= len("root#1000/1")
        sizes[calls] = stored_bytes(result)
        # The nesting is in the parent links: each nested node's parent is the step that called it.
        steps = {e.call_id: e for e in of_type(result, "step.started")}
        for node in of_type(result, "node.started")[1:]:
            caller = steps[node.parent_call_id or ""]
            assert caller.data["kind"] == "node" and caller.target == node.node
    # Four times the calls, about four times the bytes (a path in each id made it sixteen).
    assert sizes[400] / sizes[100] < 4.6
