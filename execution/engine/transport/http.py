"""The one factory for outbound HTTP clients (docs/architecture.md), and the run byte budget.

:func:`make_client` returns a pooled keep-alive ``httpx.AsyncClient`` with explicit timeouts,
connection limits, no redirects, no environment proxies, and a transport that

1. applies the :class:`~execution.engine.transport.urlguard.UrlGuard` before any connection is made, and
   connects to the address it checked (the request keeps its ``Host`` header and TLS server name),
   so a DNS answer that changes between check and connect cannot redirect the call; a name that
   does not resolve fails the request (Go's ``dial tcp: lookup HOST: no such host``) instead of
   being handed to httpcore, which would resolve it again;
2. stops reading a response body once it exceeds ``max_response_bytes`` (raw bytes on the wire;
   ``outbound.call_service`` applies the same cap to the decoded body), and hands each response
   the run's :class:`RunBudget` when the client has one (:func:`run_budget`).

Create clients where they are used (a run, a command, a server) and close them; never at import.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, Final

import anyio
import anyio.abc
import certifi
import httpcore
import httpx

from execution.engine.transport.plainpool import PlainTransport
from execution.engine.transport.privates import AnyIOBackend, AnyIOStream, anyio_stream_of
from execution.engine.transport.urlguard import HostNotFound, UrlGuard
from execution.engine.transport.wire import PlainBackend

__all__ = [
    "CHECKED_BY",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "TLS_FIRST_BYTES",
    "GuardedTransport",
    "ResponseTooLarge",
    "RunBudget",
    "RunBudgetExceeded",
    "connected",
    "make_client",
    "run_budget",
]

# 10 MiB: comfortably above typical inference payloads, small enough to keep a worker's memory sane.
DEFAULT_MAX_RESPONSE_BYTES: Final = 10 * 1024 * 1024
# Connection pools per client (see ShardedTransport): 8 keeps a 32-wide Ensemble at 4 per pool.
_POOL_SHARDS: Final = 8
# Request extension: the UrlGuard that already checked this request's (pinned) address.
CHECKED_BY: Final = "studio_checked_by"


class ResponseTooLarge(Exception):
    """A response body exceeded the configured cap; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body exceeds the {limit}-byte limit")
        self.limit = limit


class RunBudgetExceeded(httpx.HTTPError):
    """The response bodies read by one client (one run) exceeded its byte budget; reading stopped.

    An ``httpx.HTTPError``, so the engine reports it as the step's transport failure, with this
    message as the cause.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the response bodies of this run exceed its budget of {limit} bytes "
            f"({limit / 1024 / 1024:g} MiB, max_run_bytes)"
        )
        self.limit = limit


class RunBudget:
    """Bytes of response bodies one run may read in total, over all its steps; shared by the
    concurrent reads of a client (one client per run). Not thread-safe: one event loop uses it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def charge(self, size: int) -> None:
        """Count ``size`` more bytes; raise :class:`RunBudgetExceeded` once past the limit (and on
        every later charge, so every read still in flight stops at its next chunk)."""
        self.used += size
        if self.used > self.limit:
            raise RunBudgetExceeded(self.limit)


# The key under which a client's transport hands its RunBudget to the reader of each response.
_BUDGET_KEY: Final = "studio.run_budget"


