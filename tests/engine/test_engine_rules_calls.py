"""Router rules of docs/router-semantics.md beyond the four routers (test_engine_rules.py): node calls
and recursion, responses, header propagation and transport failures; one behaviour per test,
against httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from graphkit import ensemble, manifest, seq, splitter, switch
from mockkit import M1, M2, FixedDraw, Harness, echo, of_type, parsed, reply

from execution.engine import EngineConfig, UrlGuard, error_body
from execution.engine.config import REDACTED

# --- nodes, recursion, errors --------------------------------------------------------------------


def test_node_step_gets_the_same_input_bytes_and_original_headers() -> None:
    h = Harness({M1: reply({"a": 1}), M2: echo})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "inner", "data": "$response"}),
            "inner": seq({"serviceUrl": M2}),
        }
    )
    result = h.run(graph, b'{"in":1}', {"x-trace": "t1"}, config=EngineConfig(propagate_headers=("X-Trace",)))
    assert result.body == b'{"a": 1}'
    assert h.called(M2)[0].headers["X-Trace"] == "t1"


def test_missing_node_is_invalid_route_type_with_empty_name() -> None:
    result = Harness().run(manifest({"root": seq({"nodeName": "ghost"})}))
    assert (result.status, result.error) == (500, "invalid route type: ")


def test_unknown_router_type_is_reported() -> None:
    result = Harness().run(manifest({"root": {"routerType": "Broadcast", "steps": []}}))
    assert (result.status, result.error) == (500, "invalid route type: Broadcast")


def test_missing_root_is_invalid_route_type() -> None:
    result = Harness().run(manifest({"other": seq({"serviceUrl": M1})}))
    assert (result.status, result.error) == (500, "invalid route type: ")


def test_cycles_are_detected_on_the_call_stack() -> None:
    h = Harness({M1: reply({})})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "a"}),
            "a": seq({"nodeName": "b"}),
            "b": seq({"nodeName": "a"}),
        }
    )
    result = h.run(graph)
    assert (result.status, result.error) == (500, "cycle detected: a -> b -> a")


def test_a_cycle_the_request_leaves_runs_as_in_kserve() -> None:
    """Re-entering a node with another input is not a cycle: here the loop ends when the count is 3."""
    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    h = Harness({M1: counter, M2: reply({"done": True})})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "check", "data": "$response"}),
            "check": switch(
                {"condition": "[@this].#(n>=3)", "serviceUrl": M2},
                {"condition": "n", "nodeName": "root"},
            ),
        }
    )
    result = h.run(graph, body=b"{}")
    assert (result.status, parsed(result), count["n"]) == (200, {"done": True}, 3)


def test_a_cycle_through_a_splitter_is_not_cut_short() -> None:
    """A Splitter may leave the loop on its next draw, so only the draws decide (as in KServe)."""
    h = Harness({M1: reply({"out": 1})})
    graph = manifest({"root": splitter({"nodeName": "root", "weight": 50}, {"serviceUrl": M1, "weight": 50})})
    result = h.run(graph, rng=FixedDraw(10, 20, 70))
    assert (result.status, parsed(result)) == (200, {"out": 1})
    assert len(of_type(result, "route.decided")) == 3


@pytest.mark.parametrize("depth", [250, 1500])
def test_a_deep_chain_of_node_calls_runs(depth: int) -> None:
    nodes = {f"n{i}": seq({"nodeName": f"n{i + 1}"}) for i in range(depth)}
    nodes[f"n{depth}"] = seq({"serviceUrl": M1})
    nodes["root"] = seq({"nodeName": "n0"})
    result = Harness({M1: echo}).run(manifest(nodes), body=b'{"deep":true}')
    assert (result.status, result.body) == (200, b'{"deep":true}')


def test_a_node_reached_twice_is_not_a_cycle() -> None:
    h = Harness({M1: reply({"x": 1})})
    graph = manifest(
        {
            "root": ensemble({"nodeName": "leaf"}, {"nodeName": "mid"}),
            "mid": seq({"nodeName": "leaf"}),
            "leaf": seq({"serviceUrl": M1}),
        }
    )
    result = h.run(graph)
    assert (result.status, parsed(result)) == (200, {"0": {"x": 1}, "1": {"x": 1}})
    calls = sorted((e.call_id, e.parent_call_id) for e in of_type(result, "step.started"))
    assert calls == [
        ("leaf#1/0", "root/0"),
        ("leaf#3/0", "mid#2/0"),
        ("mid#2/0", "root/1"),
        ("root/0", None),
        ("root/1", None),
    ]


def test_service_name_resolves_through_the_map_then_the_template() -> None:
    mapped = "http://mapped.test/predict"
    templ = "http://known.team-a.svc.cluster.local/v1/models/known:predict"
    h = Harness({mapped: reply({"m": 1}), templ: reply({"t": 1})})
    graph = manifest(
        {"root": ensemble({"name": "a", "serviceName": "mine"}, {"name": "b", "serviceName": "known"})},
        namespace="team-a",
    )
    result = h.run(graph, config=EngineConfig(service_urls={"mine": mapped}))
    assert parsed(result) == {"a": {"m": 1}, "b": {"t": 1}}
    result = Harness({"http://known.ns.example/known": reply({}), mapped: reply({})}).run(
        graph,
        config=EngineConfig(
            service_urls={"mine": mapped},
            url_template="http://{name}.{namespace}.example/{name}",
            namespace="ns",
        ),
    )
    assert parsed(result)["b"] == {}


def test_service_url_wins_over_service_name_and_node_name_wins_over_both() -> None:
    h = Harness({M1: reply({"url": 1}), M2: reply({"node": 1})})
    graph = manifest(
        {
            "root": ensemble(
                {"name": "u", "serviceName": "x", "serviceUrl": M1},
                {"name": "n", "nodeName": "n", "serviceUrl": M1},
            ),
            "n": seq({"serviceUrl": M2}),
        }
    )
    assert parsed(h.run(graph)) == {"u": {"url": 1}, "n": {"node": 1}}


def test_every_call_is_a_post() -> None:
    h = Harness({M1: reply({})})
    h.run(manifest({"root": seq({"serviceUrl": M1})}))
    assert [c.method for c in h.calls] == ["POST"]


def test_error_body_is_exactly_kserves() -> None:
    assert (
        error_body('say "<hi>"')
        == b'{"error":"Failed to process request","cause":"say \\"\\u003chi\\u003e\\""}'
    )


# --- responses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b'{"a":1}', "application/json"),
        (b"[1]\n", "application/json"),
        (b"hello world", "text/plain; charset=utf-8"),
        (b"", None),
        (b'{"a":NaN}', "text/plain; charset=utf-8"),
        (b"\x00\x01\x02binary", "application/octet-stream"),
        (b"<html><body>x</body></html>", "text/html; charset=utf-8"),
    ],
)
def test_response_content_type(raw: bytes, content_type: str | None) -> None:
    """application/json only for valid (strict) JSON; otherwise Go-style sniffing."""
    result = Harness({M1: reply(raw=raw)}).run(manifest({"root": seq({"serviceUrl": M1})}))
    assert (result.body, result.content_type) == (raw, content_type)


# --- headers -------------------------------------------------------------------------------------


def test_matching_headers_are_propagated_to_every_step_at_every_depth() -> None:
    h = Harness({M1: reply({}), M2: reply({})})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "n"}), "n": ensemble({"serviceUrl": M2})})
    config = EngineConfig(propagate_headers=("^X-Req", "Auth"))
    h.run(graph, headers={"x-request-id": "r1", "authorization": "Bearer t", "cookie": "c"}, config=config)
    for call in h.calls:
        assert call.headers["X-Request-Id"] == "r1"
        assert call.headers["Authorization"] == "Bearer t"
        assert "Cookie" not in call.headers
        assert call.headers["Content-Type"] == "application/json"


def test_invalid_pattern_is_reported_once_in_the_result_and_run_event() -> None:
    h = Harness({M1: reply({})})
    config = EngineConfig(propagate_headers=("Test-Header-[0-9", "Auth*"))
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), headers={"Authorization": "a"}, config=config)
    assert len(result.warnings) == 1 and "Test-Header-[0-9" in result.warnings[0]
    assert of_type(result, "run.finished")[0].data["warnings"] == list(result.warnings)
    assert h.calls[0].headers["Authorization"] == "a"


def test_trace_redacts_secret_header_values_but_sends_them() -> None:
    h = Harness({M1: reply({})})
    config = EngineConfig(propagate_headers=("Authorization",))
    result = h.run(
        manifest({"root": seq({"serviceUrl": M1})}), headers={"Authorization": "Bearer s3cret"}, config=config
    )
    sent = of_type(result, "step.started")[0].data["headers"]
    assert ["Authorization", REDACTED] in sent
    assert "s3cret" not in json.dumps([e.as_dict() for e in result.trace])
    assert h.calls[0].headers["Authorization"] == "Bearer s3cret"


# --- transport failures --------------------------------------------------------------------------


def test_malformed_url_is_500_with_gos_parse_error() -> None:
    url = "http://single-1.default.{$your-domain}/switch"
    result = Harness().run(manifest({"root": seq({"serviceUrl": url})}))
    assert result.status == 500
    assert result.error == f'parse "{url}": invalid character "{{" in host name'


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://x.test/", 'Post "ftp://x.test/": unsupported protocol scheme "ftp"'),
        ("", 'Post "": unsupported protocol scheme ""'),
        ("http://x.test:abc/", 'parse "http://x.test:abc/": invalid port ":abc" after host'),
    ],
)
def test_unusable_urls_are_500(url: str, message: str) -> None:
    result = Harness().run(manifest({"root": seq({"serviceUrl": url})}))
    assert (result.status, result.error) == (500, message)


def test_step_without_any_target_posts_to_the_empty_url_like_go() -> None:
    result = Harness().run(manifest({"root": seq({"name": "nothing"})}))
    assert (result.status, result.error) == (500, 'Post "": unsupported protocol scheme ""')


def test_service_client_timeout_is_per_call_and_reads_like_go() -> None:
    h = Harness({M1: reply({}, delay=5)})
    config = EngineConfig(step_timeout=0.1)
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), config=config)
    assert result.status == 500
    assert (
        result.error
        == f'Post "{M1}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )


def test_config_step_timeout_only_tightens_service_client() -> None:
    h = Harness({M1: reply({}, delay=0.3)})
    graph = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serviceClient": 5})
    assert h.run(graph, config=EngineConfig(step_timeout=0.1)).status == 500
    graph_tight = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serviceClient": 1})
    started = of_type(h.run(graph_tight, config=EngineConfig(step_timeout=30)), "step.started")[0]
    assert started.data["timeout_s"] == 1


def test_deadline_is_504_and_the_trace_shows_the_step_in_flight() -> None:
    h = Harness({M1: reply({"a": 1}), M2: reply({}, delay=5)})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"name": "slow", "serviceUrl": M2})})
    result = h.run(graph, config=EngineConfig(deadline=0.2))
    assert result.status == 504
    assert json.loads(result.body) == {
        "error": "Failed to process request",
        "cause": "graph deadline of 0.2 s exceeded",
    }
    finished = of_type(result, "step.finished")
    assert [(e.step_name, e.data["outcome"]) for e in finished] == [(None, "ok"), ("slow", "timeout")]
    assert of_type(result, "run.finished")[0].data["outcome"] == "timeout"


def test_server_write_is_the_default_deadline() -> None:
    h = Harness({M1: reply({}, delay=5)})
    graph = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serverWrite": 1})
    result = h.run(graph)
    assert (result.status, result.error) == (504, "graph deadline of 1 s exceeded")


def test_response_over_the_cap_fails_the_step() -> None:
    h = Harness({M1: reply(raw=b"x" * 2048)})
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), config=EngineConfig(max_response_bytes=1024))
    assert result.status == 500
    assert result.error == f'Post "{M1}": response body exceeds the engine\'s 1024-byte limit'


def test_guard_refusal_is_a_step_error_and_nothing_is_sent() -> None:
    h = Harness()
    url = "http://169.254.169.254/latest/meta-data/"
    result = h.run(manifest({"root": seq({"serviceUrl": url})}), config=EngineConfig(guard=UrlGuard()))
    assert result.status == 500
    assert (
        result.error
        == f'Post "{url}": blocked by URL guard: 169.254.169.254 is a link-local/metadata address'
    )
    assert h.calls == []
    assert of_type(result, "step.finished")[0].data["outcome"] == "error"


# --- trace ---------------------------------------------------------------------------------------


def test_trace_events_are_ordered_stamped_and_linked() -> None:
    ticks = iter(range(1000))
    h = Harness({M1: reply({"a": 1})})
    graph = manifest({"root": seq({"name": "first", "nodeName": "inner"}), "inner": seq({"serviceUrl": M1})})
    result = h.run(graph, clock=lambda: float(next(ticks)))
    assert [e.seq for e in result.trace] == list(range(1, len(result.trace) + 1))
    assert [e.timestamp for e in result.trace] == sorted(e.timestamp for e in result.trace)
    assert list(result.trace) == h.events
    summary = [(e.type, e.call_id, e.parent_call_id, e.node, e.step_index, e.target) for e in result.trace]
    assert summary == [
        ("node.started", "root", None, "root", None, None),
        ("step.started", "root/0", None, "root", 0, "inner"),
        ("node.started", "inner#1", "root/0", "inner", None, None),
        ("step.started", "inner#1/0", "root/0", "inner", 0, M1),
        ("step.finished", "inner#1/0", "root/0", "inner", 0, M1),
        ("node.finished", "inner#1", "root/0", "inner", None, None),
        ("step.finished", "root/0", None, "root", 0, "inner"),
        ("node.finished", "root", None, "root", None, None),
        ("run.finished", "root", None, None, None, None),
    ]
    step_done = result.trace[4].data
    assert step_done["status"] == 200 and step_done["outcome"] == "ok" and step_done["duration_ms"] == 2000.0
    assert json.loads(json.dumps([e.as_dict() for e in result.trace]))  # JSON-compatible


def test_trace_bodies_are_capped_with_size_and_flag() -> None:
    h = Harness({M1: reply(raw=b'{"pad":"' + b"y" * 500 + b'"}')})
    result = h.run(
        manifest({"root": seq({"serviceUrl": M1})}),
        b'"' + "é".encode() * 100 + b'"',
        config=EngineConfig(body_cap=64),
    )
    sent = of_type(result, "step.started")[0].data["request"]
    assert sent["size"] == 202 and sent["truncated"] is True and sent["encoding"] == "utf-8"
    assert len(sent["body"].encode()) <= 64
    got = of_type(result, "step.finished")[0].data["response"]
    assert (got["size"], got["truncated"], len(got["body"])) == (510, True, 64)
    binary = Harness({M1: reply(raw=b"\xff\xfe\x00")}).run(manifest({"root": seq({"serviceUrl": M1})}))
    assert of_type(binary, "step.finished")[0].data["response"]["encoding"] == "base64"


def test_a_failing_event_callback_does_not_change_the_answer() -> None:
    h = Harness({M1: reply({"a": 1})})

    def explode(event: object) -> None:
        raise RuntimeError("observer down")

    async def main() -> bytes:
        from execution.engine import run_graph

        async with httpx.AsyncClient(transport=httpx.MockTransport(h._handle)) as client:
            result = await run_graph(
                manifest({"root": seq({"serviceUrl": M1})}),
                b"{}",
                {},
                config=EngineConfig(),
                client=client,
                on_event=explode,
            )
            return result.body

    assert json.loads(asyncio.run(main())) == {"a": 1}


def test_cancellation_reports_in_flight_steps_and_reraises() -> None:
    h = Harness({M1: reply({}, delay=10), M2: reply({}, delay=10)})
    events: list[str] = []

    async def main() -> None:
        from execution.engine import run_graph

        async with httpx.AsyncClient(transport=httpx.MockTransport(h._handle)) as client:
            task = asyncio.create_task(
                run_graph(
                    manifest({"root": ensemble({"serviceUrl": M1}, {"serviceUrl": M2})}),
                    b"{}",
                    {},
                    config=EngineConfig(),
                    client=client,
                    on_event=lambda e: events.append(f"{e.type}:{e.call_id}:{e.data.get('outcome')}"),
                )
            )
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert "step.finished:root/0:cancelled" in events
    assert "step.finished:root/1:cancelled" in events
    assert events[-1] == "run.finished:root:cancelled"


def test_run_graph_sync_works_from_a_thread_whose_event_loop_is_running() -> None:
    """A sync caller inside a running loop (Playwright's sync API leaves one) still gets a result."""
    from execution.engine import run_graph_sync

    graph = manifest({"root": ensemble()})

    async def caller() -> bytes:
        return run_graph_sync(graph, b"{}", {}, config=EngineConfig()).body

    assert asyncio.run(caller()) == b"{}"


def test_a_loop_fed_a_new_input_every_round_ends_at_the_call_depth_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KServe follows it until its stack overflows (a crash); the engine stops with a clear cause.
    (The limit is 10,000 levels; 40 here keeps the test short.)"""
    from execution.engine import calls

    monkeypatch.setattr(calls, "MAX_CALL_DEPTH", 40)
    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "root", "data": "$response"})})
    result = Harness({M1: counter}).run(graph, body=b"{}")
    assert (result.status, result.error) == (500, "node calls nested deeper than 40 levels (a loop?)")
    assert count["n"] == 41


def test_the_deadline_ends_a_deep_loop_with_504() -> None:
    """Cancelling hundreds of nested node calls at once must not overflow Python's stack."""

    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "root", "data": "$response"})})
    result = Harness({M1: counter}).run(graph, body=b"{}", config=EngineConfig(deadline=0.5))
    assert (result.status, result.error) == (504, "graph deadline of 0.5 s exceeded")
    assert max(e.data["depth"] for e in of_type(result, "node.started")) > 64
