"""One step call as KServe's ``callService`` makes it with Go's ``http.Client`` (docs/router-semantics.md, "Outbound calls").

:func:`call_service` is the coroutine the runner awaits for every URL step. It reproduces what the
step servers see and what the router gets back from Go 1.19's ``net/http`` client, checked against
KServe's router itself (its recorded answers in ``tests/engine/data/``):

- **Headers on the wire**: the propagated headers (Go writes them sorted by name, every value in
  order), ``User-Agent: Go-http-client/1.1`` unless one was propagated (then its *first* value;
  an empty one sends none), ``Accept-Encoding: gzip`` unless an ``Accept-Encoding`` or ``Range``
  value was propagated, ``Host`` and ``Content-Length``; with user info in the hop's URL
  (``http://user:pw@host/``), ``Authorization: Basic`` from it unless a non-empty one was
  propagated (client.go ``send``). Nothing else (no ``Accept``, no
  ``Connection``), and no cookies from earlier answers (Go's default client has no jar).
- **Bodies**: a ``gzip`` answer to the ``Accept-Encoding`` Go added itself is decoded; any other
  ``Content-Encoding`` passes through as bytes, as in Go.
- **Redirects** as ``Client.Do`` follows them: 301/302/303 turn the POST into a GET without a body
  (the headers stay, ``Content-Type`` included), 307/308 repeat the POST with its body; a relative
  ``Location`` resolves against the current URL; a 3xx without ``Location``, or any other 3xx, is
  the answer. The 10th redirect fails with ``Post "LOCATION": stopped after 10 redirects``.
  ``Authorization``, ``Www-Authenticate``, ``Cookie`` and ``Cookie2`` follow a redirect only to the
  same host:port or a subdomain of the previous URL; every hop after the first gets ``Referer`` (the previous URL,
  unless that was https and the next is http). Errors name the first method (``Post``) and the
  URL of the hop that failed, as Go's ``url.Error`` does.
- **URL guard on every hop** (the studio's addition): each URL, the first and every ``Location``,
  is checked before connecting; a name is resolved once and the connection goes to an address that
  was checked (never to a fresh DNS answer); a name that does not resolve fails closed.
- ``timeout`` covers the whole chain, as ``http.Client.Timeout`` does.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx

from execution.engine.goports.goerrors import go_basic_auth, go_parse_error
from execution.engine.transport.causes import transport_cause
from execution.engine.transport.http import CHECKED_BY, ResponseTooLarge, RunBudget, connected, run_budget
from execution.engine.transport.plainpool import raw_headers
from execution.engine.transport.urlguard import BlockedUrl, GuardDecision, HostNotFound, UrlGuard

__all__ = [
    "GO_USER_AGENT",
    "MAX_REDIRECTS",
    "ServiceCallError",
    "ServiceReply",
    "call_service",
    "go_request_headers",
    "is_domain_or_subdomain",
]

# net/http's defaultUserAgent (Go 1.19, request.go).
GO_USER_AGENT: Final = "Go-http-client/1.1"
# net/http's defaultCheckRedirect: `if len(via) >= 10 { return errors.New("stopped after 10 redirects") }`.
MAX_REDIRECTS: Final = 10
# Go 1.19 client.go shouldCopyHeaderOnRedirect: sent only to the same host:port or a subdomain.
_SENSITIVE: Final = frozenset({"Authorization", "Www-Authenticate", "Cookie", "Cookie2"})
# client.go redirectBehavior: the codes Go follows; 301/302/303 drop the body, 307/308 keep it.
_REDIRECT_DROPS_BODY: Final = frozenset({301, 302, 303})
_REDIRECT_KEEPS_BODY: Final = frozenset({307, 308})
# client.go: Go reads up to 2 KiB of a redirect's body so that the connection can be reused.
_REDIRECT_SLURP: Final = 2 << 10
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class ServiceReply:
    """The final answer of a step call: status, body bytes, the step's Content-Type, the hops."""

    status: int
    body: bytes
    content_type: str | None
    redirects: tuple[dict[str, Any], ...] = ()


