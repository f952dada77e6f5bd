"""W3C trace context of step calls (execution/engine/tracecontext.py) and what the engine sends."""

from __future__ import annotations

import httpx
import pytest
from graphkit import ensemble, manifest

from execution.engine import EngineConfig, run_graph_sync
from execution.engine.tracecontext import TraceContext, parse_traceparent, span_id_for, traceparent

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
GRAPH = manifest(
    {"root": ensemble({"serviceUrl": "http://models.test/a"}, {"serviceUrl": "http://models.test/b"})}
)


def test_span_ids_are_16_hex_digits_stable_and_apart_per_call_and_attempt() -> None:
    one = TraceContext(TRACE, "1")
    assert one.span_id("root/0") == TraceContext(TRACE, "1").span_id("root/0")
    assert len(one.span_id("root/0")) == 16 and int(one.span_id("root/0"), 16) > 0
    assert one.span_id("root/0") != one.span_id("root/1")
    assert one.span_id("root/0") != TraceContext(TRACE, "2").span_id("root/0")
    assert one.span_id("root/0") == span_id_for(TRACE, "1", "root/0")


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (f"00-{TRACE}-00f067aa0ba902b7-01", (TRACE, "00f067aa0ba902b7")),
        (f" 00-{TRACE}-00f067aa0ba902b7-00 ", (TRACE, "00f067aa0ba902b7")),
        (f"ff-{TRACE}-00f067aa0ba902b7-01", None),  # version ff is invalid
        (f"00-{'0' * 32}-00f067aa0ba902b7-01", None),  # all-zero trace id
        (f"00-{TRACE}-{'0' * 16}-01", None),  # all-zero parent id
        (f"00-{TRACE.upper()}-00f067aa0ba902b7-01", None),  # upper case is invalid
        ("garbage", None),
    ],
)
def test_traceparent_values_are_parsed_by_the_w3c_rules(value: str, parsed: object) -> None:
    assert parse_traceparent(value) == parsed


def test_a_malformed_trace_id_is_refused() -> None:
    with pytest.raises(ValueError, match="32 lower-case hex"):
        TraceContext("xyz")


def _run(config: EngineConfig, headers: dict[str, str] | None = None) -> tuple[dict[str, list[str]], list]:
    seen: dict[str, list[str]] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen[request.url.path] = request.headers.get_list("traceparent")
        return httpx.Response(200, json={"predictions": [1]})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    result = run_graph_sync(GRAPH, b"{}", headers or {}, config=config, client=client)
    return seen, list(result.trace)


def test_with_a_trace_context_each_step_call_sends_its_own_span_and_records_it() -> None:
    context = TraceContext(TRACE, "1")
    seen, trace = _run(EngineConfig(trace=context))
    started = {e.call_id: e.data for e in trace if e.type == "step.started"}
    assert seen == {
        "/a": [traceparent(TRACE, context.span_id("root/0"))],
        "/b": [traceparent(TRACE, context.span_id("root/1"))],
    }
    assert started["root/0"]["span_id"] == context.span_id("root/0")
    assert ["Traceparent", traceparent(TRACE, context.span_id("root/0"))] in started["root/0"]["headers"]


def test_a_propagated_client_traceparent_gives_way_to_the_calls_own() -> None:
    context = TraceContext(TRACE, "1")
    upstream = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    config = EngineConfig(trace=context, propagate_headers=("Traceparent",))
    seen, _ = _run(config, {"traceparent": upstream})
    assert seen["/a"] == [traceparent(TRACE, context.span_id("root/0"))]


def test_without_a_trace_context_nothing_is_added() -> None:
    seen, trace = _run(EngineConfig())
    assert seen == {"/a": [], "/b": []}
    assert all("span_id" not in e.data for e in trace if e.type == "step.started")
