"""Array queries ``#(...)`` and ``#(...)#``: parsing the query and testing one value against it."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from execution.engine.gjson.match import _match_limit
from execution.engine.gjson.result import FALSE, NULL, NUMBER, STRING, TRUE, Result, _parse_float0
from execution.engine.gjson.scan import _BACKSLASH, _QUOTE, _trim

if TYPE_CHECKING:
    from execution.engine.gjson.paths import _ArrPath


def _parse_query(q: bytes) -> tuple[bytes, bytes, bytes, int, bool, bool]:
    """gjson ``parseQuery`` on ``#(...)``: (path, op, value, index past ')', escaped, ok)."""
    n = len(q)
    if n < 2 or q[0] != 0x23 or q[1] not in b"([":
        return b"", b"", b"", 0, False, False
    i = 2
    j = 0
    depth = 1
    vesc = False
    while i < n:
        c = q[i]
        if depth == 1 and j == 0 and c in b"!=<>%":
            j = i
            i += 1
            continue
        if c == _BACKSLASH:
            i += 1
        elif c == 0x5B or c == 0x28:
            depth += 1
        elif c == 0x5D or c == 0x29:
            depth -= 1
            if depth == 0:
                break
        elif c == _QUOTE:
            i += 1
            while i < n:
                if q[i] == _BACKSLASH:
                    vesc = True
                    i += 1
                elif q[i] == _QUOTE:
                    break
                i += 1
        i += 1
    if depth > 0:
        return b"", b"", b"", i, False, False
    if j > 0:
        path = _trim(q[2:j])
        value = _trim(q[j:i])
        if len(value) == 1:
            opsz = 1
        elif value[:2] in (b"!=", b"!%", b"<=", b">="):
            opsz = 2
        elif value[:2] == b"==":
            value = value[1:]
            opsz = 1
        elif value[:1] in (b"<", b">", b"=", b"%"):
            opsz = 1
        else:
            opsz = 0
        return path, value[:opsz], _trim(value[opsz:]), i + 1, vesc, True
    return _trim(q[2:i]), b"", b"", i + 1, vesc, True


# --------------------------------------------------------------------------------------------
# Query matching
# --------------------------------------------------------------------------------------------


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


def _query_matches(rp: _ArrPath, value: Result) -> bool:
    rpv = rp.q_value
    if rpv[:1] == b"~":
        rpv = rpv[1:]
        ish: bool | None = None
        if rpv == b"*":
            ish = value.exists
        elif rpv == b"null":
            ish = value.type == NULL
        elif rpv == b"true":
            t = value.type
            if t == TRUE:
                ish = True
            elif t == STRING:
                ish = _go_parse_bool(value.str) is True
            elif t == NUMBER:
                ish = value.num != 0
            else:
                ish = False
        elif rpv == b"false":
            t = value.type
            if t in (NULL, FALSE):
                ish = True
            elif t == STRING:
                ish = _go_parse_bool(value.str) is False
            elif t == NUMBER:
                ish = value.num == 0
            else:
                ish = False
        if ish is not None:
            rpv = b"true"
            value = Result(TRUE) if ish else Result(FALSE)
        else:
            rpv = b""
            value = Result()
    if not value.exists:
        return False
    op = rp.q_op
    if op == b"":
        return True
    t = value.type
    if t == STRING:
        if op == b"%":
            return _match_limit(value.str, rpv)
        if op == b"!%":
            return not _match_limit(value.str, rpv)
        compare = _COMPARISONS.get(op)
        return compare is not None and compare(value.str, rpv)
    if t == NUMBER:
        compare = _COMPARISONS.get(op)
        return compare is not None and compare(value.num, _parse_float0(rpv))
    if t == TRUE:
        if op == b"=":
            return rpv == b"true"
        if op == b"!=":
            return rpv != b"true"
        if op == b">":
            return rpv == b"false"
        return op == b">="
    if t == FALSE:
        if op == b"=":
            return rpv == b"false"
        if op == b"!=":
            return rpv != b"false"
        if op == b"<":
            return rpv == b"true"
        return op == b"<="
    return False