class _CappedStream(httpx.AsyncByteStream):
    """A response stream that raises :class:`ResponseTooLarge` once its bytes pass ``limit``.

    Each iteration is its own iterator object rather than an async generator: a generator per
    answer, with the event loop's hooks for it, is work on every step call
    (``bench/bench_hop_cost.py`` counts it).
    """

    def __init__(self, inner: httpx.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _CappedIterator(self._inner.__aiter__(), self._limit)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedIterator:
    """One pass over a capped stream: the bytes seen so far, checked at every piece."""

    __slots__ = ("_inner", "_limit", "_seen")

    def __init__(self, inner: AsyncIterator[bytes], limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._seen = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        chunk = await self._inner.__anext__()
        self._seen += len(chunk)
        if self._seen > self._limit:
            raise ResponseTooLarge(self._limit)
        return chunk


class _ReleasingStream(httpx.AsyncByteStream):
    """A response stream that calls ``release`` once when it is closed."""

    def __init__(self, inner: httpx.AsyncByteStream, release: Callable[[], None]) -> None:
        self._inner = inner
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if self._release is not None:
                self._release()
                self._release = None


class ShardedTransport(httpx.AsyncBaseTransport):
    """Spreads concurrent requests over several small connection pools.

    httpcore's pool matches every waiting request against every connection each time a request
    starts or ends, so its cost grows with the square of the requests in flight: with 32 concurrent
    calls to one host that scan took ~7 ms of CPU per request here (``bench/bench_engine.py``), more
    than the whole engine. Pools of a few connections keep each scan short. The least busy pool
    takes the next request, so calls made one after another keep reusing one keep-alive connection.
    """

    def __init__(self, pools: Sequence[httpx.AsyncBaseTransport]) -> None:
        self._pools = list(pools)
        self._busy = [0] * len(self._pools)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = min(range(len(self._pools)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            response = await self._pools[index].handle_async_request(request)
        except BaseException:
            self._busy[index] -= 1
            raise

        def release() -> None:
            self._busy[index] -= 1

        if response.is_closed:  # an in-memory response, read already: nothing holds the pool
            release()
            return response
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _ReleasingStream(response.stream, release)
        return response

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()


class GuardedTransport(httpx.AsyncBaseTransport):
    """Wraps a transport: URL guard + address pinning before the call, size cap after it."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        *,
        guard: UrlGuard | None,
        max_response_bytes: int | None,
        budget: RunBudget | None = None,
    ) -> None:
        self._inner = inner
        self._guard = guard
        self._max = max_response_bytes
        self._budget = budget

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._send(request)
        length = response.headers.get("content-length")
        if self._max is not None and length is not None and length.isdigit() and int(length) > self._max:
            await response.aclose()
            raise ResponseTooLarge(self._max)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        extensions = response.extensions
        if self._budget is not None:
            extensions = {**extensions, _BUDGET_KEY: self._budget}
        stream = response.stream if self._max is None else _CappedStream(response.stream, self._max)
        if not response.is_closed:
            # A network response, unread and this call's own: amend it rather than copy it (a
            # copy per call showed in the per-hop profile, bench/bench_engine.py P3).
            response.stream, response.extensions = stream, extensions
            return response
        # An in-memory response (httpx.MockTransport), read already: a new one reads through the cap.
        return httpx.Response(
            status_code=response.status_code, headers=response.headers, stream=stream, extensions=extensions
        )

    async def _send(self, request: httpx.Request) -> httpx.Response:
        checked = request.extensions.get(CHECKED_BY)
        if self._guard is None or checked is self._guard or checked == self._guard:
            # No policy, or the same policy already checked the name and pinned this address.
            return await self._inner.handle_async_request(request)
        try:
            decision = await self._guard.resolve(str(request.url))
        except HostNotFound as exc:
            # Fail closed: passing the name on would let httpcore resolve it again, and a
            # rebinding DNS server answers that second lookup with a forbidden address.
            raise httpx.ConnectError(f"dial tcp: {exc}", request=request) from socket.gaierror(
                socket.EAI_NONAME, "Name or service not known"
            )
        if decision.is_ip_literal:
            return await self._inner.handle_async_request(request)
        # Connect to an address we checked (IPv4 first), never to a fresh DNS answer. The Host
        # header is already set from the original URL; TLS keeps the name through sni_hostname.
        # A refused connect tries the next checked address (nothing was sent, so this is no retry);
        # a TLS handshake that fails on a connection made does not, as in Go.
        original = request.url
        ordered = sorted(decision.addresses, key=lambda a: ":" in a)
        last_error: httpx.ConnectError | None = None
        for address in ordered:
            request.url = original.copy_with(host=address)
            if decision.scheme == "https":
                request.extensions = {**request.extensions, "sni_hostname": decision.host}
            try:
                return await self._inner.handle_async_request(request)
            except httpx.ConnectError as exc:
                if connected(exc):
                    raise  # the handshake failed on a connection made: no other address is tried
                last_error = exc
            finally:
                request.url = original
        assert last_error is not None
        raise last_error

    async def aclose(self) -> None:
        await self._inner.aclose()


# The attribute a failed TLS handshake's exception carries: the first bytes the server sent (at most
# a record header's five), which Go's crypto/tls reads to word its error (causes.py).
TLS_FIRST_BYTES: Final = "studio_tls_first_bytes"
_RECORD_HEADER: Final = 5


class _FirstBytes(anyio.abc.ByteStream):
    """A socket stream that keeps the first bytes it receives (the TLS handshake reads through it)."""

    def __init__(self, inner: anyio.abc.ByteStream) -> None:
        self._inner = inner
        self.head = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._inner.receive(max_bytes)
        if len(self.head) < _RECORD_HEADER:
            self.head += data[: _RECORD_HEADER - len(self.head)]
        return data

    async def send(self, item: bytes) -> None:
        await self._inner.send(item)

    async def send_eof(self) -> None:
        await self._inner.send_eof()

    async def aclose(self) -> None:
        await self._inner.aclose()

    @property
    def extra_attributes(self) -> Any:
        return self._inner.extra_attributes


class _HeadStream(AnyIOStream):
    """httpcore's anyio stream whose failed TLS handshake says what the server sent first."""

    def __init__(self, stream: _FirstBytes) -> None:
        super().__init__(stream)
        self._recorder = stream

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        try:
            return await super().start_tls(ssl_context, server_hostname, timeout)
        except Exception as exc:
            setattr(exc, TLS_FIRST_BYTES, self._recorder.head)
            raise


class TlsBackend(AnyIOBackend):
    """httpcore's anyio backend (what its pools use by default), but a handshake that fails keeps
    the first bytes the server answered: OpenSSL reports a plain-HTTP answer only as
    ``WRONG_VERSION_NUMBER``, while Go words it from the record header (``HTTP/`` or not)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(host, port, timeout, local_address, socket_options)
        assert isinstance(stream, AnyIOStream)
        return _HeadStream(_FirstBytes(anyio_stream_of(stream)))


def connected(exc: BaseException) -> bool:
    """Whether a failed request had its connection made (a TLS handshake failed on it): Go's dialer
    tries a name's next address only when a connection cannot be made at all."""
    pending: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if hasattr(current, TLS_FIRST_BYTES):
            return True
        pending.extend([current.__cause__, current.__context__])
    return False


class ByScheme(httpx.AsyncBaseTransport):
    """Plain ``http://`` requests to one transport, everything else (``https://``) to another."""

    def __init__(self, *, plain: httpx.AsyncBaseTransport, tls: httpx.AsyncBaseTransport) -> None:
        self._plain = plain
        self._tls = tls

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        chosen = self._plain if request.url.scheme == "http" else self._tls
        return await chosen.handle_async_request(request)

    async def aclose(self) -> None:
        try:
            await self._plain.aclose()
        finally:
            await self._tls.aclose()


def _sharded(max_connections: int, *, plain: bool) -> ShardedTransport:
    """``max_connections`` spread over ``_POOL_SHARDS`` pools (see ShardedTransport); ``plain``: on
    :class:`~execution.engine.transport.wire.PlainBackend` streams, else on :class:`TlsBackend` (httpcore's
    own anyio streams, TLS)."""
    shards = min(_POOL_SHARDS, max_connections)
    per_shard = -(-max_connections // shards)  # ceiling division
    shard_limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    pools: list[httpx.AsyncHTTPTransport] = []
    for _ in range(shards):
        pool = httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=shard_limits,
            retries=0,  # KServe never retries (docs/router-semantics.md, "Outbound calls")
            trust_env=False,
            socket_options=options,
        )
        # httpx (pinned) takes no network backend: its pool is swapped for the same pool on
        # PlainBackend (bench/bench_transport.py's "plain-stream pools"; make_client sends http://
        # through PlainTransport, which test_engine_wire.py checks), or on TlsBackend for https://.
        pool._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls_context(),
            max_connections=shard_limits.max_connections,
            max_keepalive_connections=shard_limits.max_keepalive_connections,
            keepalive_expiry=shard_limits.keepalive_expiry,
            retries=0,
            socket_options=options,
            network_backend=PlainBackend() if plain else TlsBackend(),
        )
        pools.append(pool)
    return ShardedTransport(pools)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one verifying TLS context of the process (certifi's CA bundle, as httpx's default).

    Loading the bundle takes milliseconds; built per client it was the largest CPU cost of a short
    run. An SSLContext is safe to share between clients and threads.
    """
    return ssl.create_default_context(cafile=certifi.where())


def make_client(
    *,
    timeout: float | httpx.Timeout = 60.0,
    max_connections: int = 100,
    max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
    guard: UrlGuard | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    max_run_bytes: int | None = None,
) -> httpx.AsyncClient:
    """Build the outbound client. The caller owns it and must ``aclose()`` it.

    ``timeout`` is httpx's per-operation default (connect, read, write, pool); the engine passes a
    tighter per-request value for every step. Keep-alive connections are pooled up to
    ``max_connections`` for ``http://`` and as many for ``https://`` (all of them may stay
    idle-alive, so a wide Ensemble reuses its sockets); plain HTTP goes through
    :class:`~execution.engine.transport.plainpool.PlainTransport` (h11 on
    :class:`~execution.engine.transport.wire.PlainStream` connections), TLS through httpcore's pools.
    ``transport`` replaces the network transport (tests pass ``httpx.MockTransport``); the guard
    and the size cap still wrap it. ``max_run_bytes`` (None: no budget, as KServe) is a budget for
    every body read through this client, together (see :func:`run_budget`): make one client per run.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    inner = transport or ByScheme(
        plain=PlainTransport(
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=limits.keepalive_expiry,
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        ),
        tls=_sharded(max_connections, plain=False),
    )
    budget = RunBudget(max_run_bytes) if max_run_bytes is not None else None
    wrapped = GuardedTransport(inner, guard=guard, max_response_bytes=max_response_bytes, budget=budget)
    return httpx.AsyncClient(
        transport=wrapped,
        timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
        limits=limits,
        follow_redirects=False,
        trust_env=False,
        # Only for direct use of the client: engine step calls build their requests themselves and
        # send Go's headers (execution/engine/transport/outbound.py).
        headers={"User-Agent": "inference-graph-studio-engine/0.1"},
    )


def run_budget(response: httpx.Response) -> RunBudget | None:
    """The byte budget of the run whose client made ``response`` (None: the client has none).

    Whoever reads the body charges every chunk to it as it arrives, so the bodies a run holds at
    once, across concurrent steps, stay within the budget plus a chunk per read.
    """
    budget = response.extensions.get(_BUDGET_KEY)
    return budget if isinstance(budget, RunBudget) else None


def find_os_error(exc: BaseException) -> OSError | None:
    """The most specific OSError (one with an errno) under an httpx/httpcore exception.

    Follows ``__cause__``/``__context__`` and exception groups: anyio reports a refused connection
    as ``OSError("All connection attempts failed")`` caused by a group of the real errors.
    """
    fallback: OSError | None = None
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError):
            if current.errno is not None:
                return current
            fallback = fallback or current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return fallback


def describe(exc: Any) -> str:
    """A short text for an exception, falling back to its class name."""
    text = str(exc)
    return text if text else type(exc).__name__
