"""Error causes worded like the Go router's (ROUTER-SEMANTICS §2.3), so traces read the same.

Only the wording is imitated; nothing here decides behaviour beyond "this URL cannot be used".
"""

from __future__ import annotations

import errno
import socket
from typing import Final
from urllib.parse import urlsplit

import httpx

from execution.engine.http import ResponseTooLarge, describe, find_os_error

__all__ = ["go_url_error", "transport_cause"]

# Characters Go's net/url accepts in a host name (shouldEscape(c, encodeHost) is false for these);
# bytes >= 0x80 are accepted too.
_HOST_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:[]<>\"%"
)
_SCHEME_OK: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")


def go_url_error(url: str) -> str | None:
    """What Go's ``url.Parse(url)`` would complain about, as ``parse "URL": …``; None if it parses.

    Covers the cases that matter for step URLs: control characters, a bad scheme start, invalid
    host characters (KServe's ``{$your-domain}`` sample) and a non-numeric port.
    """
    prefix = f"parse {_go_quote(url)}: "
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return prefix + "net/url: invalid control character in URL"
    if url.startswith(":"):
        return prefix + "missing protocol scheme"
    scheme, sep, rest = url.partition(":")
    if not sep or not scheme or not scheme[0].isalpha() or any(ch not in _SCHEME_OK for ch in scheme):
        return None  # a relative reference: it parses, and the client refuses it later
    if not rest.startswith("//"):
        return None
    authority = rest[2:]
    for stop in "/?#":
        authority = authority.split(stop, 1)[0]
    host_port = authority.rsplit("@", 1)[-1]
    if host_port.startswith("["):
        end = host_port.find("]")
        if end < 0:
            return prefix + "missing ']' in host"
        host, port_part = host_port[: end + 1], host_port[end + 1 :]
        if port_part and not port_part.startswith(":"):
            return prefix + f"invalid port {_go_quote(port_part)} after host"
    else:
        host, colon, port = host_port.rpartition(":")
        if not colon:
            host, port_part = host_port, ""
        else:
            port_part = ":" + port
        for ch in host:
            if ord(ch) < 0x80 and ch not in _HOST_OK:
                return prefix + f"invalid character {_go_quote(ch)} in host name"
    if port_part and not port_part[1:].isdigit() and port_part != ":":
        return prefix + f"invalid port {_go_quote(port_part)} after host"
    return None


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the ASCII cases that occur in URLs."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _host_port(url: str) -> str:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}"


def transport_cause(url: str, exc: BaseException, *, phase: str) -> str:
    """A Go-like cause for a failed POST. ``phase`` is ``"headers"`` or ``"body"``."""
    post = f"Post {_go_quote(url)}: "
    if isinstance(exc, ResponseTooLarge):
        return post + f"response body exceeds the engine's {exc.limit}-byte limit"
    if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
        if phase == "body":
            return "context deadline exceeded (Client.Timeout or context cancellation while reading body)"
        return post + "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(exc, httpx.RemoteProtocolError):
        # Go: no response at all is "EOF"; a body cut short is io.ReadAll's "unexpected EOF".
        return (post + "EOF") if phase == "headers" else "unexpected EOF"
    os_error = find_os_error(exc)
    if isinstance(os_error, socket.gaierror):
        host = _host_port(url).rsplit(":", 1)[0].strip("[]")
        return post + f"dial tcp: lookup {host}: no such host"
    if os_error is not None and isinstance(exc, httpx.ConnectError):
        reason = _ERRNO_TEXT.get(os_error.errno or 0, os_error.strerror or describe(os_error))
        return post + f"dial tcp {_host_port(url)}: connect: {reason}"
    if os_error is not None and os_error.errno in _ERRNO_TEXT:
        return post + f"read tcp {_host_port(url)}: {_ERRNO_TEXT[os_error.errno or 0]}"
    return post + describe(exc)


_ERRNO_TEXT: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ENETUNREACH: "network is unreachable",
    errno.EHOSTUNREACH: "no route to host",
    errno.ETIMEDOUT: "connection timed out",
    errno.EPIPE: "broken pipe",
}
