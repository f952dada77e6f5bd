"""Deriving a run's spans from its stored events (execution/tracing.py), without a database."""

from __future__ import annotations

from typing import Any

from execution.engine.tracecontext import RUN_SPAN_KEY, span_id_for
from execution.tracing import RunInfo, spans_from_events, spans_to_otlp

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
INFO = RunInfo("run-1", "g", 3, "local", "failed", None, "worker lost", 100.0, 100.0, 110.0)


def ev(type_: str, at: float, call_id: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "created_at": at, "data": {"attempt": 1, "call_id": call_id, "at": at, **data}}


def test_a_switch_marks_its_route_and_a_call_never_finished_ends_with_the_run_as_unfinished() -> None:
    events = [
        ev("node.started", 101.0, "root", node="root", router_type="Switch", input={"size": 7}, parent_call_id=None),
        ev("route.decided", 101.1, "root", router="Switch", chosen=1),
        ev("step.started", 101.2, "root/1", node="root", step_index=1, step_name="cat", kind="http",
           target="http://m/cat", url="http://m/cat", request={"size": 7}, span_id="00f067aa0ba902b7"),
    ]  # fmt: skip
    run, node, step = spans_from_events(TRACE, INFO, events)
    assert run.span_id == span_id_for(TRACE, "", RUN_SPAN_KEY) and run.parent_span_id is None
    assert (run.start, run.end, run.status, run.message) == (100.0, 110.0, "error", "worker lost")
    assert node.parent_span_id == run.span_id and node.attributes["igs.route"] == "step 1"
    assert step.span_id == "00f067aa0ba902b7" and step.parent_span_id == node.span_id
    assert step.attributes["igs.route.taken"] is True and step.attributes["igs.step"] == "cat"
    assert step.end == 110.0 and step.status == "error" and step.attributes["igs.unfinished"] is True

    otlp = spans_to_otlp(TRACE, [run, node, step])
    spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert spans[2]["startTimeUnixNano"] == "101200000000" and spans[2]["kind"] == 3
    assert {"key": "igs.step.index", "value": {"intValue": "1"}} in spans[2]["attributes"]


def test_a_failed_step_carries_its_status_and_error() -> None:
    events = [
        ev("node.started", 101.0, "root", node="root", router_type="Sequence", input={"size": 2}),
        ev("step.started", 101.0, "root/0", node="root", step_index=0, step_name=None, kind="http",
           request={"size": 2}),
        ev("step.finished", 101.5, "root/0", node="root", status=503, outcome="http-error", error=None,
           response={"size": 9}),
        ev("node.finished", 101.6, "root", node="root", status=503, outcome="http-error", error=None),
    ]  # fmt: skip
    _run, node, step = spans_from_events(TRACE, INFO, events)
    assert step.attributes["igs.step"] == "0" and step.attributes["http.response.status_code"] == 503
    assert (step.status, step.message, step.attributes["igs.bytes_out"]) == ("error", "HTTP 503", 9)
    assert step.span_id == span_id_for(TRACE, "1", "root/0")  # derived when not recorded
    assert "igs.unfinished" not in node.attributes and node.end == 101.6
