"""The engine's transport for plain ``http://`` steps: keep-alive HTTP/1.1 on h11 and PlainStream.

httpx's own transport goes through httpcore's connection pool, which costs more per call than
the call's own parsing: an anyio lock per request and per connection, a trace object per phase,
a match of every waiting request against every connection whenever one starts or ends
(``bench/bench_engine.py`` P3 profiles it). :class:`PlainTransport` keeps what the engine relies
on and drops the rest:

- the same framing, on the same h11 state machine httpcore drives, so a malformed answer fails
  with the texts the Go error mapping reads (``goerrors/transport.py``);
- the same streams (:class:`~execution.engine.wire.PlainStream`, connected by
  :class:`~execution.engine.wire.PlainBackend`: one send per request, anyio's connect errors);
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
from typing import Any, Final

import h11
import httpcore
import httpx
from httpx._transports.default import map_httpcore_exceptions

from execution.engine.wire import PlainBackend, PlainStream, SocketOption

__all__ = ["PlainTransport"]

# What httpcore reads at a time and the largest response head it accepts.
_READ_BYTES: Final = 64 * 1024
_MAX_HEAD: Final = 100 * 1024
_DEFAULT_PORTS: Final = {b"http": 80, b"https": 443}

Origin = tuple[bytes, bytes, int]


class _Connection:
    """One keep-alive connection: its stream, its h11 state and when it stops being reusable."""

    __slots__ = ("expires_at", "h11", "origin", "stream")

    def __init__(self, origin: Origin, stream: PlainStream) -> None:
        self.origin = origin
        self.stream = stream
        self.h11 = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        self.expires_at: float | None = None

    def reusable(self, now: float) -> bool:
        """Idle and fit for the next request: not expired, nothing received since the last answer."""
        if self.expires_at is not None and now > self.expires_at:
            return False
        return not self.stream.get_extra_info("is_readable")

    async def send(self, request: httpx.Request, timeout: float | None) -> None:
        conn = self.h11
        assert isinstance(request.stream, httpx.AsyncByteStream)
        try:
            head = conn.send(
                h11.Request(
                    method=request.method.encode("ascii"),
                    target=request.url.raw_path,
                    headers=request.headers.raw,
                )
            )
            await self.stream.write(head or b"", timeout)
            async for chunk in request.stream:
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

    async def receive_head(self, timeout: float | None) -> h11.Response:
        while True:
            event = await self.next_event(timeout)
            if isinstance(event, h11.Response):
                return event
            # An informational answer (100 Continue, 103 Early Hints) precedes the real one.


class _Body(httpx.AsyncByteStream):
    """A response body read from its connection; closing it hands the connection back (or ends it)."""

    def __init__(self, pool: PlainTransport, connection: _Connection, timeout: float | None) -> None:
        self._pool = pool
        self._connection: _Connection | None = connection
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            raise httpx.StreamClosed()
        try:
            with map_httpcore_exceptions():
                while True:
                    event = await connection.next_event(self._timeout)
                    if isinstance(event, h11.Data):
                        yield bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.PAUSED:
                        return
        except BaseException:
            self._end(reuse=False)
            raise

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
    ) -> None:
        self._max = max_connections
        self._max_idle = max_keepalive_connections
        self._expiry = keepalive_expiry
        self._options = list(socket_options)
        self._backend = PlainBackend()
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
        with map_httpcore_exceptions():
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
        return httpx.Response(
            status_code=head.status_code,
            headers=head.headers.raw_items(),
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
        return _Connection(origin, stream)

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
        state = connection.h11
        if reuse and not self._closed and state.our_state is h11.DONE and state.their_state is h11.DONE:
            state.start_next_cycle()
            if self._idle_count < self._max_idle:
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
