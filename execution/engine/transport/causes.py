"""The cause of a failed call, worded as Go's ``http.Client.Do`` error.

It reads what this transport raises (its own exceptions, httpx's and h11's, the ``OSError``
underneath, a TLS server's first bytes), so it lives with the transport; the Go ports it builds on
(``net/url``'s parser, the dialer's address checks) are :mod:`execution.engine.goports.goerrors`'.
"""

from __future__ import annotations

import ast
import errno
import re
import socket
import ssl
from typing import Final

import httpx

from execution.engine.goports.goerrors.dial import _DEFAULT_PORTS, _split_host_port
from execution.engine.goports.goerrors.url import (
    _parse_url,
    _ParseError,
    _remove_empty_port,
    _text,
    go_quote,
    go_request_url,
)
from execution.engine.transport.http import TLS_FIRST_BYTES, ResponseTooLarge, describe, find_os_error

# --- transport errors -----------------------------------------------------------------------------


def _host_port(url: str) -> str:
    """The dialled address as Go prints it (``127.0.0.1:80``, ``[::1]:9``)."""
    try:
        parsed = _parse_url(url)
    except _ParseError:
        return ""
    name, port = _split_host_port(_remove_empty_port(parsed.host))
    port = port or _DEFAULT_PORTS.get(parsed.scheme, b"80")
    text = _text(name)
    return f"[{text}]:{_text(port)}" if ":" in text else f"{text}:{_text(port)}"


_BROKEN: Final = "net/http: HTTP/1.x transport connection broken: "
# h11 quotes the offending line as ``bytearray(b'…')``.
_H11_LINE: Final = re.compile(r"^illegal (status|header) line: bytearray\((b(?:'.*'|\".*\"))\)$", re.DOTALL)


def _status_line_error(line: str) -> str | None:
    """Go's ``ReadResponse`` complaint about a status line (net/http/response.go), or None."""
    proto, space, status = line.partition(" ")
    if not space:
        return f"malformed HTTP response {go_quote(line)}"
    code = status.lstrip(" ").split(" ", 1)[0]
    if len(code) != 3 or not code.isascii() or not code.isdigit():
        return f"malformed HTTP status code {go_quote(code)}"
    if not re.fullmatch(r"HTTP/[0-9]\.[0-9]", proto) and proto not in ("HTTP/1.0", "HTTP/1.1"):
        return f"malformed HTTP version {go_quote(proto)}"
    return None


def _protocol_cause(exc: BaseException, phase: str) -> str:
    """Go's text for an answer it could not read, from what h11 reports.

    h11 cannot tell "closed before any byte" (Go: ``EOF``) from "closed inside the head" (Go:
    ``… connection broken: unexpected EOF``); the first, far more common, is assumed.
    """
    text = str(exc)
    if phase == "body":
        if text.startswith("illegal chunk header"):
            return "invalid byte in chunk length"
        # io.ReadAll of a body that ended early (Content-Length or chunked): io.ErrUnexpectedEOF.
        return "unexpected EOF"
    match = _H11_LINE.match(text)
    if match is not None:
        line = ast.literal_eval(match.group(2)).decode("latin-1")
        if match.group(1) == "status":
            problem = _status_line_error(line)
            if problem is not None:
                return _BROKEN + problem
        elif ":" not in line:
            return _BROKEN + f"malformed MIME header: missing colon: {go_quote(line)}"
    if text == "bad Content-Length":
        return _BROKEN + "bad Content-Length"  # Go also quotes the value, which h11 does not report
    return "EOF"