class ServiceCallError(Exception):
    """The call failed without an answer (Go's ``err != nil``); ``cause`` is Go's error text."""

    def __init__(self, cause: str, redirects: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(cause)
        self.cause = cause
        self.redirects = tuple(redirects)


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable ASCII that URLs and header values hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _first(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """Go's ``Header.Get``: the first value, or None when the header is absent."""
    return next((value for key, value in headers if key == name), None)


def go_request_headers(headers: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, str]], bool]:
    """What Go's ``Request.write`` puts on the wire for ``headers`` (besides Host, Content-Length).

    Returns the ``(name, value)`` list in Go's order (User-Agent, the rest sorted by name with
    their values in order, Accept-Encoding when Go adds it) and whether Go asked for gzip itself
    (then, and only then, it decodes a gzip answer).
    """
    out: list[tuple[str, str]] = []
    agent = _first(headers, "User-Agent")
    agent = GO_USER_AGENT if agent is None else agent
    if agent:  # Request.write: an empty User-Agent sends none
        out.append(("User-Agent", agent))
    # Header.write: keys sorted; User-Agent is written above (reqWriteExcludeHeader).
    names = sorted({key for key, _ in headers} - {"User-Agent"})
    out.extend((name, value) for name in names for key, value in headers if key == name)
    # Transport.roundTrip adds gzip when Header.Get("Accept-Encoding") and Get("Range") are empty.
    gzip = not _first(headers, "Accept-Encoding") and not _first(headers, "Range")
    if gzip:
        out.append(("Accept-Encoding", "gzip"))
    return out, gzip


def _canonical_addr(url: httpx.URL) -> str:
    """Go's ``canonicalAddr``: host and port (the scheme's default when absent)."""
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    host = url.host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def is_domain_or_subdomain(sub: str, parent: str) -> bool:
    """Go's ``isDomainOrSubdomain`` on canonical addresses (``a.b.example:80`` under ``example:80``)."""
    if sub == parent:
        return True
    return sub.endswith(parent) and sub[len(sub) - len(parent) - 1] == "."


def _referer(last: httpx.URL, new: httpx.URL) -> str | None:
    """Go's ``refererForURL``: the previous URL without user info; none from https to http."""
    if last.scheme == "https" and new.scheme == "http":
        return None
    return str(last.copy_with(username=None, password=None)) if last.userinfo else str(last)


@dataclass(slots=True)
class _Hop:
    """Where the call is: the URL requested (as text for causes), and the phase for timeouts."""

    url: str
    phase: str = "headers"


async def call_service(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: Sequence[tuple[str, str]],
    *,
    guard: UrlGuard | None,
    timeout: float | None,
    backstop: float,
    max_response_bytes: int | None,
) -> ServiceReply:
    """POST ``body`` to ``url`` with the propagated ``headers`` and follow redirects as Go does.

    ``timeout`` bounds the whole call, redirects included (None: no bound, Go's DefaultClient);
    ``backstop`` is httpx's per-operation timeout. Any HTTP status is an answer. Raises
    :class:`ServiceCallError` with Go's error text for everything else (transport errors,
    timeouts, a refused URL, a bad ``Location``, too many redirects, a body over
    ``max_response_bytes``; None reads any size, as Go does). Stores nothing; safe to run
    concurrently.
    """
    hops: list[dict[str, Any]] = []
    where = _Hop(url)
    try:
        async with asyncio.timeout(timeout):
            return await _follow(
                client, url, body, list(headers), guard, backstop, max_response_bytes, hops, where
            )
    except ServiceCallError:
        raise
    except BlockedUrl as exc:  # the client's own guard (make_client(guard=...)) refused the hop
        raise ServiceCallError(
            f"Post {_go_quote(where.url)}: blocked by URL guard: {exc.reason}", hops
        ) from None
    except (TimeoutError, httpx.HTTPError, ResponseTooLarge, OSError) as exc:
        raise ServiceCallError(transport_cause(where.url, exc, phase=where.phase), hops) from None


async def _follow(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    initial_headers: list[tuple[str, str]],
    guard: UrlGuard | None,
    backstop: float,
    limit: int | None,
    hops: list[dict[str, Any]],
    where: _Hop,
) -> ServiceReply:
    """Go's ``Client.Do`` loop: send, and follow redirects until an answer that is not one."""
    method, content = "POST", body
    headers = initial_headers
    timeouts = _timeouts(backstop)
    while True:
        post = f"Post {_go_quote(where.url)}: "
        current, decision = await _prepare_hop(where.url, post, guard, hops)
        sent = _with_basic_auth(where.url, headers)
        request, gunzip = _build_request(method, current, sent, content, timeouts)
        where.phase = "headers"
        response = await _send_pinned(client, request, guard, decision)
        try:
            status = response.status_code
            fields = _answer_fields(response.headers)
            locations = fields.get("location")
            location = locations[0] if locations else None  # Go's Header.Get: the first value
            follows = status in _REDIRECT_DROPS_BODY or status in _REDIRECT_KEEPS_BODY
            if not follows or not location:
                where.phase = "body"
                data = await _read_body(response, fields, limit, gunzip)
                return ServiceReply(status, data, _joined(fields, "content-type"), tuple(hops))
            await _discard(response)
        finally:
            await _close(response)
        target = _redirect_target(current, location, post, hops)
        if status in _REDIRECT_DROPS_BODY:
            method, content = "GET", b""
        headers = _redirect_headers(initial_headers, current, target)
        dropped = sorted({n for n, _ in initial_headers} - {n for n, _ in headers} - {"Referer"})
        hops.append(
            {
                "status": status,
                "url": where.url,
                "location": location,
                "next_url": str(target),
                "next_method": method,
                "dropped_headers": dropped,
            }
        )
        if len(hops) >= MAX_REDIRECTS:
            raise ServiceCallError(
                f"Post {_go_quote(location)}: stopped after {MAX_REDIRECTS} redirects", hops
            )
        where.url = str(target)


