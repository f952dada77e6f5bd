"""The engine's transport for plain ``http://`` steps: keep-alive HTTP/1.1 on h11 and PlainStream.

httpx's own transport goes through httpcore's connection pool, which costs more per call than
the call's own parsing: an anyio lock per request and per connection, a trace object per phase,
a match of every waiting request against every connection whenever one starts or ends
(``bench/bench_engine.py`` P3 profiles it). :class:`PlainTransport` keeps what the engine relies
on and drops the rest:

- the same framing, on the same h11 state machine httpcore drives, so a malformed answer fails
  with the texts the Go error mapping reads (``causes.py``). The common exchange (plain
  fields, a ``Content-Length`` each way, ``HTTP/1.1``) is written and read by :mod:`~execution.engine.transport.h1`
  instead, byte for byte as h11 would; anything else, at any point, is replayed into h11 and goes on
  there (:class:`_Connection`);
- the same streams (:class:`~execution.engine.transport.wire.PlainStream`, connected by
  :class:`~execution.engine.transport.wire.PlainBackend`: one send per request, anyio's connect errors);
- httpcore's exceptions mapped to httpx's, as httpx's transport maps them (message, cause);
- keep-alive per origin (scheme, host, port): an idle connection is reused unless it expired
  or the server sent anything on it (an end, an error or stray bytes); a response read to its end
  on both sides puts it back, anything else closes it;
- a bound on open connections (``max_connections``); a request past it waits for a slot, at
  most its ``pool`` timeout (``httpx.PoolTimeout``).

No TLS (``make_client`` sends ``https://`` to httpcore's pools), no HTTP/2, no proxies, no
``Upgrade``, no retries (KServe never retries).
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any, Final, NamedTuple, NoReturn

import h11
import httpcore
import httpx

from execution.engine.transport import h1
from execution.engine.transport.privates import map_httpcore_exceptions
from execution.engine.transport.wire import PlainBackend, PlainStream, SocketOption

__all__ = ["PlainTransport", "raw_headers"]

# What httpcore reads at a time and the largest response head it accepts.
_READ_BYTES: Final = 64 * 1024
_MAX_HEAD: Final = 100 * 1024
_DEFAULT_PORTS: Final = {b"http": 80, b"https": 443}

Origin = tuple[bytes, bytes, int]


def raw_headers(fields: Iterable[tuple[bytes, bytes]]) -> httpx.Headers:
    """``httpx.Headers(fields)`` for fields that are bytes already, without its per-field
    normalisation (two calls and three type checks a field, on every request and answer of a
    step: ``bench/bench_hop_cost.py``). ``httpx.Request`` and ``httpx.Response`` copy such a
    ``Headers`` as it is.

    Fills the private list of (name, lower-case name, value) that httpx (pinned at 0.28.1) keeps;
    ``tests/engine/test_engine_plainpool.py`` checks it against ``httpx.Headers``.
    """
    headers = httpx.Headers()
    headers._list = [(name, name.lower(), value) for name, value in fields]
    return headers


class _Connection:
    """One keep-alive connection: its stream, its h11 state and when it stops being reusable.

    An exchange :mod:`~execution.engine.transport.h1` can write and read goes by it, and h11 never sees it
    (``self._exchange``). The moment it meets anything else (the answer's head, a stray byte, an end
    before the body's length), h11 is given the request and every byte read so far
    (:meth:`_replay`) and the exchange goes on through h11 as if it had from its start: h11's
    refusals, error texts and keep-alive decisions are unchanged.
    """

    __slots__ = ("_exchange", "_skip", "_skip_h11", "expires_at", "h11", "origin", "stream")

    def __init__(self, origin: Origin, stream: PlainStream, *, skip_h11: bool = True) -> None:
        self.origin = origin
        self.stream = stream
        self.h11 = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        self.expires_at: float | None = None
        self._exchange: _Exchange | None = None
        self._skip = 0  # body bytes h11 will report again after a replay
        self._skip_h11 = skip_h11

    def reusable(self, now: float) -> bool:
        """Idle and fit for the next request: not expired, nothing received since the last answer."""
        if self.expires_at is not None and now > self.expires_at:
            return False
        return not self.stream.get_extra_info("is_readable")

    async def send(self, request: httpx.Request, timeout: float | None) -> None:
        stream = request.stream
        method = request.method.encode("ascii")
        target = request.url.raw_path
        headers = request.headers.raw
        if isinstance(stream, httpx.ByteStream):  # the engine's requests: their bytes, at once
            body = list(stream)
        else:
            assert isinstance(stream, httpx.AsyncByteStream)
            body = [chunk async for chunk in stream]
        conn = self.h11
        if (
            self._skip_h11
            and conn.our_state is h11.IDLE
            and conn.their_state is h11.IDLE
            and not conn.trailing_data[0]
        ):
            wire = h1.encode_request(method, target, headers, body)
            if wire is not None:
                self._exchange = _Exchange(method, target, headers, body)
                await self.stream.write(wire, timeout)
                return
        try:
            await self.stream.write(
                conn.send(h11.Request(method=method, target=target, headers=headers)) or b"", timeout
            )
            for chunk in body:
                await self.stream.write(conn.send(h11.Data(data=chunk)) or b"", timeout)
            await self.stream.write(conn.send(h11.EndOfMessage()) or b"", timeout)
        except h11.LocalProtocolError as exc:  # as httpcore's map_exceptions: message kept, h11's as cause
            raise httpcore.LocalProtocolError(exc) from exc

    async def next_event(self, timeout: float | None) -> Any:
        conn = self.h11
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(exc) from exc
            if event is not h11.NEED_DATA:
                return event
            data = await self.stream.read(_READ_BYTES, timeout)
            if data == b"" and conn.their_state == h11.SEND_RESPONSE:
                raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
            conn.receive_data(data)

    async def receive_head(self, timeout: float | None) -> _Head:
        exchange = self._exchange
        if exchange is not None:
            data = await self.stream.read(_READ_BYTES, timeout)
            exchange.received.append(data)
            head = h1.parse_response_head(data)
            if head is not None and len(data) - head.body_at <= head.length:
                exchange.left = head.length - (len(data) - head.body_at)
                exchange.first = data[head.body_at :]
                return _Head(head.status, head.reason, b"1.1", head.headers)
            self._replay(head_read=False)
        while True:
            event = await self.next_event(timeout)
            if isinstance(event, h11.Response):
                return _Head(event.status_code, event.reason, event.http_version, event.headers.raw_items())
            # An informational answer (100 Continue, 103 Early Hints) precedes the real one.

    async def body_piece(self, timeout: float | None) -> bytes | None:
        """The next piece of the answer's body; None at its end."""
        exchange = self._exchange
        if exchange is not None:
            if exchange.first:
                piece, exchange.first = exchange.first, b""
                exchange.given += len(piece)
                return piece
            if not exchange.left:
                exchange.ended = True
                return None
            data = await self.stream.read(_READ_BYTES, timeout)
            exchange.received.append(data)
            if data and len(data) <= exchange.left:
                exchange.left -= len(data)
                exchange.given += len(data)
                return data
            self._replay(head_read=True)  # an early end, or bytes past the body: h11 decides
        while True:
            event = await self.next_event(timeout)
            if isinstance(event, h11.Data):
                data = bytes(event.data)
                if self._skip:  # given before a replay
                    seen = min(self._skip, len(data))
                    self._skip -= seen
                    data = data[seen:]
                    if not data:
                        continue
                return data
            if isinstance(event, h11.Response):  # replayed after its head was given
                continue
            if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.PAUSED:
                return None

    def end_exchange(self) -> bool:
        """Whether the request and its answer both went through to their ends; readies the
        connection for its next request if they did."""
        exchange, self._exchange = self._exchange, None
        if exchange is not None:
            return exchange.ended
        conn = self.h11
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
            return True
        return False

    def _replay(self, *, head_read: bool) -> None:
        """Give h11 the exchange so far: the request, and every byte read (not an end: the next
        read reports it again). Once the head was returned, :meth:`body_piece` passes over it and
        over the body bytes already given."""
        exchange = self._exchange
        assert exchange is not None
        self._exchange = None
        conn = self.h11
        conn.send(h11.Request(method=exchange.method, target=exchange.target, headers=exchange.headers))
        for chunk in exchange.body:
            conn.send(h11.Data(data=chunk))
        conn.send(h11.EndOfMessage())
        for data in exchange.received:
            if data:
                conn.receive_data(data)
        self._skip = exchange.given if head_read else 0


class _Exchange:
    """A request written by :mod:`~execution.engine.transport.h1` and what was read of its answer."""

    __slots__ = ("body", "ended", "first", "given", "headers", "left", "method", "received", "target")

    def __init__(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: list[bytes]
    ) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.received: list[bytes] = []  # every read, in order (for a replay)
        self.first = b""  # the body bytes read with the head, not given yet
        self.left = 0  # body bytes still to read
        self.given = 0  # body bytes given to the reader
        self.ended = False  # the reader was told the body ended


class _Head(NamedTuple):
    status: int
    reason: bytes
    http_version: bytes
    headers: list[tuple[bytes, bytes]]


def _raise_mapped(exc: Exception) -> NoReturn:
    """Raise ``exc`` as httpx's transport raises it: an httpcore error becomes its httpx
    counterpart (message kept, ``exc`` as the cause); anything else as it is.

    Called from an ``except`` clause, so the success path pays for no context manager.
    """
    with map_httpcore_exceptions():
        raise exc


class _Body(httpx.AsyncByteStream):
    """A response body read from its connection; closing it hands the connection back (or ends it).

    Its own iterator, not an async generator: a generator per answer, with the event loop's hooks
    for it, is work on every step call (``bench/bench_hop_cost.py`` counts it).
    """

    def __init__(self, pool: PlainTransport, connection: _Connection, timeout: float | None) -> None:
        self._pool = pool
        self._connection: _Connection | None = connection
        self._timeout = timeout

    def __aiter__(self) -> AsyncIterator[bytes]:
        if self._connection is None:
            raise httpx.StreamClosed()
        return self

    async def __anext__(self) -> bytes:
        connection = self._connection
        if connection is None:  # ended: read to its end, failed or closed
            raise StopAsyncIteration
        try:
            piece = await connection.body_piece(self._timeout)
        except BaseException as exc:
            self._end(reuse=False)
            if isinstance(exc, Exception):
                _raise_mapped(exc)
            raise
        if piece is None:
            raise StopAsyncIteration
        return piece

    async def aclose(self) -> None:
        self._end(reuse=True)

    def _end(self, *, reuse: bool) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._pool._release(connection, reuse=reuse)


class PlainTransport(httpx.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 over plain TCP for one client (see the module doc). One event loop."""

    def __init__(
        self,
        *,
        max_connections: int,
        max_keepalive_connections: int,
        keepalive_expiry: float | None,
        socket_options: Iterable[SocketOption] = (),
        skip_h11: bool = True,
        backend: PlainBackend | None = None,
    ) -> None:
        """``skip_h11=False`` sends every exchange through h11, :mod:`~execution.engine.transport.h1` unused
        (``bench/bench_transport.py`` measures both; the tests compare them). ``backend`` opens the
        connections (default: TCP, :class:`~execution.engine.transport.wire.PlainBackend`;
        ``bench/bench_hop_cost.py`` gives one that answers in memory)."""
        self._skip_h11 = skip_h11
        self._max = max_connections
        self._max_idle = max_keepalive_connections
        self._expiry = keepalive_expiry
        self._options = list(socket_options)
        self._backend = backend or PlainBackend()
        self._idle: dict[Origin, collections.deque[_Connection]] = {}
        self._idle_count = 0
        self._open = 0  # connections open or being opened, idle ones included
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.raw_scheme != b"http":
            raise httpx.UnsupportedProtocol(
                f"PlainTransport sends only http:// requests, not {url.scheme}://"
            )
        timeouts = request.extensions.get("timeout", {})
        origin = (url.raw_scheme, url.raw_host, url.port or _DEFAULT_PORTS[url.raw_scheme])
        try:
            connection = await self._acquire(origin, timeouts)
            try:
                await connection.send(request, timeouts.get("write"))
            except httpcore.WriteError:
                pass  # as httpcore: the server may have answered before it stopped reading
            except BaseException:
                self._release(connection, reuse=False)
                raise
            try:
                head = await connection.receive_head(timeouts.get("read"))
            except BaseException:
                self._release(connection, reuse=False)
                raise
        except Exception as exc:
            _raise_mapped(exc)
        return httpx.Response(
            status_code=head.status,
            headers=raw_headers(head.headers),
            stream=_Body(self, connection, timeouts.get("read")),
            extensions={
                "http_version": b"HTTP/" + head.http_version,
                "reason_phrase": head.reason,
                "network_stream": connection.stream,
            },
        )

    async def _acquire(self, origin: Origin, timeouts: dict[str, Any]) -> _Connection:
        """An idle connection to ``origin``, or a new one once fewer than ``max_connections`` are
        open (an idle one to another origin is closed to make room); waits at most the ``pool``
        timeout for either."""
        connection = self._take_idle(origin)
        if connection is not None:
            return connection
        if self._open >= self._max:
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    while (connection := self._take_idle(origin)) is None and self._open >= self._max:
                        if self._idle_count:
                            self._close_oldest_idle()
                        else:
                            await self._wait()
            except TimeoutError as exc:
                raise httpcore.PoolTimeout(exc) from exc
            if connection is not None:
                return connection
        if self._closed:
            raise httpcore.ConnectError("the client is closed")
        self._open += 1
        try:
            stream = await self._backend.connect_tcp(
                origin[1].decode("ascii"),
                origin[2],
                timeout=timeouts.get("connect"),
                socket_options=self._options,
            )
        except BaseException:
            self._open -= 1
            self._wake()
            raise
        assert isinstance(stream, PlainStream)
        return _Connection(origin, stream, skip_h11=self._skip_h11)

    def _take_idle(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            connection = idle.pop()  # the most recently used: the likeliest to be alive
            self._idle_count -= 1
            if connection.reusable(now):
                return connection
            self._discard(connection)
        return None

    async def _wait(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if not waiter.done():
                self._waiters.remove(waiter)
            elif not waiter.cancelled():
                self._wake()  # woken, but leaving (a timeout): the turn goes to the next waiter
            raise

    def _release(self, connection: _Connection, *, reuse: bool) -> None:
        ended = connection.end_exchange()  # always: it readies h11 for the next exchange
        if ended and reuse and not self._closed and self._idle_count < self._max_idle:
            if self._expiry is not None:
                connection.expires_at = time.monotonic() + self._expiry
            self._idle.setdefault(connection.origin, collections.deque()).append(connection)
            self._idle_count += 1
            self._wake()
            return
        self._discard(connection)

    def _discard(self, connection: _Connection) -> None:
        connection.stream.close_now()
        self._open -= 1
        self._wake()

    def _close_oldest_idle(self) -> None:
        for origin, idle in self._idle.items():
            if idle:
                self._idle_count -= 1
                self._discard(idle.popleft())
                if not idle:
                    del self._idle[origin]
                return

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            while idle:
                self._idle_count -= 1
                self._discard(idle.pop())
        self._idle.clear()
