"""The plain-TCP streams under the engine's client (execution/engine/transport/wire.py) over real sockets.

One send per request, keep-alive after answers without a body, no reuse of a connection the server
closed, flow control both ways, and the error shapes the Go causes are read from.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpcore
import httpx
import pytest
from stepserver import Echo, Huge, StepServer

from execution.engine import make_client
from execution.engine.transport.causes import transport_cause
from execution.engine.transport.http import find_os_error
from execution.engine.transport.wire import PlainBackend, PlainStream

# A raw answer, or pieces written in turn (each drained, then a 10 ms pause, so that each is its
# own read on the other side; a float pauses that long; None closes the connection there).
Script = bytes | list[bytes | float | None]
Answer = Callable[[int], Script]  # request number on the connection -> what to write


@asynccontextmanager
async def raw_server(answer: Answer, *, close_after: int | None = None) -> AsyncIterator[dict[str, int]]:
    """A loopback server that reads each request head (and a Content-Length body) and writes
    ``answer(n)`` (see :data:`Script`); after ``close_after`` answers it closes the connection
    without a word. Yields counters: ``port``, ``connections`` and ``requests``."""
    stats = {"port": 0, "connections": 0, "requests": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stats["connections"] += 1
        served = 0
        try:
            while close_after is None or served < close_after:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                stats["requests"] += 1
                served += 1
                script = answer(served)
                if isinstance(script, bytes):
                    writer.write(script)
                    await writer.drain()
                    continue
                for piece in script:
                    if piece is None:
                        return
                    if isinstance(piece, float):
                        await asyncio.sleep(piece)
                        continue
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.01)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    stats["port"] = server.sockets[0].getsockname()[1]
    async with server:
        yield stats


def test_a_request_goes_out_in_one_write() -> None:
    """httpcore writes the head and the body separately; the stream sends them together."""

    async def scenario() -> None:
        async with raw_server(lambda _n: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as stats:
            stream = await PlainBackend().connect_tcp("127.0.0.1", stats["port"], timeout=5)
            assert isinstance(stream, PlainStream)
            sent: list[bytes] = []
            transport = stream._transport
            original = transport.write

            def spy(data: bytes | bytearray | memoryview) -> None:
                sent.append(bytes(data))
                original(data)

            transport.write = spy  # type: ignore[method-assign]
            head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n"
            await stream.write(head, timeout=5)
            await stream.write(b"{}", timeout=5)
            assert sent == []  # held until the answer is read
            answer = await stream.read(65536, timeout=5)
            assert sent == [head + b"{}"]
            assert answer.startswith(b"HTTP/1.1 200 OK")
            await stream.aclose()

    asyncio.run(scenario())


def test_keep_alive_goes_on_after_204_and_304_answers_without_a_body() -> None:
    """An answer that has no body by definition ends at its head: nothing waits for a body, and
    the next request reuses the connection (the differential's case n0292 hung here once)."""
    answers = {
        1: b"HTTP/1.1 204 No Content\r\n\r\n",
        2: b"HTTP/1.1 304 Not Modified\r\n\r\n",
        3: b"HTTP/1.1 204 No Content\r\nContent-Type: application/json\r\n\r\n",
    }

    async def scenario() -> None:
        fallback = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        async with raw_server(lambda n: answers.get(n, fallback)) as stats, make_client(timeout=2) as client:
            url = f"http://127.0.0.1:{stats['port']}/"
            statuses = []
            for _ in range(4):
                response = await client.post(url, content=b"{}")
                statuses.append((response.status_code, response.content))
        assert statuses == [(204, b""), (304, b""), (204, b""), (200, b"ok")]
        assert (stats["connections"], stats["requests"]) == (1, 4)

    asyncio.run(scenario())


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async def scenario() -> None:
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        async with raw_server(lambda _n: ok, close_after=1) as stats, make_client(timeout=2) as client:
            url = f"http://127.0.0.1:{stats['port']}/"
            first = await client.post(url, content=b"{}")
            await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
            second = await client.post(url, content=b"{}")
        assert (first.status_code, second.status_code) == (200, 200)
        assert stats["connections"] == 2

    asyncio.run(scenario())


def test_large_bodies_stream_both_ways(server: StepServer) -> None:
    """A body past the 64 KiB hold goes out at once; a 3 MB answer is read through flow control."""
    echo = server.route("/echo", Echo())
    huge = server.route("/huge", Huge(size=3_000_000))
    body = b'{"pad":"' + b"y" * 300_000 + b'"}'

    async def scenario() -> None:
        async with make_client(timeout=10) as client:
            echoed = await client.post(echo, content=body)
            assert echoed.content == body
            big = await client.post(huge, content=b"{}")
            assert len(big.content) == 3_000_000
            assert big.content.startswith(b'{"pad":"xxx')

    asyncio.run(scenario())


def test_a_read_timeout_is_httpx_read_timeout() -> None:
    async def scenario() -> None:
        # The server reads the request and never answers.
        async with raw_server(lambda _n: b"") as stats, make_client(timeout=0.2) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.post(f"http://127.0.0.1:{stats['port']}/", content=b"{}")

    asyncio.run(scenario())


def _refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_keeps_its_errno_and_go_cause() -> None:
    port = _refused_port()

    async def scenario() -> None:
        async with make_client(timeout=2) as client:
            url = f"http://127.0.0.1:{port}/x"
            with pytest.raises(httpx.ConnectError) as caught:
                await client.post(url, content=b"{}")
        error = find_os_error(caught.value)
        assert error is not None and error.errno == errno.ECONNREFUSED
        assert transport_cause(url, caught.value, phase="headers") == (
            f'Post "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused'
        )

    asyncio.run(scenario())


def test_a_name_whose_every_address_refuses_fails_with_each_errno() -> None:
    """``localhost`` may resolve to ::1 and 127.0.0.1: every attempt's error stays reachable, as
    with anyio (``All connection attempts failed`` caused by the group of them)."""
    port = _refused_port()

    async def scenario() -> None:
        with pytest.raises(httpcore.ConnectError) as caught:
            await PlainBackend().connect_tcp("localhost", port, timeout=2)
        assert str(caught.value) == "All connection attempts failed"
        error = find_os_error(caught.value)
        assert error is not None and error.errno in (errno.ECONNREFUSED, errno.EADDRNOTAVAIL)

    asyncio.run(scenario())


def test_make_client_sends_plain_http_through_plain_streams() -> None:
    """The engine's client really uses these streams for http:// (through its own pool,
    execution/engine/transport/plainpool.py)."""

    async def scenario() -> None:
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        async with raw_server(lambda _n: ok) as stats, make_client(timeout=2) as client:
            response = await client.post(f"http://127.0.0.1:{stats['port']}/", content=b"{}")
            assert isinstance(response.extensions["network_stream"], PlainStream)

    asyncio.run(scenario())


def test_a_connect_without_an_answer_is_httpx_connect_timeout() -> None:
    """A listener whose accept queue is full drops new SYNs: the connect waits, then times out."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = int(listener.getsockname()[1])
        fillers = []
        for _ in range(3):  # past the queue (backlog + 1): later SYNs go unanswered
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)

        async def scenario() -> None:
            async with make_client(timeout=httpx.Timeout(5, connect=0.3)) as client:
                with pytest.raises(httpx.ConnectTimeout):
                    await client.post(f"http://127.0.0.1:{port}/", content=b"{}")

        try:
            asyncio.run(scenario())
        finally:
            for filler in fillers:
                filler.close()
