"""The common HTTP/1.1 exchange of a step call, written and read without h11 (``plainpool.py``).

h11 is the state machine under the engine's ``http://`` calls: its framing and its error texts are
what the Go error mapping reads (``causes.py``). It is also most of a call's CPU: a
request is validated field by field and every received event passes through its state machine,
about a quarter of a hop after a step's wait (``bench/bench_engine.py``, P2 and P3).

Almost every step call is the same exchange: a request with plain header fields and a
``Content-Length`` (or no body), answered by ``HTTP/1.1`` with a final status, plain header fields
and a ``Content-Length``. This module handles exactly that exchange, and only where h11 would do
the same thing with it:

- :func:`encode_request` returns the bytes h11 would write, or None when h11 might write anything
  else or refuse the request (a field h11 validates or acts on: ``Connection``, ``Expect``,
  ``Upgrade``, ``Transfer-Encoding``, a second ``Host`` or ``Content-Length``; a body that does not
  match its length; any other method than ``GET`` or ``POST``);
- :func:`parse_response_head` returns the head h11 would parse from a received piece, or None when
  the piece holds anything h11 treats apart: an incomplete head, a bare CR or LF, a folded or
  malformed line, another version than 1.1, a 1xx, 204 or 304 status, ``Connection``,
  ``Transfer-Encoding``, no or several ``Content-Length`` fields.

None sends the exchange through h11 from its start (``plainpool._Connection`` replays what was
sent and read), so every refusal, error text and keep-alive decision stays h11's. The patterns are
h11's grammar (``h11/_abnf.py``); ``tests/engine/test_engine_h1.py`` compares both ways byte by byte.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, NamedTuple, cast

__all__ = ["Head", "encode_request", "parse_response_head"]

_TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_FIELD_CONTENT: Final = rb"[^\x00\s]+(?:[ \t]+[^\x00\s]+)*"
_NAME_RE: Final = re.compile(_TOKEN)
_VALUE_RE: Final = re.compile(rb"(?:" + _FIELD_CONTENT + rb")?")
_LINE_RE: Final = re.compile(rb"(" + _TOKEN + rb"):[ \t]*((?:" + _FIELD_CONTENT + rb")?)[ \t]*")
_STATUS_RE: Final = re.compile(rb"HTTP/1\.1 ([0-9]{3})(?: ((?:[ \t]|[^\x00\s])*))?")
# h11 refuses a Content-Length of more than 20 digits.
_LENGTH_RE: Final = re.compile(rb"[0-9]{1,20}")
# Fields h11 validates or acts on when it sends a request: they go through h11.
_REQUEST_APART: Final = frozenset({b"connection", b"expect", b"upgrade", b"transfer-encoding"})
# Fields that change how h11 frames or keeps a response.
_RESPONSE_APART: Final = frozenset({b"connection", b"transfer-encoding"})
# Statuses h11 frames apart: 1xx are informational, 204 and 304 never have a body.
_NO_BODY: Final = frozenset({204, 304})


# Fields seen before, with what checking them gave: a graph calls its steps with the same few
# fields, and their servers answer with the same few, so most checks are one dict look-up instead
# of two pattern matches (``bench/bench_hop_cost.py`` counts a step call's instructions). Each
# memo is emptied when it reaches this many entries (a ``Date`` field changes every second), and
# keeps only fields of up to this many bytes, so it holds at most about 1 MiB. The memos are
# shared by the threads of a process; an entry is a pure function of its key.
_MEMO_ENTRIES: Final = 4096
_MEMO_FIELD_BYTES: Final = 256
# (name, value) of a request field -> (its lower-case name, its line), or None: h11 would refuse it.
_REQUEST_FIELDS: dict[tuple[bytes, bytes], tuple[bytes, bytes] | None] = {}
# A response head's line -> (name, value, lower-case name), or None: not a plain field line.
_RESPONSE_LINES: dict[bytes, tuple[bytes, bytes, bytes] | None] = {}
_UNSEEN: Final = object()


def _request_field(name: bytes, value: bytes) -> tuple[bytes, bytes] | None:
    key = (name, value)
    known = _REQUEST_FIELDS.get(key, _UNSEEN)  # one look-up: another thread may empty the memo
    if known is not _UNSEEN:
        return cast("tuple[bytes, bytes] | None", known)
    checked = None
    if _NAME_RE.fullmatch(name) is not None and _VALUE_RE.fullmatch(value) is not None:
        checked = (name.lower(), b"%s: %s\r\n" % (name, value))
    if len(name) + len(value) <= _MEMO_FIELD_BYTES:
        if len(_REQUEST_FIELDS) >= _MEMO_ENTRIES:
            _REQUEST_FIELDS.clear()
        _REQUEST_FIELDS[key] = checked
    return checked


def _response_line(line: bytes) -> tuple[bytes, bytes, bytes] | None:
    known = _RESPONSE_LINES.get(line, _UNSEEN)
    if known is not _UNSEEN:
        return cast("tuple[bytes, bytes, bytes] | None", known)
    field = _LINE_RE.fullmatch(line)
    parsed = None if field is None else (field[1], field[2], field[1].lower())
    if len(line) <= _MEMO_FIELD_BYTES:
        if len(_RESPONSE_LINES) >= _MEMO_ENTRIES:
            _RESPONSE_LINES.clear()
        _RESPONSE_LINES[line] = parsed
    return parsed


class Head(NamedTuple):
    """A final response head with a ``Content-Length``, as h11 would report it."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    length: int  # the body's Content-Length
    body_at: int  # where the body starts in the piece the head was parsed from


