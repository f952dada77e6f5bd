"""The ``@pretty`` modifier (``github.com/tidwall/pretty`` v1.2.1), run on the trampoline."""

from __future__ import annotations

import json as _stdjson
import re
from typing import Any, Final

from execution.engine.goports.gjson.result import _charge, _parse_float0, _Step, _trampoline
from execution.engine.goports.gjson.scan import _BACKSLASH, _GO_SPACE, _QUOTE, _for_each, _parse

# ---- @pretty (github.com/tidwall/pretty v1.2.1), on the trampoline --------------------------


class _PrettyOpts:
    __slots__ = ("indent", "prefix", "sort_keys", "width")

    def __init__(self) -> None:
        self.width = 80
        self.prefix = b""
        self.indent = b"  "
        self.sort_keys = False


def _clean_ws(s: bytes) -> bytes:
    return bytes(c for c in s if c in b" \t\n\r")


def _mod_pretty(j: bytes, arg: bytes, d: int) -> bytes:
    opts = _PrettyOpts()
    if arg:
        for key, value in _for_each(_parse(arg)):
            k = key.string()
            if k == b"sortKeys":
                opts.sort_keys = value.as_bool()
            elif k == b"indent":
                opts.indent = _clean_ws(value.string())
            elif k == b"prefix":
                opts.prefix = _clean_ws(value.string())
            elif k == b"width":
                opts.width = value.as_int()
    buf = bytearray(opts.prefix)
    _trampoline(_pretty_any(buf, j, 0, True, opts.width, opts.prefix, opts.indent, opts.sort_keys, 0, 0, -1))
    if buf:
        buf.append(0x0A)
    return bytes(buf)


def _is_nan_or_inf(j: bytes, i: int) -> bool:
    c = j[i]
    return c in b"iI+N" or (c == 0x6E and i + 1 < len(j) and j[i + 1] != 0x75)


def _pretty_any(
    buf: bytearray,
    j: bytes,
    i: int,
    pretty: bool,
    width: int,
    prefix: bytes,
    indent: bytes,
    sortkeys: bool,
    tabs: int,
    nl: int,
    mx: int,
) -> _Step:
    n = len(j)
    while i < n:
        c = j[i]
        if c <= 0x20:
            i += 1
            continue
        if c == _QUOTE:
            return _pretty_string(buf, j, i, nl)
        if 0x30 <= c <= 0x39 or c == 0x2D or _is_nan_or_inf(j, i):
            return _pretty_number(buf, j, i, nl)
        if c == 0x7B or c == 0x5B:
            close = 0x7D if c == 0x7B else 0x5D
            r = yield (
                _pretty_object,
                (buf, j, i, c, close, pretty, width, prefix, indent, sortkeys, tabs, nl, mx),
            )
            return r
        if c == 0x74:
            buf += b"true"
            return i + 4, nl, True
        if c == 0x66:
            buf += b"false"
            return i + 5, nl, True
        if c == 0x6E:
            buf += b"null"
            return i + 4, nl, True
        i += 1
    return i, nl, True


def _pretty_string(buf: bytearray, j: bytes, i: int, nl: int) -> tuple[int, int, bool]:
    s = i
    i += 1
    n = len(j)
    while i < n:
        if j[i] == _QUOTE:
            sc = 0
            k = i - 1
            while k > s and j[k] == _BACKSLASH:
                sc += 1
                k -= 1
            if sc % 2 == 1:
                i += 1
                continue
            i += 1
            break
        i += 1
    buf += j[s:i]
    return i, nl, True


_PRETTY_NUM_END: Final = re.compile(rb"[\x00- ,:\]}]")


def _pretty_number(buf: bytearray, j: bytes, i: int, nl: int) -> tuple[int, int, bool]:
    m = _PRETTY_NUM_END.search(j, i + 1)
    e = m.start() if m else len(j)
    buf += j[i:e]
    return e, nl, True


def _append_tabs(buf: bytearray, prefix: bytes, indent: bytes, tabs: int) -> None:
    if prefix:
        buf += prefix
    buf += indent * tabs


def _pretty_object(
    buf: bytearray,
    j: bytes,
    i: int,
    open_: int,
    close: int,
    pretty: bool,
    width: int,
    prefix: bytes,
    indent: bytes,
    sortkeys: bool,
    tabs: int,
    nl: int,
    mx: int,
) -> _Step:
    """pretty's ``appendPrettyObject`` for an object or array at ``j[i]``: (next, nl, ok)."""
    if width > 0:
        if pretty and open_ == 0x5B and mx == -1:
            # Try the whole array on one line first.
            mx2 = width - (len(buf) - nl)
            if mx2 > 3:
                start = len(buf)
                end, _, ok = yield (
                    _pretty_object,
                    (buf, j, i, 0x5B, 0x5D, False, width, prefix, b"", sortkeys, 0, 0, mx2),
                )
                if _fits_one_line(buf, start, ok, mx2):
                    return end, nl, True
        elif mx != -1 and open_ == 0x7B:
            return i, nl, False
    buf.append(open_)
    i += 1
    sorting = pretty and open_ == 0x7B and sortkeys
    pairs: list[list[int]] = []
    n = 0
    ln = len(j)
    while i < ln:
        c = j[i]
        if c == close:
            if pretty:
                nl = _pretty_close(buf, j, open_, sorting, pairs, n, prefix, indent, tabs, nl)
            buf.append(close)
            return i + 1, nl, open_ != 0x7B
        if c <= 0x20 or (open_ == 0x7B and c != _QUOTE):
            i += 1
            continue
        p = [0, 0, 0, 0]  # key start, key end, member start in buf, member end in buf
        i, nl = _pretty_member_head(buf, j, i, open_, pretty, width, prefix, indent, tabs, n, nl, p)
        i, nl, ok = yield (
            _pretty_any,
            (buf, j, i, pretty, width, prefix, indent, sortkeys, tabs + 1, nl, mx),
        )
        if mx != -1 and not ok:
            return i, nl, False
        if sorting:
            sortkeys = sorting = _record_pair(buf, pairs, p)
        n += 1
    return i, nl, open_ != 0x7B


