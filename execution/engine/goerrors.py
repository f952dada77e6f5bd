"""Error causes worded like the Go router's (ROUTER-SEMANTICS §2.3), byte for byte where Go decides
without the network.

KServe's ``callService`` runs ``url.Parse``, ``http.NewRequest`` and ``http.Client.Do``; the first
failure becomes the cause. :func:`go_url_error` follows those steps for everything Go refuses
before it sends a packet (Go 1.19 net/url, net/http and net's address checks);
:func:`go_request_url` is the URL as Go's errors print it; :func:`transport_cause` words a failed
call. Every case is checked against KServe's router (``tests/engine/data/go_url_errors.json``,
``go_transport_errors.json``).
"""

from __future__ import annotations

import ast
import errno
import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass
from typing import Final

import httpx

from execution.engine.http import ResponseTooLarge, describe, find_os_error

__all__ = ["go_parse_error", "go_quote", "go_request_url", "go_url_error", "transport_cause"]


# --- Go's strconv.Quote ---------------------------------------------------------------------------

_QUOTE_ESCAPES: Final = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}  # fmt: skip


def go_quote(text: str) -> str:
    """Go's ``%q`` / ``strconv.Quote``: printable runes kept, the rest escaped Go's way."""
    out = ['"']
    for char in text:
        mapped = _QUOTE_ESCAPES.get(char)
        if mapped is not None:
            out.append(mapped)
            continue
        code = ord(char)
        if char.isprintable():
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")  # not valid UTF-8 in Go; Quote writes the replacement escape
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


# --- net/url --------------------------------------------------------------------------------------

_ALNUM: Final = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HOST_EXTRA: Final = frozenset(b"!$&'()*+,;=:[]<>\"")
_UNRESERVED_MARKS: Final = frozenset(b"-_.~")
_RESERVED: Final = frozenset(b"$&+,/:;=?@")
_USERINFO_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@"
)
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
# Bytes validEncoded leaves alone whatever the mode.
_VALID_ENCODED_EXTRA: Final = frozenset(b"!$&'()*+,;=:@[]%")


class _ParseError(Exception):
    pass


def _should_escape(byte: int, mode: str) -> bool:
    """net/url ``shouldEscape`` for the modes ``host``, ``zone``, ``path``, ``user``, ``fragment``."""
    if byte in _ALNUM:
        return False
    if mode in ("host", "zone") and byte in _HOST_EXTRA:
        return False
    if byte in _UNRESERVED_MARKS:
        return False
    if byte in _RESERVED:
        if mode == "path":
            return byte == 0x3F  # '?'
        if mode == "user":
            return byte in b"@/?:"
        if mode == "fragment":
            return False
    # Everything else is escaped, except the sub-delimiters a fragment may hold as they are.
    return not (mode == "fragment" and byte in b"!()*")


def _escape_error(text: bytes) -> _ParseError:
    return _ParseError(f"invalid URL escape {go_quote(text.decode('utf-8', 'replace'))}")


def _unescape(text: bytes, mode: str) -> bytes:
    """net/url ``unescape``: percent-decode, refusing what Go refuses for ``mode``."""
    i = 0
    n = len(text)
    while i < n:
        byte = text[i]
        if byte == 0x25:  # '%'
            if i + 2 >= n or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                raise _escape_error(text[i : i + 3])
            value = int(text[i + 1 : i + 3], 16)
            if mode == "host" and value < 0x80 and text[i : i + 3] != b"%25":
                raise _escape_error(text[i : i + 3])
            if (
                mode == "zone"
                and text[i : i + 3] != b"%25"
                and value != 0x20
                and _should_escape(value, "host")
            ):
                raise _escape_error(text[i : i + 3])
            i += 3
            continue
        if mode in ("host", "zone") and byte < 0x80 and _should_escape(byte, mode):
            char = go_quote(chr(byte))
            raise _ParseError(f"invalid character {char} in host name")
        i += 1
    out = bytearray()
    i = 0
    while i < n:
        if text[i] == 0x25:
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return bytes(out)


