"""The engine over real sockets: timeouts, deadline, cancellation, size cap, keep-alive, serving."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from graphkit import ensemble, manifest, seq
from stepserver import Drip, Hang, Huge, Reply, StepServer

from execution.engine import EngineConfig, TraceEvent, make_client, run_graph, run_graph_sync
from execution.engine.server import GraphServer

LOCAL = EngineConfig(step_timeout=10)


def test_service_client_timeout_while_awaiting_headers(server: StepServer) -> None:
    url = server.route("/slow", Hang(seconds=5))
    result = run_graph_sync(
        manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=EngineConfig(step_timeout=0.2)
    )
    assert (result.status, result.error) == (
        500,
        f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    )


def test_service_client_timeout_while_reading_a_slow_body(server: StepServer) -> None:
    url = server.route("/drip", Drip(chunks=20, interval=0.1))
    result = run_graph_sync(
        manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=EngineConfig(step_timeout=0.3)
    )
    assert (result.status, result.error) == (
        500,
        "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
    )


def test_deadline_answers_504_with_the_step_in_flight(server: StepServer) -> None:
    fast = server.route("/fast", Reply(json={"a": 1}))
    slow = server.route("/slow", Hang(seconds=5))
    graph = manifest({"root": seq({"serviceUrl": fast}, {"name": "stuck", "serviceUrl": slow})})
    started = time.monotonic()
    result = run_graph_sync(graph, b"{}", {}, config=EngineConfig(deadline=0.3))
    assert time.monotonic() - started < 2
    assert (result.status, result.error) == (504, "graph deadline of 0.3 s exceeded")
    stuck = [e for e in result.trace if e.type == "step.finished" and e.step_name == "stuck"]
    assert stuck[0].data["outcome"] == "timeout"
    assert stuck[0].data["error"] == "graph deadline of 0.3 s exceeded"


def test_cancelling_the_run_cancels_in_flight_http_calls(server: StepServer) -> None:
    url = server.route("/hang", Hang(seconds=5))
    events: list[TraceEvent] = []

    async def main() -> float:
        async with make_client() as client:
            task = asyncio.create_task(
                run_graph(
                    manifest({"root": ensemble({"serviceUrl": url}, {"serviceUrl": url})}),
                    b"{}",
                    {},
                    config=LOCAL,
                    client=client,
                    on_event=events.append,
                )
            )
            while len(server.received()) < 2:
                await asyncio.sleep(0.01)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - started

    assert asyncio.run(main()) < 0.5
    outcomes = [e.data["outcome"] for e in events if e.type == "step.finished"]
    assert outcomes == ["cancelled", "cancelled"]
    assert events[-1].type == "run.finished" and events[-1].data["outcome"] == "cancelled"


def test_response_size_cap_stops_reading(server: StepServer) -> None:
    url = server.route("/huge", Huge(size=20 * 1024 * 1024))
    graph = manifest({"root": seq({"serviceUrl": url})})
    started = time.monotonic()
    result = run_graph_sync(graph, b"{}", {}, config=EngineConfig(max_response_bytes=1024 * 1024))
    assert time.monotonic() - started < 2
    assert result.status == 500
    assert result.error == f'Post "{url}": response body exceeds the engine\'s 1048576-byte limit'


def test_size_cap_without_content_length_counts_streamed_bytes(server: StepServer) -> None:
    """A chunked-free but lying stream is still cut off: the transport counts bytes as they come."""
    url = server.route("/drip", Drip(chunks=50, chunk=b"x" * 100, interval=0.001))

    async def main() -> str:
        async with make_client(max_response_bytes=1000) as client:
            try:
                await client.post(url)
            except Exception as exc:
                return type(exc).__name__
            return "no error"

    assert asyncio.run(main()) == "ResponseTooLarge"


def test_one_keep_alive_connection_serves_a_long_sequence(server: StepServer) -> None:
    url = server.route("/m", Reply(json={"n": 1}))
    graph = manifest({"root": seq(*({"serviceUrl": url, "data": "$response"} for _ in range(100)))})
    result = run_graph_sync(graph, b"{}", {}, config=LOCAL)
    assert result.status == 200
    assert len(server.received()) == 100
    assert server.connections == 1


def test_ensemble_steps_overlap_on_real_sockets(server: StepServer) -> None:
    url = server.route("/d", Reply(json={"ok": True}, delay=0.2))
    graph = manifest({"root": ensemble(*({"serviceUrl": url} for _ in range(8)))})
    started = time.monotonic()
    result = run_graph_sync(graph, b"{}", {}, config=LOCAL)
    assert result.status == 200 and len(json.loads(result.body)) == 8
    assert time.monotonic() - started < 0.8  # serial would be 1.6 s


def test_transport_error_reads_like_go() -> None:
    result = run_graph_sync(
        manifest({"root": seq({"serviceUrl": "http://127.0.0.1:1/"})}), b"{}", {}, config=LOCAL
    )
    assert result.error == 'Post "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused'


def test_graph_server_runs_the_graph_on_every_path_and_method(server: StepServer) -> None:
    url = server.route("/m", Reply(json={"predictions": [1]}))
    graph = manifest({"root": seq({"serviceUrl": url})})
    with GraphServer(graph, LOCAL, "127.0.0.1", 0) as router, httpx.Client(base_url=router.url) as client:
        ready = client.get("/readyz")
        assert (ready.status_code, ready.content) == (200, b"")
        for method, path in (
            ("POST", "/"),
            ("POST", "/v1/models/x:predict?q=1"),
            ("GET", "/anything"),
            ("PUT", "/"),
        ):
            response = client.request(method, path, content=b'{"instances":[1]}' if method != "GET" else None)
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.json() == {"predictions": [1]}
        # The GET ran the graph with an empty body; the others forwarded theirs.
        assert [r.body for r in server.received()] == [b'{"instances":[1]}'] * 2 + [b""] + [
            b'{"instances":[1]}'
        ]


def test_graph_server_answers_errors_with_kserves_body() -> None:
    graph = manifest(
        {"root": {"routerType": "Switch", "steps": [{"serviceUrl": "http://x.test/", "condition": "no"}]}}
    )
    with GraphServer(graph, LOCAL, "127.0.0.1", 0) as router:
        response = httpx.post(router.url + "/", content=b'{"a":1}')
    assert response.status_code == 404
    assert response.json() == {
        "error": "Failed to process request",
        "cause": "None of the routes matched with the switch condition",
    }


def test_graph_server_always_answers_even_when_the_engine_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A defect in the engine is a 500 naming it, never a dropped connection (KServe would answer)."""
    graph = manifest({"root": seq({"serviceUrl": "http://x.test/"})})

    def broken(self: GraphServer, body: bytes, headers: dict[str, list[str]]) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(GraphServer, "handle", broken)
    with GraphServer(graph, LOCAL, "127.0.0.1", 0) as router:
        response = httpx.post(router.url + "/", content=b"{}")
    assert (response.status_code, response.headers["content-type"]) == (500, "application/json")
    assert response.json()["cause"] == "internal error: ValueError: boom"


