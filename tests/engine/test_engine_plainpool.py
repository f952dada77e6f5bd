"""The keep-alive pool under the engine's http:// calls (execution/engine/transport/plainpool.py), on real sockets.

The bound on open connections and its wait, a cancelled or half-read call giving its connection
up, keep-alive reuse and its expiry, and room made by closing an idle connection to another host.
"""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
from stepserver import Hang, Reply, StepServer

from execution.engine import make_client
from execution.engine.transport.plainpool import PlainTransport, raw_headers


def _transport(*, max_connections: int = 10, keepalive_expiry: float | None = 5.0) -> PlainTransport:
    return PlainTransport(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=keepalive_expiry,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )


def test_concurrent_calls_past_the_bound_wait_for_a_connection(server: StepServer) -> None:
    url = server.route("/slow", Reply(json={"ok": True}, delay=0.1))

    async def scenario() -> list[int]:
        async with make_client(timeout=5, max_connections=2) as client:
            answers = await asyncio.gather(*(client.post(url, content=b"{}") for _ in range(6)))
        return [answer.status_code for answer in answers]

    assert asyncio.run(scenario()) == [200] * 6
    assert server.connections == 2


def test_a_call_that_finds_no_free_connection_in_time_is_a_pool_timeout(server: StepServer) -> None:
    hang = server.route("/hang", Hang(seconds=2))
    ok = server.route("/ok", Reply(json={}))

    async def scenario() -> None:
        async with make_client(timeout=httpx.Timeout(5, pool=0.1), max_connections=1) as client:
            stuck = asyncio.create_task(client.post(hang, content=b"{}"))
            await asyncio.sleep(0.05)
            with pytest.raises(httpx.PoolTimeout):
                await client.post(ok, content=b"{}")
            stuck.cancel()
            await asyncio.gather(stuck, return_exceptions=True)

    asyncio.run(scenario())


def test_a_cancelled_call_gives_its_connection_up(server: StepServer) -> None:
    hang = server.route("/hang", Hang(seconds=2))
    ok = server.route("/ok", Reply(json={"ok": 1}))

    async def scenario() -> int:
        async with make_client(timeout=httpx.Timeout(5, pool=0.5), max_connections=1) as client:
            stuck = asyncio.create_task(client.post(hang, content=b"{}"))
            await asyncio.sleep(0.05)
            stuck.cancel()
            await asyncio.gather(stuck, return_exceptions=True)
            return (await client.post(ok, content=b"{}")).status_code

    assert asyncio.run(scenario()) == 200
    assert server.connections == 2  # the cancelled call's connection was closed, not reused


def test_a_read_answer_keeps_its_connection_and_a_half_read_one_closes_it(server: StepServer) -> None:
    url = server.route("/big", Reply(body=b"x" * 300_000, content_type="application/octet-stream"))

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=_transport()) as client:
            for _ in range(3):
                assert len((await client.post(url, content=b"{}")).content) == 300_000
            assert server.connections == 1
            async with client.stream("POST", url, content=b"{}") as response:
                async for _chunk in response.aiter_raw():
                    break  # stop reading: the rest of the body is still on the connection
            assert len((await client.post(url, content=b"{}")).content) == 300_000
            assert server.connections == 2

    asyncio.run(scenario())


def test_an_idle_connection_past_its_keep_alive_expiry_is_not_reused(server: StepServer) -> None:
    url = server.route("/ok", Reply(json={}))

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=_transport(keepalive_expiry=0.05)) as client:
            await client.post(url, content=b"{}")
            await client.post(url, content=b"{}")
            assert server.connections == 1
            await asyncio.sleep(0.1)
            await client.post(url, content=b"{}")
            assert server.connections == 2

    asyncio.run(scenario())


def test_at_the_bound_an_idle_connection_to_another_host_makes_room() -> None:
    with StepServer() as first, StepServer() as second:
        a = first.route("/a", Reply(json={"a": 1}))
        b = second.route("/b", Reply(json={"b": 1}))

        async def scenario() -> list[int]:
            async with httpx.AsyncClient(transport=_transport(max_connections=1), timeout=2) as client:
                return [(await client.post(url, content=b"{}")).status_code for url in (a, b, a)]

        assert asyncio.run(scenario()) == [200, 200, 200]
        assert (first.connections, second.connections) == (2, 1)


def test_only_plain_http_is_sent() -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient(transport=_transport()) as client:
            with pytest.raises(httpx.UnsupportedProtocol):
                await client.post("https://127.0.0.1:9/", content=b"{}")

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "fields",
    [
        [],
        [(b"Content-Type", b"application/json"), (b"Content-Length", b"21")],
        [(b"X-Trace", b"a"), (b"x-trace", b"b"), (b"Set-Cookie", b"")],
        [(b"X-Latin", "caf\u00e9".encode("latin-1")), (b"X-Utf8", "caf\u00e9".encode())],
    ],
    ids=["none", "plain", "repeated", "not ascii"],
)
def test_raw_headers_are_the_headers_httpx_builds(fields: list[tuple[bytes, bytes]]) -> None:
    """raw_headers fills httpx's private field list: every way of reading it agrees with httpx.Headers."""
    ours, theirs = raw_headers(fields), httpx.Headers(fields)
    assert ours == theirs
    assert ours.raw == theirs.raw
    assert ours.multi_items() == theirs.multi_items()
    assert ours.encoding == theirs.encoding
    for name in {name.decode("latin-1").lower() for name, _ in fields} | {"absent"}:
        assert ours.get_list(name) == theirs.get_list(name)
        assert ours.get(name) == theirs.get(name)
    assert httpx.Response(200, headers=ours).headers.raw == httpx.Response(200, headers=theirs).headers.raw