def _with_basic_auth(url: str, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The hop's headers with Go's ``Authorization: Basic`` from the URL's user info (client.go
    ``send``): only when the hop's URL has user info and ``Header.Get("Authorization")`` (the first
    value) is empty; ``Header.Set`` then replaces every value. Each hop decides for itself: the
    headers a redirect copies are the first request's, never this derived one (a relative
    ``Location`` keeps the user info, so it is sent again)."""
    basic = _basic_auth(url)
    if basic is None or _first(headers, "Authorization"):
        return headers
    return [(name, value) for name, value in headers if name != "Authorization"] + [("Authorization", basic)]


@functools.lru_cache(maxsize=256)
def _basic_auth(url: str) -> str | None:
    return go_basic_auth(url)


@functools.lru_cache(maxsize=64)
def _timeouts(backstop: float) -> dict[str, Any]:
    """httpx's per-operation timeouts of a request, ``backstop`` for each. One dict per value,
    shared by the requests that use it: the transports only read it."""
    return httpx.Timeout(backstop).as_dict()


# The fields of an answer that a step call reads (Go's client reads the same ones).
_ANSWER_FIELDS: Final = frozenset({"location", "content-type", "content-length", "content-encoding"})


def _answer_fields(headers: httpx.Headers) -> dict[str, list[str]]:
    """The values of the :data:`_ANSWER_FIELDS` in ``headers`` (by lower-case name, in order),
    read in one pass instead of one look-up each."""
    fields: dict[str, list[str]] = {}
    for name, value in headers.multi_items():
        if name in _ANSWER_FIELDS:
            fields.setdefault(name, []).append(value)
    return fields


def _joined(fields: dict[str, list[str]], name: str) -> str | None:
    """A field's values as ``httpx.Headers.get`` gives them: joined by ``", "``; None when absent."""
    values = fields.get(name)
    return ", ".join(values) if values else None


async def _close(response: httpx.Response) -> None:
    """``response.aclose()`` without its context manager, which only names the request on an
    ``httpx`` error, and the engine's streams raise none when they close."""
    if not response.is_closed:
        response.is_closed = True
        assert isinstance(response.stream, httpx.AsyncByteStream)
        await response.stream.aclose()


async def _prepare_hop(
    text: str, post: str, guard: UrlGuard | None, hops: list[dict[str, Any]]
) -> tuple[httpx.URL, GuardDecision | None]:
    """What Go's client refuses before sending a hop (scheme, guard, URL, host); the parsed URL and
    the guard's decision."""
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme not in ("http", "https"):
        raise ServiceCallError(post + f"unsupported protocol scheme {_go_quote(scheme)}", hops)
    decision = await _check(guard, text, post, hops)  # before parsing: the guard knows more spellings
    try:
        current = _parse_url(text)
    except httpx.InvalidURL as exc:
        raise ServiceCallError(f"parse {_go_quote(text)}: {exc}", hops) from None
    if not current.host:
        raise ServiceCallError(post + "http: no Host in request URL", hops)
    return current, decision


@functools.lru_cache(maxsize=1024)
def _parse_url(text: str) -> httpx.URL:
    """``httpx.URL(text)``, parsed once per distinct URL (an ``httpx.URL`` is never modified: its
    ``copy_with`` and ``join`` return new ones)."""
    return httpx.URL(text)