def _escape(text: bytes, mode: str) -> bytes:
    """net/url ``escape`` for the non-query modes (a space is ``%20`` in all of them)."""
    out = bytearray()
    for byte in text:
        if _should_escape(byte, mode):
            out += b"%%%02X" % byte
        else:
            out.append(byte)
    return bytes(out)


def _valid_encoded(text: bytes, mode: str) -> bool:
    return all(byte in _VALID_ENCODED_EXTRA or not _should_escape(byte, mode) for byte in text)


def _valid_optional_port(port: bytes) -> bool:
    if not port:
        return True
    return port[:1] == b":" and all(0x30 <= byte <= 0x39 for byte in port[1:])


def _parse_host(host: bytes) -> bytes:
    if host.startswith(b"["):
        end = host.rfind(b"]")
        if end < 0:
            raise _ParseError("missing ']' in host")
        colon_port = host[end + 1 :]
        if not _valid_optional_port(colon_port):
            raise _ParseError(f"invalid port {go_quote(colon_port.decode('utf-8', 'replace'))} after host")
        zone = host[:end].find(b"%25")
        if zone >= 0:
            return (
                _unescape(host[:zone], "host")
                + _unescape(host[zone:end], "zone")
                + _unescape(host[end:], "host")
            )
    else:
        colon = host.rfind(b":")
        if colon >= 0 and not _valid_optional_port(host[colon:]):
            port = host[colon:].decode("utf-8", "replace")
            raise _ParseError(f"invalid port {go_quote(port)} after host")
    return _unescape(host, "host")


@dataclass
class _URL:
    """The fields of Go's ``url.URL`` that matter here (bytes, as Go's strings are)."""

    scheme: bytes = b""
    opaque: bytes = b""
    user: bytes | None = None  # username, unescaped
    password: bytes | None = None  # None: no password set
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    omit_host: bool = False  # "scheme:/path": no authority at all (Go's URL.OmitHost)
    force_query: bool = False
    raw_query: bytes = b""
    fragment: bytes = b""
    raw_fragment: bytes = b""

    def escaped_path(self) -> bytes:
        if self.raw_path and _valid_encoded(self.raw_path, "path"):
            try:
                if _unescape(self.raw_path, "path") == self.path:
                    return self.raw_path
            except _ParseError:
                pass
        if self.path == b"*":
            return b"*"
        return _escape(self.path, "path")

    def escaped_fragment(self) -> bytes:
        if self.raw_fragment and _valid_encoded(self.raw_fragment, "fragment"):
            try:
                if _unescape(self.raw_fragment, "fragment") == self.fragment:
                    return self.raw_fragment
            except _ParseError:
                pass
        return _escape(self.fragment, "fragment")

    def string(self, *, redact: bool = False) -> bytes:
        """``URL.String()``; with ``redact``, the client's ``stripPassword`` (password -> ``***``)."""
        out = bytearray()
        if self.scheme:
            out += self.scheme + b":"
        if self.opaque:
            out += self.opaque
        else:
            if self.scheme or self.host or self.user is not None:
                if (self.host or self.path or self.user is not None) and not (
                    self.omit_host and not self.host and self.user is None
                ):
                    out += b"//"
                if self.user is not None:
                    if redact and self.password is not None:
                        out += self.user + b":***"
                    else:
                        out += _escape(self.user, "user")
                        if self.password is not None:
                            out += b":" + _escape(self.password, "user")
                    out += b"@"
                if self.host:
                    out += _escape(self.host, "host")
            path = self.escaped_path()
            if path and not path.startswith(b"/") and self.host:
                out += b"/"
            if not out and b":" in path.split(b"/", 1)[0]:
                out += b"./"
            out += path
        if self.force_query or self.raw_query:
            out += b"?" + self.raw_query
        if self.fragment:
            out += b"#" + self.escaped_fragment()
        return bytes(out)