def test_kserve_server_timeout_cases(server: StepServer) -> None:
    """TestServerTimeout (main_test.go:916-1057) through the served router; EOF becomes our 504."""
    m1, m2 = server.url("/m1"), server.url("/m2")

    def graph(timeouts: dict[str, int] | None) -> object:
        return manifest(
            {"root": seq({"serviceUrl": m1}, {"serviceUrl": m2, "data": "$response"})},
            router_timeouts=timeouts,
        )

    cases = [
        (None, 0.001, 200),
        ({"serverRead": 1, "serverWrite": 1, "serverIdle": 1}, 0.6, 504),
        ({"serverRead": 2, "serverWrite": 2, "serverIdle": 2}, 0.5, 200),
    ]
    for timeouts, delay, status in cases:
        server.route("/m1", Reply(json={"predictions": "1"}, delay=delay))
        server.route("/m2", Reply(json={"predictions": "2"}, delay=delay))
        with GraphServer(graph(timeouts), EngineConfig(), "127.0.0.1", 0) as router:  # type: ignore[arg-type]
            response = httpx.post(router.url + "/", content=b"", timeout=10)
        assert response.status_code == status, (timeouts, response.text)
        if status == 200:
            assert response.json() == {"predictions": "2"}


def test_sharded_transport_spreads_concurrent_calls_and_frees_each_pool_when_read() -> None:
    """Concurrent requests go to the least busy pool; a pool is free again once its response is read."""
    from execution.engine.transport.http import ShardedTransport

    seen: list[int] = []

    class Body(httpx.AsyncByteStream):  # streamed like a network body (not read in advance)
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b"{}"

    def pool(index: int) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            seen.append(index)
            return httpx.Response(200, stream=Body())

        return httpx.MockTransport(handler)

    transport = ShardedTransport([pool(0), pool(1), pool(2)])

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            for _ in range(3):  # one after another: always the first pool (its keep-alive connection)
                await client.post("http://step/", content=b"{}")
            assert seen == [0, 0, 0]
            seen.clear()
            streams = [client.stream("POST", "http://step/", content=b"{}") for _ in range(3)]
            opened = [await s.__aenter__() for s in streams]  # three in flight at once
            assert seen == [0, 1, 2]
            for s in streams:
                await s.__aexit__(None, None, None)
            assert all(r.is_closed for r in opened)
            seen.clear()
            await client.post("http://step/", content=b"{}")
            assert seen == [0]

    asyncio.run(scenario())