def _only_length(value: bytes, seen: int | None) -> int | None:
    """The length a first ``Content-Length`` field says, when h11 would take it as it is (digits,
    no list); None for a second one or any other value."""
    if seen is not None or _LENGTH_RE.fullmatch(value) is None:
        return None
    return int(value)


def encode_request(
    method: bytes, target: bytes, headers: Sequence[tuple[bytes, bytes]], body: Sequence[bytes]
) -> bytes | None:
    """What h11 writes for this request (head, then ``body``'s pieces), or None (see the module doc).

    h11 writes the request line as given, ``Host`` first, the other fields in order and with their
    case, each ``name: value``.
    """
    if method != b"POST" and method != b"GET":
        return None
    host: bytes | None = None
    length: int | None = None
    lines = [b"%s %s HTTP/1.1\r\n" % (method, target), b""]
    for name, value in headers:
        checked = _request_field(name, value)
        if checked is None:
            return None
        lower, line = checked
        if lower == b"host":
            if host is not None:
                return None
            host = line
            continue
        if lower == b"content-length":
            if (length := _only_length(value, length)) is None:
                return None
        elif lower in _REQUEST_APART:
            return None
        lines.append(line)
    if host is None or sum(map(len, body)) != (length or 0):
        return None
    lines[1] = host
    lines.append(b"\r\n")
    lines.extend(body)
    return b"".join(lines)


def parse_response_head(data: bytes) -> Head | None:
    """The head at the start of ``data`` as h11 would parse it, or None (see the module doc)."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = data[:end].split(b"\r\n")
    status_line = _STATUS_RE.fullmatch(lines[0])
    if status_line is None:
        return None
    status = int(status_line[1])
    if status < 200 or status in _NO_BODY:
        return None
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    for line in lines[1:]:
        field = _response_line(line)
        if field is None:  # a folded line, a stray CR or LF, a malformed field: h11 decides
            return None
        name, value, lower = field
        if lower == b"content-length":
            if (length := _only_length(value, length)) is None:
                return None
        elif lower in _RESPONSE_APART:
            return None
        headers.append((name, value))
    if length is None:
        return None
    return Head(status, status_line[2] or b"", headers, length, end + 4)
