"""The h11-free exchange of execution/engine/transport/h1.py, held to h11 byte by byte and outcome by outcome.

``encode_request`` must write what h11 writes, or decline; ``parse_response_head`` must report the
head h11 reports, or decline. Over real sockets, every answer (well formed, split, cut short,
malformed, chunked) must end as it ends through h11 alone: same status, headers, body, error text
and keep-alive decision.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import h11
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_wire import Script, raw_server

from execution.engine.transport import h1
from execution.engine.transport.plainpool import PlainTransport

# ---------------------------------------------------------------- requests


def _h11_request(
    method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]
) -> bytes | None:
    """What h11 writes for the request, or None when it refuses it."""
    conn = h11.Connection(h11.CLIENT)
    try:
        out = [conn.send(h11.Request(method=method, target=target, headers=headers)) or b""]
        out += [conn.send(h11.Data(data=chunk)) or b"" for chunk in body]
        out.append(conn.send(h11.EndOfMessage()) or b"")
    except h11.LocalProtocolError:
        return None
    if conn.our_state is not h11.DONE:  # Expect: 100-continue, Upgrade: h11 waits
        return None
    return b"".join(out)


def _same_as_h11(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]) -> bool:
    ours = h1.encode_request(method, target, headers, body)
    return ours is None or ours == _h11_request(method, target, headers, body)


GO_HEADERS = [
    (b"Host", b"127.0.0.1:8080"),
    (b"User-Agent", b"Go-http-client/1.1"),
    (b"Content-Length", b"19"),
    (b"Content-Type", b"application/json"),
    (b"Accept-Encoding", b"gzip"),
]


def test_a_go_request_is_written_as_h11_writes_it() -> None:
    body = [b'{"instances":[1,2]}']
    wire = h1.encode_request(b"POST", b"/v1/models/m:predict", GO_HEADERS, body)
    assert wire is not None
    assert wire == _h11_request(b"POST", b"/v1/models/m:predict", GO_HEADERS, body)
    assert wire.startswith(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")


@pytest.mark.parametrize(
    ("method", "headers", "body"),
    [
        (b"GET", [(b"Host", b"h"), (b"Referer", b"http://a/")], []),  # a redirect's GET
        (b"GET", [(b"Host", b"h")], [b""]),
        (b"POST", [(b"X-Trace", b"a"), (b"host", b"late"), (b"content-length", b"2")], [b"{}"]),  # Host first
        (b"POST", [(b"Host", b"h"), (b"X", b"")], []),  # an empty value
        (b"POST", [(b"Host", b"h"), (b"X", b"a \t b"), (b"x", b"obs \xe9")], []),
    ],
)
def test_requests_it_writes_are_h11s_bytes(
    method: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]
) -> None:
    assert h1.encode_request(method, b"/", headers, body) is not None
    assert _same_as_h11(method, b"/", headers, body)


@pytest.mark.parametrize(
    ("method", "headers", "body"),
    [
        (b"POST", [(b"Content-Length", b"2")], [b"{}"]),  # no Host: h11 refuses
        (b"POST", [(b"Host", b"a"), (b"Host", b"b")], []),  # two: h11 refuses
        (b"POST", [(b"Host", b"h"), (b"Content-Length", b"3")], [b"{}"]),  # too little data
        (b"POST", [(b"Host", b"h")], [b"{}"]),  # a body without a length: too much data
        (b"POST", [(b"Host", b"h"), (b"Content-Length", b"2, 2")], [b"{}"]),  # h11 merges the list
        (b"POST", [(b"Host", b"h"), (b"Content-Length", b"2"), (b"Content-Length", b"2")], [b"{}"]),
        (b"POST", [(b"Host", b"h"), (b"Content-Length", b"x")], []),
        (b"POST", [(b"Host", b"h"), (b"Transfer-Encoding", b"chunked")], [b"{}"]),
        (b"POST", [(b"Host", b"h"), (b"Connection", b"close")], []),
        (b"POST", [(b"Host", b"h"), (b"Expect", b"100-continue")], []),
        (b"POST", [(b"Host", b"h"), (b"Upgrade", b"websocket")], []),
        (b"POST", [(b"Host", b"h"), (b"Bad Name", b"v")], []),
        (b"POST", [(b"Host", b"h"), (b"X", b" padded")], []),
        (b"POST", [(b"Host", b"h"), (b"X", b"a\r\nInjected: 1")], []),
        (b"PUT", [(b"Host", b"h")], []),
    ],
)
def test_requests_h11_treats_apart_are_declined(
    method: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]
) -> None:
    assert h1.encode_request(method, b"/", headers, body) is None


_NAMES = st.sampled_from(
    [b"Host", b"host", b"Content-Length", b"content-length", b"X-Id", b"Connection", b"Expect",
     b"Transfer-Encoding", b"Upgrade", b"Accept-Encoding", b"Bad Name", b"", b"X\x00"]
)  # fmt: skip
_VALUES = st.one_of(
    st.sampled_from([b"2", b"0", b"h", b"", b" 2", b"2 ", b"chunked", b"close", b"1, 1", b"a\tb"]),
    st.binary(max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(
    method=st.sampled_from([b"POST", b"GET", b"HEAD"]),
    headers=st.lists(st.tuples(_NAMES, _VALUES), max_size=6),
    body=st.lists(st.sampled_from([b"", b"{}", b"x"]), max_size=2),
)
def test_any_request_it_writes_is_h11s_bytes(
    method: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]
) -> None:
    assert _same_as_h11(method, b"/p?q=1", headers, body)


# ---------------------------------------------------------------- response heads


def _h11_read(data: bytes) -> tuple[Any, bytes, bool] | None:
    """h11's final response head for ``data`` (after a POST), the body bytes it reports from
    ``data`` and whether it saw the body's end; None when it reports anything else."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method=b"POST", target=b"/", headers=[(b"Host", b"h"), (b"Content-Length", b"0")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(data)
    try:
        head = conn.next_event()
        if not isinstance(head, h11.Response):
            return None
        body = b""
        while isinstance(event := conn.next_event(), h11.Data):
            body += event.data
    except h11.RemoteProtocolError:
        return None
    return head, body, isinstance(event, h11.EndOfMessage) and conn.their_state is h11.DONE


