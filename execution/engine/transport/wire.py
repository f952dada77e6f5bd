"""The plain-TCP network streams under the engine's HTTP/1.1 connections (docs/architecture.md, "The outbound client").

httpcore speaks HTTP/1.1 over a *network backend*; its default one goes through anyio. For plain
``http://`` steps the engine uses :class:`PlainBackend` instead (under its own pool,
``plainpool.PlainTransport``; it is also a drop-in httpcore backend): an asyncio protocol per
connection, no anyio layer, and **one** ``send`` per request. h11 writes a request's head and
its body separately (two TCP segments with TCP_NODELAY); :class:`PlainStream` holds what is written
until the first read of the answer (or until 64 KiB are pending) and sends it in one piece, as
Go's ``net/http`` and Python's ``http.client`` do. On a loopback step server that halves the
segments and wake-ups per call (``bench/bench_transport.py`` measures it against the other
candidates).

Above the stream: h11 framing (a 204 or a 304 has no body; nothing waits for one), keep-alive and
httpx's exceptions (``plainpool.py``). The errors keep the shapes the Go
error texts are read from (``causes.py``): a timeout is ``TimeoutError`` under
httpcore's ``ReadTimeout``/``WriteTimeout``/``ConnectTimeout``, a failed connect or read carries the
``OSError`` (with its errno) as its cause, a refused name with several addresses raises
``OSError("All connection attempts failed")`` from the group of every attempt's error, as anyio does.
TLS is not handled here: ``https://`` steps keep httpcore's anyio streams (``http.make_client``).
"""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import socket
import ssl
from asyncio.staggered import staggered_race
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, cast

import httpcore
from httpcore import AsyncNetworkBackend, AsyncNetworkStream

from execution.engine.transport.privates import is_socket_readable

__all__ = ["PlainBackend", "PlainStream", "SocketOption"]

# Written bytes held back for one send; past this they go at once (a large body streams as before).
_COALESCE_BYTES: Final = 64 * 1024
# Received bytes buffered before the socket stops being read (the reader is slower than the peer).
_READ_HIGH_WATER: Final = 256 * 1024
_READ_LOW_WATER: Final = 64 * 1024
# anyio's (and RFC 8305's) delay before the next address of a name is tried alongside.
_HAPPY_EYEBALLS_DELAY: Final = 0.25

SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _Protocol(asyncio.Protocol):
    """Collects what the connection receives; wakes the one reader waiting for it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.eof = False
        self.error: BaseException | None = None
        self.reading_paused = False
        self.writing_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.drain_waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _READ_HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself: HTTP/1.1 never half-closes

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None:
            self.error = exc
        self._wake()
        self._wake_drain()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake_drain()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def _wake_drain(self) -> None:
        if self.drain_waiter is not None and not self.drain_waiter.done():
            self.drain_waiter.set_result(None)


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


async def _wait(future: asyncio.Future[None], timeout: float | None) -> None:
    """Wait for ``future`` at most ``timeout`` seconds (TimeoutError). A timer that fails the
    future rather than ``asyncio.timeout``, whose context manager and rescheduling showed in the
    per-hop profile (bench/bench_engine.py P3)."""
    if timeout is None:
        await future
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        await future
    finally:
        timer.cancel()


class PlainStream(AsyncNetworkStream):
    """One TCP connection as httpcore's :class:`AsyncNetworkStream`; writes go out on the next read."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._write_timeout: float | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._flush(self._write_timeout)
        protocol = self._protocol
        while not protocol.chunks:
            if protocol.error is not None:
                raise httpcore.ReadError(_describe(protocol.error)) from protocol.error
            if protocol.eof:
                return b""
            protocol.waiter = asyncio.get_running_loop().create_future()
            try:
                await _wait(protocol.waiter, timeout)
            except TimeoutError as exc:
                raise httpcore.ReadTimeout(exc) from exc
            finally:
                protocol.waiter = None
        chunk = protocol.chunks.popleft()
        if len(chunk) > max_bytes:
            protocol.chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        protocol.buffered -= len(chunk)
        if protocol.reading_paused and protocol.buffered <= _READ_LOW_WATER:
            protocol.reading_paused = False
            self._transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending.append(buffer)
        self._pending_size += len(buffer)
        self._write_timeout = timeout
        if self._pending_size > _COALESCE_BYTES:
            await self._flush(timeout)

    async def _flush(self, timeout: float | None) -> None:
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        self._pending_size = 0
        protocol = self._protocol
        if protocol.error is not None:
            raise httpcore.WriteError(_describe(protocol.error)) from protocol.error
        self._transport.write(data)  # sends at once when the socket takes it; a failure ends the connection
        while protocol.writing_paused and protocol.error is None and not self._transport.is_closing():
            protocol.drain_waiter = asyncio.get_running_loop().create_future()
            try:
                await _wait(protocol.drain_waiter, timeout)
            except TimeoutError as exc:
                raise httpcore.WriteTimeout(exc) from exc
            finally:
                protocol.drain_waiter = None

    async def aclose(self) -> None:
        self.close_now()

    def close_now(self) -> None:
        """Close at once (nothing to wait for: the transport drops what it has not sent)."""
        self._pending.clear()
        self._pending_size = 0
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncNetworkStream:
        # make_client sends https:// through httpcore's own streams; a pool of these never asks.
        raise httpcore.ConnectError("TLS is not available on a plain stream")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Received data, an end or an error on an idle connection: the pool must not reuse it.
            protocol = self._protocol
            if protocol.chunks or protocol.eof or protocol.error is not None:
                return True
            sock = self._transport.get_extra_info("socket")
            return is_socket_readable(sock)  # what httpcore's own streams answer
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        return None  # no ssl_object: plain HTTP/1.1


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class PlainBackend(AsyncNetworkBackend):
    """httpcore network backend for plain TCP on the running asyncio loop (see the module doc)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await self._connect(host, port, local_address)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.ConnectError(exc) from exc
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():  # asyncio already sets TCP_NODELAY
            sock.setsockopt(*option)
        return PlainStream(transport, protocol)

    async def _connect(
        self, host: str, port: int, local_address: str | None
    ) -> tuple[asyncio.Transport, _Protocol]:
        """Connect as anyio does: an address literal at once; a name's addresses raced with a head
        start of 250 ms each (IPv6 first); when every attempt fails, ``OSError("All connection
        attempts failed")`` caused by the one error or by the group of all of them."""
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        if _is_ip(host):
            addresses = [host]
        else:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            addresses = sorted(dict.fromkeys(str(info[4][0]) for info in infos), key=lambda a: ":" not in a)

        made: list[asyncio.Transport] = []

        def attempt(address: str) -> Callable[[], Awaitable[tuple[asyncio.Transport, _Protocol]]]:
            async def connect() -> tuple[asyncio.Transport, _Protocol]:
                transport, protocol = await loop.create_connection(_Protocol, address, port, local_addr=local)
                made.append(transport)
                return transport, protocol

            return connect

        if len(addresses) == 1:
            try:
                return await attempt(addresses[0])()
            except OSError as exc:
                raise OSError("All connection attempts failed") from exc
        winner, _, errors = await staggered_race([attempt(a) for a in addresses], _HAPPY_EYEBALLS_DELAY)
        for transport in made:  # an attempt that connected too late to win
            if winner is None or transport is not winner[0]:
                transport.close()
        if winner is not None:
            connected: tuple[asyncio.Transport, _Protocol] = winner
            return connected
        failures = [e for e in errors if isinstance(e, OSError)]
        cause: BaseException = (
            failures[0]
            if len(failures) == 1
            else ExceptionGroup("multiple connection attempts failed", failures)
        )
        raise OSError("All connection attempts failed") from cause

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the engine")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