def _fits_one_line(buf: bytearray, start: int, ok: bool, mx: int) -> bool:
    """Did the array written on one line from ``start`` fit in ``mx`` bytes? If not, it is taken
    back out of ``buf``."""
    _charge(len(buf) - start)
    if ok and len(buf) - start <= mx:
        return True
    del buf[start:]
    return False


def _newline(buf: bytearray) -> int:
    """End the line (a trailing space becomes the newline); the new line's start."""
    nl = len(buf)
    if buf[nl - 1] == 0x20:
        buf[nl - 1] = 0x0A
    else:
        buf.append(0x0A)
    return nl


def _pretty_member_head(
    buf: bytearray,
    j: bytes,
    i: int,
    open_: int,
    pretty: bool,
    width: int,
    prefix: bytes,
    indent: bytes,
    tabs: int,
    n: int,
    nl: int,
    p: list[int],
) -> tuple[int, int]:
    """What comes before a member's value: the separator, the new line and indent, an object's
    key and colon. Records the key's and the member's start in ``p``; (next, nl)."""
    if n > 0:
        buf.append(0x2C)
        if width != -1 and open_ == 0x5B:
            buf.append(0x20)
    if pretty:
        nl = _newline(buf)
        p[0] = i
        p[2] = len(buf)
        _append_tabs(buf, prefix, indent, tabs + 1)
    if open_ == 0x7B:
        i, nl, _ = _pretty_string(buf, j, i, nl)
        p[1] = i
        buf.append(0x3A)
        if pretty:
            buf.append(0x20)
    return i, nl


def _record_pair(buf: bytearray, pairs: list[list[int]], p: list[int]) -> bool:
    """Keep a written member for sorting; False (stop sorting) when its bounds are inconsistent."""
    p[3] = len(buf)
    if p[0] > p[1] or p[2] > p[3]:
        return False
    pairs.append(p)
    return True


def _pretty_close(
    buf: bytearray,
    j: bytes,
    open_: int,
    sorting: bool,
    pairs: list[list[int]],
    n: int,
    prefix: bytes,
    indent: bytes,
    tabs: int,
    nl: int,
) -> int:
    """Before the closing bracket of a pretty container: sort its members, end the last line,
    indent. Returns nl."""
    if sorting:
        _sort_pairs(j, buf, pairs)
    if n > 0:
        nl = _newline(buf)
    if buf[-1] != open_:
        _append_tabs(buf, prefix, indent, tabs)
    return nl


def _pretty_jtype(v: bytes) -> int:
    if not v:
        return 0
    c = v[0]
    if c == _QUOTE:
        return 3
    if c == 0x66:
        return 1
    if c == 0x74:
        return 4
    if c == 0x6E:
        return 0
    if c in b"[{":
        return 5
    return 2


def _pretty_parsestr(s: bytes) -> bytes:
    for i in range(1, len(s)):
        if s[i] == _BACKSLASH:
            try:
                out = _stdjson.loads(s.decode("utf-8", "replace"))
            except ValueError:
                return b""
            return out.encode("utf-8", "surrogatepass") if isinstance(out, str) else b""
        if s[i] == _QUOTE:
            return s[1:i]
    return b""


def _sort_pairs(j: bytes, buf: bytearray, pairs: list[list[int]]) -> None:
    if not pairs:
        return
    vstart = pairs[0][2]

    def sort_key(p: list[int]) -> tuple[Any, ...]:
        k = j[p[0] : p[1]]
        v = bytes(buf[p[2] : p[3]]).strip(_GO_SPACE)
        if len(v) >= len(k) + 1:
            v = v[len(k) + 1 :].strip(_GO_SPACE)
        return (_pretty_rank(k), _pretty_rank(v))

    ranked = sorted(pairs, key=sort_key)
    if ranked == pairs:
        return
    nbuf = bytearray()
    for idx, p in enumerate(ranked):
        nbuf += buf[p[2] : p[3]]
        if idx < len(ranked) - 1:
            nbuf += b",\n"
    del buf[vstart:]
    buf += nbuf


def _pretty_rank(v: bytes) -> tuple[int, Any]:
    t = _pretty_jtype(v)
    if t == 3:
        return t, _pretty_parsestr(v)
    if t == 2:
        return t, _parse_float0(v)
    return t, v