def _get_scheme(raw: bytes) -> tuple[bytes, bytes]:
    for index, byte in enumerate(raw):
        if 0x61 <= byte <= 0x7A or 0x41 <= byte <= 0x5A:
            continue
        if 0x30 <= byte <= 0x39 or byte in b"+-.":
            if index == 0:
                return b"", raw
            continue
        if byte == 0x3A:
            if index == 0:
                raise _ParseError("missing protocol scheme")
            return raw[:index], raw[index + 1 :]
        return b"", raw
    return b"", raw


def _parse(raw: bytes) -> _URL:
    """Go's ``url.Parse`` without the fragment (``parse(rawURL, false)``)."""
    if any(byte < 0x20 or byte == 0x7F for byte in raw):
        raise _ParseError("net/url: invalid control character in URL")
    url = _URL()
    if raw == b"*":
        url.path = b"*"
        return url
    scheme, rest = _get_scheme(raw)
    url.scheme = scheme.lower()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        url.force_query = True
        rest = rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if url.scheme:
            url.opaque = rest  # a rootless path is opaque (RFC 3986)
            return url
        if b":" in rest.split(b"/", 1)[0]:
            raise _ParseError("first path segment in URL cannot contain colon")
    if (url.scheme or not rest.startswith(b"///")) and rest.startswith(b"//"):
        authority, slash, path = rest[2:].partition(b"/")
        rest = slash + path
        at = authority.rfind(b"@")
        url.host = _parse_host(authority[at + 1 :] if at >= 0 else authority)
        if at >= 0:
            userinfo = authority[:at]
            if not all(char in _USERINFO_OK for char in userinfo.decode("utf-8", "replace")):
                raise _ParseError("net/url: invalid userinfo")
            if b":" in userinfo:
                name, _, password = userinfo.partition(b":")
                url.user = _unescape(name, "user")
                url.password = _unescape(password, "user")
            else:
                url.user = _unescape(userinfo, "user")
    elif url.scheme and rest.startswith(b"/"):
        url.omit_host = True
    url.path = _unescape(rest, "path")
    url.raw_path = b"" if _escape(url.path, "path") == rest else rest
    return url


def _parse_url(url: str) -> _URL:
    """Go's ``url.Parse(url)``; raises ``_ParseError`` whose text is the whole Go error."""
    raw = url.encode("utf-8", "surrogateescape")
    before, hash_mark, fragment = raw.partition(b"#")
    try:
        parsed = _parse(before)
    except _ParseError as exc:
        raise _ParseError(f"parse {go_quote(_text(before))}: {exc}") from None
    if hash_mark and fragment:
        try:
            parsed.fragment = _unescape(fragment, "fragment")
        except _ParseError as exc:
            raise _ParseError(f"parse {go_quote(url)}: {exc}") from None
        if _escape(parsed.fragment, "fragment") != fragment:
            parsed.raw_fragment = fragment
    return parsed


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _remove_empty_port(host: bytes) -> bytes:
    """net/http ``removeEmptyPort``: ``host:`` -> ``host`` (NewRequest does this)."""
    if host.rfind(b":") > host.rfind(b"]"):
        return host.removesuffix(b":")
    return host


def go_request_url(url: str) -> str:
    """The URL as Go's client errors print it (``Post "<this>": …``): Go's ``URL.String()`` of
    the parsed request URL (scheme lower-cased, empty port dropped, path and fragment escaped,
    a password as ``***``). Returns ``url`` unchanged if Go could not parse it."""
    try:
        parsed = _parse_url(url)
    except _ParseError:
        return url
    parsed.host = _remove_empty_port(parsed.host)
    return _text(parsed.string(redact=True))


# --- net: what Dial refuses before touching the network -------------------------------------------

_DEFAULT_PORTS: Final = {b"http": b"80", b"https": b"443"}


def _split_host_port(host: bytes) -> tuple[bytes, bytes]:
    """url.URL ``Hostname()`` and ``Port()``."""
    colon = host.rfind(b":")
    name, port = host, b""
    if colon >= 0 and _valid_optional_port(host[colon:]):
        name, port = host[:colon], host[colon + 1 :]
    if name.startswith(b"[") and name.endswith(b"]"):
        name = name[1:-1]
    return name, port