def _build_request(
    method: str, url: httpx.URL, headers: list[tuple[str, str]], content: bytes, timeouts: dict[str, Any]
) -> tuple[httpx.Request, bool]:
    """The request with Go's headers on the wire; whether a gzip answer is to be decoded."""
    wire, gunzip = go_request_headers(headers)
    if method == "POST":  # Go writes Content-Length (0 too) right after User-Agent
        at = 1 if wire and wire[0][0] == "User-Agent" else 0
        wire.insert(at, ("Content-Length", str(len(content))))
    # What httpx.Request(content=...) would send, built directly: Host first (from the URL, as
    # httpx writes it), then Go's headers with the Content-Length set above. Passing the body as
    # a stream skips httpx's content encoding and second pass over the headers (a tenth of a
    # hop's CPU, bench/bench_engine.py P3); nothing is added behind our back.
    wire.insert(0, ("Host", url.netloc.decode("ascii")))
    request = httpx.Request(
        method,
        url,
        # As httpx.Headers(wire) encodes them: ASCII (anything else raises UnicodeEncodeError).
        headers=raw_headers((name.encode("ascii"), value.encode("ascii")) for name, value in wire),
        stream=httpx.ByteStream(content if method == "POST" else b""),
        extensions={"timeout": timeouts},
    )
    return request, gunzip


def _redirect_target(current: httpx.URL, location: str, post: str, hops: list[dict[str, Any]]) -> httpx.URL:
    """Go's ``req.URL.Parse(loc)``: the redirect's target, or the call fails with Go's cause."""
    problem = go_parse_error(location)
    if problem is not None:
        raise ServiceCallError(
            post + f"failed to parse Location header {_go_quote(location)}: {problem}", hops
        )
    try:
        return current.join(location)
    except httpx.InvalidURL as exc:
        raise ServiceCallError(
            post + f"failed to parse Location header {_go_quote(location)}: {exc}", hops
        ) from None


def _redirect_headers(
    initial_headers: list[tuple[str, str]], current: httpx.URL, target: httpx.URL
) -> list[tuple[str, str]]:
    """Go 1.19 ``makeHeadersCopier``: the first request's headers, the sensitive ones only when the
    target is the *previous* URL's host:port or a subdomain of it (so A -> B drops them, and
    B -> A, but B -> B copies them again; checked against the oracle), plus Go's Referer."""
    next_headers = [
        (name, value)
        for name, value in initial_headers
        if name not in _SENSITIVE or is_domain_or_subdomain(_canonical_addr(target), _canonical_addr(current))
    ]
    referer = _referer(current, target)
    if referer is not None:
        next_headers = [(n, v) for n, v in next_headers if n != "Referer"] + [("Referer", referer)]
    return next_headers


async def _check(
    guard: UrlGuard | None, url: str, post: str, hops: list[dict[str, Any]]
) -> GuardDecision | None:
    """The guard's decision for this hop; a refusal or an unresolvable name fails the call."""
    if guard is None:
        return None
    which = f" (redirect {len(hops)} from {_go_quote(hops[-1]['url'])})" if hops else ""
    try:
        return await guard.resolve(url)
    except BlockedUrl as exc:
        raise ServiceCallError(post + f"blocked by URL guard: {exc.reason}{which}", hops) from None
    except HostNotFound as exc:
        raise ServiceCallError(post + f"dial tcp: {exc}", hops) from None


async def _send_pinned(
    client: httpx.AsyncClient, request: httpx.Request, guard: UrlGuard | None, decision: GuardDecision | None
) -> httpx.Response:
    """Send ``request`` streamed; with a decision for a name, connect only to its checked addresses.

    The ``Host`` header was set from the name when the request was built; TLS keeps the name
    through ``sni_hostname``. A refused connection tries the next checked address (IPv4 first);
    nothing was sent, so this is no retry. A TLS handshake that fails on a connection made does
    not (Go's dialer only moves on when it cannot connect). The request carries the policy that checked it
    (``CHECKED_BY``), so a client guarded by the same policy does not check it again: a pinned
    address without its host name (which an allow list of names would then refuse), or an address
    literal (a second check that would change nothing).
    """
    if decision is None:
        return await _transport_send(client, request)
    request.extensions[CHECKED_BY] = guard  # the request's own dict (httpx.Request copies it)
    if decision.is_ip_literal:
        return await _transport_send(client, request)
    original = request.url
    if decision.scheme == "https":
        request.extensions["sni_hostname"] = decision.host
    last_error: httpx.ConnectError | None = None
    for address in sorted(decision.addresses, key=lambda a: ":" in a):
        request.url = original.copy_with(host=address)
        try:
            return await _transport_send(client, request)
        except httpx.ConnectError as exc:
            if connected(exc):
                raise  # the handshake failed on a connection made: Go tries no other address
            last_error = exc
        finally:
            request.url = original
    if last_error is None:  # the name resolved to nothing usable
        raise httpx.ConnectError(f"dial tcp: lookup {decision.host}: no such host") from socket.gaierror(
            socket.EAI_NONAME, "Name or service not known"
        )
    raise last_error


