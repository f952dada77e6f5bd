"""Go's ``strconv.Quote`` and ``net/url`` (Go 1.19): parsing a URL and printing it back as Go's
errors do."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Final

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
                out += self._authority(redact)
            out += self._path_after(out)
        if self.force_query or self.raw_query:
            out += b"?" + self.raw_query
        if self.fragment:
            out += b"#" + self.escaped_fragment()
        return bytes(out)

    def _authority(self, redact: bool) -> bytes:
        """``//user:password@host`` (each part as present)."""
        out = bytearray()
        if (self.host or self.path or self.user is not None) and not (
            self.omit_host and not self.host and self.user is None
        ):
            out += b"//"
        if self.user is not None:
            out += self._userinfo(redact) + b"@"
        if self.host:
            out += _escape(self.host, "host")
        return bytes(out)

    def _userinfo(self, redact: bool) -> bytes:
        if self.password is None:
            return _escape(self.user or b"", "user")
        if redact:
            return (self.user or b"") + b":***"
        return _escape(self.user or b"", "user") + b":" + _escape(self.password, "user")

    def _path_after(self, before: bytearray) -> bytes:
        """The escaped path, with the '/' or './' Go puts before it after what is written so far."""
        path = self.escaped_path()
        if path and not path.startswith(b"/") and self.host:
            return b"/" + path
        if not before and b":" in path.split(b"/", 1)[0]:
            return b"./" + path
        return path


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
        _parse_authority(url, authority)
    elif url.scheme and rest.startswith(b"/"):
        url.omit_host = True
    url.path = _unescape(rest, "path")
    url.raw_path = b"" if _escape(url.path, "path") == rest else rest
    return url


def _parse_authority(url: _URL, authority: bytes) -> None:
    """Go's ``parseAuthority``: ``[userinfo@]host`` into the URL's user, password and host."""
    at = authority.rfind(b"@")
    url.host = _parse_host(authority[at + 1 :] if at >= 0 else authority)
    if at < 0:
        return
    userinfo = authority[:at]
    if not all(char in _USERINFO_OK for char in userinfo.decode("utf-8", "replace")):
        raise _ParseError("net/url: invalid userinfo")
    if b":" in userinfo:
        name, _, password = userinfo.partition(b":")
        url.user = _unescape(name, "user")
        url.password = _unescape(password, "user")
    else:
        url.user = _unescape(userinfo, "user")


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


def go_basic_auth(url: str) -> str | None:
    """The ``Authorization`` value Go's client derives from the URL's user info, or None without one.

    net/http ``send`` (client.go): ``if u := req.URL.User; u != nil && req.Header.Get("Authorization")
    == ""`` it sets ``Basic`` + base64(username + ":" + password), both percent-decoded by
    ``url.Parse`` (bytes, so a ``%FF`` stays one byte); ``http://@host/`` has an empty user, which
    still counts. The header check is the caller's (:func:`execution.engine.transport.outbound` per hop).
    """
    if "@" not in url:
        return None
    try:
        parsed = _parse_url(url)
    except _ParseError:
        return None
    if parsed.user is None:
        return None
    credentials = parsed.user + b":" + (parsed.password or b"")
    return "Basic " + base64.b64encode(credentials).decode("ascii")
