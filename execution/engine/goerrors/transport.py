"""The cause of a failed call, worded as Go's ``http.Client.Do`` error."""

from __future__ import annotations

import ast
import errno
import re
import socket
import ssl
from typing import Final

import httpx

from execution.engine.goerrors.dial import _DEFAULT_PORTS, _split_host_port
from execution.engine.goerrors.url import (
    _parse_url,
    _ParseError,
    _remove_empty_port,
    _text,
    go_quote,
    go_request_url,
)
from execution.engine.http import ResponseTooLarge, describe, find_os_error

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
    """Go's text for a TLS handshake that met no TLS server, from the ssl error underneath."""
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None:
            continue
        if isinstance(current, ssl.SSLEOFError):
            return "EOF"  # the server closed the connection before answering the ClientHello
        if isinstance(current, ssl.SSLError) and current.reason == "WRONG_VERSION_NUMBER":
            # Go reads the first record header: "HTTP/" names a plain-HTTP server, anything else
            # is "tls: first record does not look like a TLS handshake". OpenSSL does not say
            # which; a plain-HTTP server on an https:// URL is by far the likelier.
            return "http: server gave HTTP response to HTTPS client"
        pending.extend([current.__cause__, current.__context__])
    return None


_ERRNO_TEXT: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ENETUNREACH: "network is unreachable",
    errno.EHOSTUNREACH: "no route to host",
    errno.ETIMEDOUT: "connection timed out",
    errno.EPIPE: "broken pipe",
}