def _is_domain_name(name: str) -> bool:
    """Go's ``isDomainName`` (net/dnsclient.go): what its resolver is willing to look up."""
    if name == ".":
        return True
    size = len(name)
    if size == 0 or size > 254 or (size == 254 and not name.endswith(".")):
        return False
    last = "."
    non_numeric = False
    part = 0
    for char in name:
        if char.isascii() and (char.isalpha() or char == "_"):
            non_numeric = True
            part += 1
        elif char.isascii() and char.isdigit():
            part += 1
        elif char == "-":
            if last == ".":
                return False
            part += 1
            non_numeric = True
        elif char == ".":
            if last in ".-" or part > 63 or part == 0:
                return False
            part = 0
        else:
            return False
        last = char
    return last != "-" and part <= 63 and non_numeric


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _split_address(address: str) -> str | None:
    """What net.SplitHostPort says is wrong with ``address`` (Go's AddrError text), or None."""
    last = address.rfind(":")
    if last < 0:
        return "missing port in address"
    inner_start, inner_end = 0, 0
    if address.startswith("["):
        end = address.find("]")
        if end < 0:
            return "missing ']' in address"
        if end + 1 == len(address):
            return "missing port in address"
        if end + 1 != last:
            return "too many colons in address" if address[end + 1] == ":" else "missing port in address"
        inner_start, inner_end = 1, end + 1
    elif ":" in address[:last]:
        return "too many colons in address"
    if "[" in address[inner_start:]:
        return "unexpected '[' in address"
    if "]" in address[inner_end:]:
        return "unexpected ']' in address"
    return None


def _dial_error(host: bytes, scheme: bytes) -> str | None:
    """``dial tcp: …`` for an address Go's net package refuses without a packet, else None."""
    name_raw, port_raw = _split_host_port(host)
    name, port = _text(name_raw), _text(port_raw or _DEFAULT_PORTS[scheme])
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")  # Go's transport dials the IDNA form
        except UnicodeError:
            return None  # Go's IDNA rules (UTS 46) differ in corners; leave these to the lookup
    address = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"  # net.JoinHostPort
    problem = _split_address(address)
    if problem is not None:
        return f"dial tcp: address {address}: {problem}"
    if int(port) > 65535:
        return f"dial tcp: address {port}: invalid port"
    if not name or _is_ip(name) or _is_domain_name(name):
        return None
    return f"dial tcp: lookup {name}: no such host"


def go_parse_error(url: str) -> str | None:
    """Go's ``url.Parse(url)`` error text (``parse "URL": …``), or None when it parses. Pure."""
    try:
        _parse_url(url)
    except _ParseError as exc:
        return str(exc)
    return None


def go_url_error(url: str) -> str | None:
    """The cause Go gives for ``url`` before any packet is sent, or None if it would dial.

    In KServe's order: ``url.Parse`` (``parse "URL": …``), then the client's checks on the
    parsed URL (``Post "URL": unsupported protocol scheme "…"``, ``… http: no Host in request
    URL``), then the dialer's own checks of the address (``dial tcp: address …: invalid port``,
    ``dial tcp: lookup NAME: no such host`` for a name that is neither an IP address nor a
    valid domain name). Pure.
    """
    try:
        parsed = _parse_url(url)
    except _ParseError as exc:
        return str(exc)
    parsed.host = _remove_empty_port(parsed.host)
    post = f"Post {go_quote(_text(parsed.string(redact=True)))}: "
    if parsed.scheme not in _DEFAULT_PORTS:
        return post + f"unsupported protocol scheme {go_quote(_text(parsed.scheme))}"
    if not parsed.host:
        return post + "http: no Host in request URL"
    problem = _dial_error(parsed.host, parsed.scheme)
    return post + problem if problem is not None else None


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