# --- the per-run byte budget (security issue #16, item 6) -----------------------------------------

MIB = 1024 * 1024


def _run_with_budget(graph: object, budget: int | None) -> tuple[object, list[TraceEvent]]:
    events: list[TraceEvent] = []
    config = EngineConfig(step_timeout=10, max_run_bytes=budget)

    async def main() -> object:
        async with make_client(max_run_bytes=config.max_run_bytes) as client:
            return await run_graph(graph, b"{}", {}, config=config, client=client, on_event=events.append)  # type: ignore[arg-type]

    return asyncio.run(main()), events


def test_an_ensemble_over_the_run_byte_budget_fails_naming_the_budget(server: StepServer) -> None:
    """Eight members of 1 MiB against a 3 MiB budget: the run stops reading and fails with the cause."""
    url = server.route("/mib", Huge(size=MIB))
    graph = manifest({"root": ensemble(*({"serviceUrl": url} for _ in range(8)))})
    result, events = _run_with_budget(graph, 3 * MIB)
    assert result.status == 500  # type: ignore[attr-defined]
    cause = f"the response bodies of this run exceed its budget of {3 * MIB} bytes (3 MiB, max_run_bytes)"
    assert result.error == f'Post "{url}": {cause}'  # type: ignore[attr-defined]
    finished = [e for e in events if e.type == "step.finished"]
    assert any(cause in (e.data.get("error") or "") for e in finished)
    # What the trace keeps of each body is its capped view, never the body itself.
    kept = [e.data["response"] for e in finished if e.data.get("response")]
    assert all(len(view["body"]) <= EngineConfig().body_cap and view["truncated"] for view in kept)


def test_the_same_ensemble_within_the_budget_or_without_one_succeeds(server: StepServer) -> None:
    url = server.route("/mib", Huge(size=MIB))
    graph = manifest({"root": ensemble(*({"serviceUrl": url} for _ in range(8)))})
    for budget in (9 * MIB, None):
        result, _ = _run_with_budget(graph, budget)
        assert result.status == 200, (budget, result.error)  # type: ignore[attr-defined]


def test_the_budget_counts_a_sequence_s_bodies_together(server: StepServer) -> None:
    url = server.route("/mib", Huge(size=MIB))
    graph = manifest({"root": seq(*({"serviceUrl": url} for _ in range(4)))})
    result, events = _run_with_budget(graph, int(2.5 * MIB))
    assert result.status == 500 and "max_run_bytes" in (result.error or "")  # type: ignore[attr-defined]
    statuses = [e.data.get("status") for e in events if e.type == "step.finished"]
    assert statuses == [200, 200, None]  # the third body crossed the budget; the fourth never ran
