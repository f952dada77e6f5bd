"""Array queries ``#(...)`` and ``#(...)#``: parsing the query and testing one value against it."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from execution.engine.goports.gjson.flavour import is_legacy
from execution.engine.goports.gjson.match import _match_limit
from execution.engine.goports.gjson.result import FALSE, NULL, NUMBER, STRING, TRUE, Result, _parse_float0
from execution.engine.goports.gjson.scan import _BACKSLASH, _QUOTE, _trim

if TYPE_CHECKING:
    from execution.engine.goports.gjson.paths import _ArrPath


def _parse_query(q: bytes) -> tuple[bytes, bytes, bytes, int, bool, bool]:
    """gjson ``parseQuery`` on ``#(...)``: (path, op, value, index past ')', escaped, ok)."""
    if len(q) < 2 or q[0] != 0x23 or q[1] not in b"([":
        return b"", b"", b"", 0, False, False
    i, j, vesc, closed = _query_extent(q)
    if not closed:
        return b"", b"", b"", i, False, False
    if j == 0:
        return _trim(q[2:i]), b"", b"", i + 1, vesc, True
    op, value = _split_operator(_trim(q[j:i]))
    return _trim(q[2:j]), op, _trim(value), i + 1, vesc, True


def _query_extent(q: bytes) -> tuple[int, int, bool, bool]:
    """Scan ``#(...`` from its third byte: (index of the closing bracket, index of the operator or
    0, a string in it had an escape, the bracket was closed)."""
    n = len(q)
    i = 2
    j = 0
    depth = 1
    vesc = False
    while i < n:
        c = q[i]
        if depth == 1 and j == 0 and c in b"!=<>%":
            j = i
        elif c == _BACKSLASH:
            i += 1
        elif c == 0x5B or c == 0x28:
            depth += 1
        elif c == 0x5D or c == 0x29:
            depth -= 1
            if depth == 0:
                return i, j, vesc, True
        elif c == _QUOTE:
            i, esc = _skip_quoted(q, i)
            vesc = vesc or esc
        i += 1
    return i, j, vesc, False


def _skip_quoted(s: bytes, i: int) -> tuple[int, bool]:
    """From the quote at ``s[i]``: (index of the closing quote or the end, saw a backslash)."""
    n = len(s)
    esc = False
    i += 1
    while i < n:
        c = s[i]
        if c == _BACKSLASH:
            esc = True
            i += 1
        elif c == _QUOTE:
            break
        i += 1
    return i, esc


def _split_operator(value: bytes) -> tuple[bytes, bytes]:
    """A query's right-hand side into (operator, operand); ``==`` is read as ``=``."""
    if len(value) == 1:
        return value, b""
    if value[:2] in (b"!=", b"!%", b"<=", b">="):
        return value[:2], value[2:]
    if value[:2] == b"==":
        return value[1:2], value[2:]
    if value[:1] in (b"<", b">", b"=", b"%"):
        return value[:1], value[1:]
    return b"", value


def _go_parse_bool(s: bytes) -> bool | None:
    low = s.lower()
    if low in (b"1", b"t", b"true"):
        return True
    if low in (b"0", b"f", b"false"):
        return False
    return None


# A query's comparison operators on strings (byte order, as Go compares strings) and on numbers.
_COMPARISONS: Final[dict[bytes, Callable[[Any, Any], bool]]] = {
    b"=": operator.eq,
    b"!=": operator.ne,
    b"<": operator.lt,
    b"<=": operator.le,
    b">": operator.gt,
    b">=": operator.ge,
}


def _is_truthy(value: Result) -> bool:
    """``~true``: a true, a string Go's ParseBool reads as true, a non-zero number."""
    t = value.type
    if t == STRING:
        return _go_parse_bool(value.str) is True
    if t == NUMBER:
        return value.num != 0
    return t == TRUE


def _is_falsy(value: Result) -> bool:
    """``~false``: null, false, a string Go's ParseBool reads as false, a zero."""
    t = value.type
    if t == STRING:
        return _go_parse_bool(value.str) is False
    if t == NUMBER:
        return value.num == 0
    return t in (NULL, FALSE)


_TILDE_TESTS: Final[dict[bytes, Callable[[Result], bool]]] = {
    b"*": lambda value: value.exists,
    b"null": lambda value: value.type == NULL,
    b"true": _is_truthy,
    b"false": _is_falsy,
}


def _tilde(rpv: bytes, value: Result) -> tuple[bytes, Result]:
    """``~true``, ``~false``, ``~null``, ``~*``: compare the value's truthiness instead; any other
    ``~`` operand matches nothing."""
    test = _TILDE_TESTS.get(rpv)
    if test is None:
        return b"", Result()
    return b"true", Result(TRUE) if test(value) else Result(FALSE)


def _compare_bool(op: bytes, rpv: bytes, truth: bool) -> bool:
    """gjson's comparisons of a true or false value with the operand (false sorts before true)."""
    own, other = (b"true", b"false") if truth else (b"false", b"true")
    if op == b"=":
        return rpv == own
    if op == b"!=":
        return rpv != own
    if op == (b">" if truth else b"<"):
        return rpv == other
    return op == (b">=" if truth else b"<=")


def _query_matches(rp: _ArrPath, value: Result) -> bool:
    """gjson ``queryMatches``: does ``value`` (the element, or its query path) satisfy the query?"""
    rpv = rp.q_value
    if rpv[:1] == b"~":
        if is_legacy():
            # v1.14.4: the value becomes Result.Bool(), the operand stays as written.
            rpv, value = rpv[1:], Result(TRUE) if _is_truthy(value) else Result(FALSE)
        else:
            rpv, value = _tilde(rpv[1:], value)
    if not value.exists:
        return False
    op = rp.q_op
    if op == b"":
        return True
    t = value.type
    if t == STRING:
        if op == b"%" or op == b"!%":
            return _match_limit(value.str, rpv) == (op == b"%")
        compare = _COMPARISONS.get(op)
        return compare is not None and compare(value.str, rpv)
    if t == NUMBER:
        compare = _COMPARISONS.get(op)
        return compare is not None and compare(value.num, _parse_float0(rpv))
    if t in (TRUE, FALSE):
        return _compare_bool(op, rpv, t == TRUE)
    return False