def transport_cause(url: str, exc: BaseException, *, phase: str) -> str:
    """A Go-like cause for a failed POST. ``phase`` is ``"headers"`` or ``"body"``.

    Go's wording where the exception tells enough; the engine's own wording for its size cap.
    """
    post = f"Post {go_quote(go_request_url(url))}: "
    if isinstance(exc, ResponseTooLarge):
        return post + f"response body exceeds the engine's {exc.limit}-byte limit"
    if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
        if phase == "body":
            return "context deadline exceeded (Client.Timeout or context cancellation while reading body)"
        return post + "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    tls = _tls_failure(exc)
    if tls is not None:
        return post + tls
    os_error = find_os_error(exc)
    if os_error is not None and os_error.errno == errno.ECONNRESET:
        # Go also names the local address (``read tcp LOCAL->REMOTE``), which httpx does not expose.
        prefix = "" if phase == "body" else post
        return prefix + f"read tcp {_host_port(url)}: read: connection reset by peer"
    if isinstance(exc, httpx.RemoteProtocolError):
        cause = _protocol_cause(exc, phase)
        return cause if phase == "body" else post + cause
    if isinstance(os_error, socket.gaierror):
        host = _host_port(url).rsplit(":", 1)[0].strip("[]")
        return post + f"dial tcp: lookup {host}: no such host"
    if os_error is not None and isinstance(exc, httpx.ConnectError):
        reason = _ERRNO_TEXT.get(os_error.errno or 0, os_error.strerror or describe(os_error))
        return post + f"dial tcp {_host_port(url)}: connect: {reason}"
    if os_error is not None and os_error.errno in _ERRNO_TEXT:
        return post + f"read tcp {_host_port(url)}: {_ERRNO_TEXT[os_error.errno or 0]}"
    return post + describe(exc)


def _tls_failure(exc: BaseException) -> str | None:
    """Go's text for a TLS handshake that met no TLS server, from the ssl error underneath and the
    first bytes the server sent (``TLS_FIRST_BYTES``, kept by the client's ``TlsBackend``)."""
    pending: list[BaseException | None] = [exc]
    head: bytes | None = None
    ssl_error: ssl.SSLError | None = None
    while pending:
        current = pending.pop()
        if current is None:
            continue
        if head is None and isinstance(getattr(current, TLS_FIRST_BYTES, None), bytes):
            head = getattr(current, TLS_FIRST_BYTES)
        if ssl_error is None and isinstance(current, ssl.SSLError):
            ssl_error = current
        pending.extend([current.__cause__, current.__context__])
    if head is not None and len(head) >= _RECORD_HEADER:
        worded = _first_record_error(head)
        if worded is not None:
            return worded
    if isinstance(ssl_error, ssl.SSLEOFError):
        # The server closed the connection before answering the ClientHello (Go: io.EOF), or
        # inside the first record header (Go reads five bytes with io.ReadAtLeast semantics).
        return "unexpected EOF" if head else "EOF"
    if isinstance(ssl_error, ssl.SSLError) and ssl_error.reason == "WRONG_VERSION_NUMBER":
        # Without the first bytes (a transport that does not keep them): a plain-HTTP server on an
        # https:// URL is by far the likelier.
        return "http: server gave HTTP response to HTTPS client"
    return None


_RECORD_HEADER: Final = 5
_ALERT: Final = 21
_HANDSHAKE: Final = 22


def _first_record_error(header: bytes) -> str | None:
    """Go's error for a server's first record header, or None where Go reads on.

    crypto/tls ``readRecordOrCCS`` before the version is known: type 0x80 is an SSLv2 hello; a
    type other than alert or handshake, or a version of 0x1000 or more, is not TLS. net/http's
    ``Client`` turns that ``RecordHeaderError`` into its own message when the header is ``HTTP/``.
    """
    header = header[:_RECORD_HEADER]
    typ = header[0]
    version = header[1] << 8 | header[2]
    if typ == 0x80:
        problem = "tls: unsupported SSLv2 handshake received"
    elif typ not in (_ALERT, _HANDSHAKE) or version >= 0x1000:
        problem = "tls: first record does not look like a TLS handshake"
    else:
        return None
    if header == b"HTTP/":
        return "http: server gave HTTP response to HTTPS client"
    return problem


_ERRNO_TEXT: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ENETUNREACH: "network is unreachable",
    errno.EHOSTUNREACH: "no route to host",
    errno.ETIMEDOUT: "connection timed out",
    errno.EPIPE: "broken pipe",
}