async def _transport_send(client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """The client's transport, without ``AsyncClient.send``'s extras.

    ``send`` parses a redirect's ``Location`` itself even when it does not follow it (and fails on
    values Go reports in its own words), and keeps answers' cookies in a jar Go's client does not
    have. Everything this module needs of a client is its transport: the pools, the guard, the cap.
    """
    transport: httpx.AsyncBaseTransport = client._transport
    return await transport.handle_async_request(request)


async def _discard(response: httpx.Response) -> None:
    """Read (and drop) a small redirect body so the keep-alive connection can be reused."""
    if _in_memory(response) is not None:
        return
    seen = 0
    async for chunk in _raw(response):
        seen += len(chunk)
        if seen > _REDIRECT_SLURP:
            return


def _raw(response: httpx.Response) -> httpx.AsyncByteStream:
    """The response's raw byte stream, read straight (``aiter_raw``'s re-chunking and bookkeeping
    showed in the per-hop profile; the caller closes the response, which closes the stream)."""
    assert isinstance(response.stream, httpx.AsyncByteStream)
    return response.stream


def _in_memory(response: httpx.Response) -> bytes | None:
    """The body of a response that was read before it reached us (``httpx.MockTransport``)."""
    if not response.is_stream_consumed:  # a network answer, unread: no exception to raise and catch
        return None
    try:
        return response.content
    except httpx.ResponseNotRead:
        return None


async def _read_body(
    response: httpx.Response, fields: dict[str, list[str]], limit: int | None, gunzip: bool
) -> bytes:
    """The body as Go's client returns it, at most ``limit`` bytes (raises ResponseTooLarge), each
    piece charged to the run's byte budget when its client has one (raises RunBudgetExceeded).
    ``fields`` are the answer's (:func:`_answer_fields`).

    Only a gzip answer to Go's own ``Accept-Encoding: gzip`` is decoded; the cap applies to the
    decoded bytes too, so a small compressed body cannot expand without bound.
    """
    length = _joined(fields, "content-length")
    if limit is not None and length is not None and length.isdigit() and int(length) > limit:
        raise ResponseTooLarge(limit)
    budget = run_budget(response)
    ready = _in_memory(response)
    if ready is not None:  # already decoded by httpx
        _take(len(ready), len(ready), limit, budget)
        return ready
    decode = gunzip and (_joined(fields, "content-encoding") or "").lower() == "gzip"
    inflater = _Gunzip(limit) if decode else None
    chunks: list[bytes] = []
    seen = 0
    async for raw in _raw(response):
        piece = raw if inflater is None else inflater.feed(raw, seen)
        seen += len(piece)
        _take(seen, len(piece), limit, budget)
        chunks.append(piece)
    if inflater is not None:
        inflater.finish()
    return b"".join(chunks)


def _take(seen: int, size: int, limit: int | None, budget: RunBudget | None) -> None:
    """Admit a piece of ``size`` bytes that brings the body to ``seen``: under the cap, and charged
    to the run's budget."""
    if limit is not None and seen > limit:
        raise ResponseTooLarge(limit)
    if budget is not None:
        budget.charge(size)


class _Gunzip:
    """Go's transparent gzip decoding of a body, bounded by the response cap."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # 16+: gzip framing
        self.started = False

    def feed(self, raw: bytes, seen: int) -> bytes:
        """The decoded bytes of the next raw piece (``seen`` decoded bytes so far)."""
        if not self.started and raw:
            self.started = True
            if raw[:1] != b"\x1f":
                raise ServiceCallError("gzip: invalid header")
        try:
            # At most one byte past the cap, so a small compressed body cannot expand without
            # bound (0: no bound, when the caller reads any size).
            piece = self.inflater.decompress(raw, 0 if self.limit is None else self.limit + 1 - seen)
        except zlib.error:
            raise ServiceCallError("gzip: invalid header") from None
        if self.limit is not None and self.inflater.unconsumed_tail:
            raise ResponseTooLarge(self.limit)
        return piece

    def finish(self) -> None:
        """At the end of the raw body: a gzip stream that began must have ended."""
        if self.started and not self.inflater.eof:
            raise ServiceCallError("unexpected EOF")