def _agrees_with_h11(data: bytes) -> bool:
    ours = h1.parse_response_head(data)
    if ours is None:
        return True
    theirs = _h11_read(data)
    if theirs is None:
        return False
    head, body, ended = theirs
    rest = data[ours.body_at :]
    return (
        (head.status_code, head.reason, head.http_version, head.headers.raw_items())
        == (ours.status, ours.reason, b"1.1", ours.headers)
        and body == rest[: ours.length]
        and ended == (len(rest) >= ours.length)
    )


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.mark.parametrize(
    "data",
    [
        OK,
        OK[:-1],  # the body comes later
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",  # no reason
        b"HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",  # an empty one
        b"HTTP/1.1 503 Service \t Unavailable \xff\r\nX:  spaced \t \r\ncontent-length:3\r\n\r\nabc",
        b"HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 999 Odd\r\nContent-Length: 1\r\n\r\nz",
    ],
)
def test_heads_it_parses_are_h11s(data: bytes) -> None:
    assert h1.parse_response_head(data) is not None
    assert _agrees_with_h11(data)


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",  # incomplete
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\n\r\n{}",  # read until close
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 123456789012345678901\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\n{}",  # a bare LF
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nBad Name: v\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nX: \x00\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"garbage\r\n\r\n",
    ],
)
def test_heads_h11_treats_apart_are_declined(data: bytes) -> None:
    assert h1.parse_response_head(data) is None


