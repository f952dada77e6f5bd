"""``gjson.ValidBytes``: is a document exactly one JSON value?"""

from __future__ import annotations

import json as _stdjson
import re
from typing import Final

from execution.engine.goports.gjson.scan import _QUOTE

# --------------------------------------------------------------------------------------------
# Validation (gjson.ValidBytes)
# --------------------------------------------------------------------------------------------

_WS: Final = re.compile(rb"[ \t\n\r]*")
_V_STRING: Final = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
_V_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _noop(_s: str) -> int:
    return 0


def _reject(_s: str) -> int:
    raise ValueError("not JSON")


def _valid(data: bytes) -> bool:
    """gjson ``ValidBytes``: one RFC 8259 value with surrounding whitespace; any bytes in strings."""
    # Fast path: CPython's C decoder accepts exactly the same grammar once NaN/Infinity are
    # refused (its whitespace, number, string and escape rules are RFC 8259's, and it takes any
    # code point, even a lone surrogate, inside strings, which is what Go does with bad UTF-8).
    # It recurses in C and raises RecursionError on deep nesting; then the iterative scanner
    # below decides.
    try:
        _stdjson.loads(
            data.decode("utf-8", "surrogateescape"),
            parse_int=_noop,
            parse_float=_noop,
            parse_constant=_reject,
        )
    except RecursionError:
        return _valid_iterative(data)
    except ValueError:
        return False
    return True


def _skip_ws(data: bytes, i: int) -> int:
    m = _WS.match(data, i)
    return m.end() if m else i


def _valid_iterative(data: bytes) -> bool:
    """The same decision as :func:`_valid`, with an explicit stack (any nesting depth).

    ``stack`` holds the closer each open container waits for; an index of -1 means invalid.
    """
    n = len(data)
    stack = bytearray()
    i = _skip_ws(data, 0)
    want_value = True
    while i >= 0:
        if want_value:
            i, want_value = _valid_value(data, i, stack)
            continue
        i = _skip_ws(data, i)
        if not stack:
            return i == n
        i, want_value = _valid_after_value(data, i, stack)
    return False


def _valid_value(data: bytes, i: int, stack: bytearray) -> tuple[int, bool]:
    """A value starts at ``data[i]``: past a scalar or an empty container (want no value), or
    into a container (want its first value)."""
    if i >= len(data):
        return -1, False
    c = data[i]
    if c == 0x7B or c == 0x5B:
        close = c + 2
        i = _skip_ws(data, i + 1)
        if i < len(data) and data[i] == close:
            return i + 1, False
        stack.append(close)
        return (_valid_key(data, i) if c == 0x7B else i), True
    if c == _QUOTE:
        m = _V_STRING.match(data, i)
    elif c == 0x2D or 0x30 <= c <= 0x39:
        m = _V_NUMBER.match(data, i)
    elif data.startswith((b"true", b"false", b"null"), i):
        return i + (4 if c != 0x66 else 5), False
    else:
        return -1, False
    return (-1 if m is None else m.end()), False


def _valid_after_value(data: bytes, i: int, stack: bytearray) -> tuple[int, bool]:
    """After a value inside a container: its closer, or a ',' and the next member's start."""
    if i >= len(data):
        return -1, False
    c = data[i]
    if c == stack[-1]:
        stack.pop()
        return i + 1, False
    if c != 0x2C:
        return -1, False
    i = _skip_ws(data, i + 1)
    return (_valid_key(data, i) if stack[-1] == 0x7D else i), True


def _valid_key(data: bytes, i: int) -> int:
    """An object member's ``"key":`` at ``data[i]``: the index of its value, or -1."""
    m = _V_STRING.match(data, i)
    if m is None:
        return -1
    i = _skip_ws(data, m.end())
    if i >= len(data) or data[i] != 0x3A:
        return -1
    return _skip_ws(data, i + 1)