_LINES = st.sampled_from(
    [b"Content-Length: 2", b"content-length:0", b"Content-Length: 2, 2", b"Content-Length: x",
     b"X-A: b", b"X-A:", b"X-A: \xe9", b" folded", b"\tfolded", b"Connection: keep-alive",
     b"Transfer-Encoding: chunked", b"Bad Name: v", b"X: a\nb", b"X: a\rb", b":v", b"X:  b  "]
)  # fmt: skip
_STATUS_LINES = st.sampled_from(
    [b"HTTP/1.1 200 OK", b"HTTP/1.1 200", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 101 Switching",
     b"HTTP/1.1 204 No Content", b"HTTP/1.0 200 OK", b"HTTP/1.1 2000 OK", b"HTTP/1.1 301 \x7f"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    status=_STATUS_LINES,
    lines=st.lists(st.one_of(_LINES, st.binary(max_size=6)), max_size=5),
    ending=st.sampled_from([b"\r\n\r\n", b"\r\n\n", b"\n\n", b"\r\n"]),
    body=st.sampled_from([b"", b"{}", b"{}extra", b"x"]),
)
def test_any_head_it_parses_is_h11s(status: bytes, lines: list[bytes], ending: bytes, body: bytes) -> None:
    assert _agrees_with_h11(b"\r\n".join([status, *lines]) + ending + body)


# ---------------------------------------------------------------- over sockets, against h11 alone


async def _outcomes(answers: tuple[Script, ...], *, skip_h11: bool = True) -> tuple[list[Any], int]:
    """Each request's outcome on one client (status, headers, body; or the error) and the
    connections it took."""
    transport = PlainTransport(
        skip_h11=skip_h11,
        max_connections=4,
        max_keepalive_connections=4,
        keepalive_expiry=5.0,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )
    outcomes: list[Any] = []
    async with raw_server(lambda n: answers[n - 1]) as stats:
        async with httpx.AsyncClient(transport=transport, timeout=2) as client:
            del client.headers["Connection"]  # the engine sends none, as Go's client
            for _ in answers:
                try:
                    response = await client.post(f"http://127.0.0.1:{stats['port']}/", content=b"{}")
                    outcomes.append((response.status_code, response.headers.raw, response.content))
                except httpx.HTTPError as exc:
                    outcomes.append((type(exc).__name__, str(exc)))
        return outcomes, stats["connections"]


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n"
SCRIPTS: dict[str, tuple[Script, ...]] = {
    "one piece each": ([OK_HEAD + b'{"a":123}'], [OK_HEAD + b'{"a":456}']),
    "body in three pieces": ([OK_HEAD + b'{"a', b'":1', b"23}"], [OK_HEAD + b'{"a":456}']),
    "head in two pieces": ([OK_HEAD[:20], OK_HEAD[20:] + b'{"a":123}'], [OK_HEAD + b'{"a":456}']),
    "head alone, then the body": ([OK_HEAD, b'{"a":123}'], [OK_HEAD + b'{"a":456}']),
    "stray bytes after the body": ([OK_HEAD + b'{"a":123}junk'], [OK_HEAD + b'{"a":456}']),
    "stray bytes in the last piece": ([OK_HEAD + b'{"a', b'":123}junk'], [OK_HEAD + b'{"a":456}']),
    "closed mid-body": ([OK_HEAD + b'{"a', None], [OK_HEAD + b'{"a":456}']),
    "closed mid-body, later": ([OK_HEAD + b'{"a', b'":1', None], [OK_HEAD + b'{"a":456}']),
    "closed before a byte": ([None], [OK_HEAD + b'{"a":456}']),
    "closed mid-head": ([OK_HEAD[:20], None], [OK_HEAD + b'{"a":456}']),
    "chunked": ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"], [OK_HEAD + b'{"a":1}  ']),
    "until close": ([b"HTTP/1.1 200 OK\r\n\r\n{}", None], [OK_HEAD + b'{"a":456}']),
    "HTTP/1.0": ([b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"], [OK_HEAD + b'{"a":456}']),
    "connection close": ([b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"], [OK_HEAD + b'{"a":4}  ']),
    "100 continue first": ([b"HTTP/1.1 100 Continue\r\n\r\n" + OK_HEAD + b'{"a":123}'], [OK_HEAD + b'{"a":456}']),
    "204 then 200": ([b"HTTP/1.1 204 No Content\r\n\r\n"], [OK_HEAD + b'{"a":456}']),
    "folded header": ([b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\n{}"], [OK_HEAD + b'{"a":456}']),
    "bare LF": ([b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}"], [OK_HEAD + b'{"a":456}']),
    "garbage": ([b"garbage\r\n\r\n"], [OK_HEAD + b'{"a":456}']),
    "bad content length": ([b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}"], [OK_HEAD + b'{"a":456}']),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_every_answer_ends_as_through_h11_alone(name: str) -> None:
    answers = SCRIPTS[name]
    assert asyncio.run(_outcomes(answers)) == asyncio.run(_outcomes(answers, skip_h11=False))


def test_plain_exchanges_skip_h11_and_keep_their_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[Any] = []
    real_send = h11.Connection.send
    monkeypatch.setattr(
        h11.Connection, "send", lambda self, event: sent.append(event) or real_send(self, event)
    )
    outcomes, connections = asyncio.run(_outcomes(SCRIPTS["body in three pieces"]))
    assert [outcome[2] for outcome in outcomes] == [b'{"a":123}', b'{"a":456}']
    assert connections == 1
    assert sent == []
    # An answer h1 declines goes through h11 from the request on, and the next exchange goes by h1.
    outcomes, connections = asyncio.run(_outcomes(SCRIPTS["chunked"]))
    assert [outcome[2] for outcome in outcomes] == [b"{}", b'{"a":1}  ']
    assert connections == 1
    assert [type(event).__name__ for event in sent] == ["Request", "Data", "EndOfMessage"]
