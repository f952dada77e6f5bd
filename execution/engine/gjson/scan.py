"""Scanning a document as gjson does: strings, squashed containers, numbers, literals, escapes,
UTF-8 runes, ``parseAny``/``Parse``/``ForEach`` and ``AppendJSONString``."""

from __future__ import annotations

import json as _stdjson
import re
from collections.abc import Iterator
from typing import Final

from execution.engine.gjson.result import (
    FALSE,
    JSON,
    MAX_BUILT_BYTES,
    NULL,
    NUMBER,
    STRING,
    TRUE,
    Result,
    TooMuchWork,
    _parse_float0,
)

# --------------------------------------------------------------------------------------------
# Scanning helpers (gjson's parseString, parseSquash, tonum, tolit, tostr, unescape)
# --------------------------------------------------------------------------------------------

_SQUASH_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{}()]', re.DOTALL)
_SQUASH_SKIP: Final = re.compile(rb'(?:[^"\[\]{}()]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
_OPEN_RUN: Final = re.compile(rb"[\[{(]+")
_CLOSE_RUN: Final = re.compile(rb"[\]})]+")
_NUM_END: Final = re.compile(rb"[\x00- ,\]}]")
_LIT_END: Final = re.compile(rb"[^a-z]")
_KEY_OR_CLOSE: Final = re.compile(rb'["}]')
_VALUE_START: Final = re.compile(rb'["{\[ntf+\-0-9iIN]')
_ARRAY_VALUE_START: Final = re.compile(rb'["{\[ntf+\-0-9iIN\]]')
_CONTAINER_START: Final = re.compile(rb"[{\[]")

_OPENERS: Final = frozenset(b"{[(")
_QUOTE: Final = 0x22
_BACKSLASH: Final = 0x5C


def _string_end(j: bytes, i: int) -> tuple[int, bool]:
    """Index of the quote closing the string whose body starts at ``i`` (-1 if none), escaped?"""
    q = j.find(b'"', i)
    if q < 0:
        return -1, j.find(b"\\", i) >= 0
    b = j.find(b"\\", i, q)
    if b < 0:
        return q, False
    while True:
        k = q - 1
        while j[k] == _BACKSLASH:
            k -= 1
        if (q - 1 - k) % 2 == 0:
            return q, True
        q = j.find(b'"', q + 1)
        if q < 0:
            return -1, True


def _parse_string(j: bytes, i: int) -> tuple[int, bytes, bool, bool]:
    """gjson ``parseString``: ``i`` is just past the opening quote; (next, raw, escaped, ok)."""
    q, esc = _string_end(j, i)
    if q < 0:
        return len(j), j[i - 1 :], False, False
    return q + 1, j[i - 1 : q + 1], esc, True


def _parse_squash(j: bytes, i: int) -> tuple[int, bytes]:
    """gjson ``parseSquash``: ``j[i]`` opens a container; (index past its end, its raw).

    One regex step skips everything up to the next bracket outside a string and another takes a
    whole run of brackets, so the Python loop runs once per run, not once per byte or string.
    """
    s = i
    depth = 1
    n = len(j)
    skip = _SQUASH_SKIP.match
    pos = i + 1
    steps = 0
    while True:
        steps += 1
        if steps == _BIG_VALUE_STEPS and j[s] in b"[{":
            end = _c_value_end(j, s)
            if end is not None:
                return end, j[s:end]
        m = skip(j, pos)
        pos = m.end() if m else pos
        if pos >= n:
            return n, j[s:]
        c = j[pos]
        if c == _QUOTE:
            # An unterminated string: Go's loop leaves its index one past the end, which
            # makes an enclosing array scan stop without reaching its virtual ']'.
            return n + 1, j[s:]
        # Brackets come in runs (deep nesting is mostly runs): take a whole run at once.
        if c in _OPENERS:
            m = _OPEN_RUN.match(j, pos)
            assert m is not None
            depth += m.end() - pos
            pos = m.end()
        else:
            m = _CLOSE_RUN.match(j, pos)
            assert m is not None
            run = m.end() - pos
            if run >= depth:
                end = pos + depth
                return end, j[s:end]
            depth -= run
            pos = m.end()


# After this many bracket runs a value counts as big: its end is then looked for with CPython's C JSON
# scanner (4x faster than the loop on a 1 MB array, about 2x on a 1 KB request); a value it
# rejects (invalid JSON from there on, or deeper than its recursion limit) takes the loop.
_BIG_VALUE_STEPS: Final = 8
_C_SCAN: Final = _stdjson.scanner.c_make_scanner(  # type: ignore[attr-defined]
    _stdjson.JSONDecoder(
        parse_float=lambda _s: 0,
        parse_int=lambda _s: 0,
        parse_constant=lambda _s: 0,
        object_pairs_hook=lambda _pairs: None,
    )
)
_latin1_last: tuple[bytes, str] = (b"", "")


def _c_value_end(j: bytes, s: int) -> int | None:
    """End of the valid JSON value at ``j[s]``, or None if it is not valid JSON from there.

    On a valid value this is exactly where gjson's squash ends: brackets balance and parens
    occur only inside strings. Latin-1 maps each byte to one character, so indexes agree.
    """
    global _latin1_last
    cached = _latin1_last
    if cached[0] is j:
        text = cached[1]
    else:
        text = j.decode("latin-1")
        _latin1_last = (j, text)
    try:
        end: int = _C_SCAN(text, s)[1]
    except (ValueError, StopIteration, RecursionError):
        return None
    return end


def _squash(j: bytes) -> bytes:
    """gjson ``squash``: the leading value of ``j`` (a container, a paren group or a string)."""
    if j[:1] == b'"':
        m = _SQUASH_TOKEN.match(j)
        assert m is not None
        return j[: m.end()] if m.group(1) is not None else j
    return _parse_squash(j, 0)[1]


def _parse_number(j: bytes, i: int) -> tuple[int, bytes]:
    m = _NUM_END.search(j, i + 1)
    e = m.start() if m else len(j)
    return e, j[i:e]


def _parse_literal(j: bytes, i: int) -> tuple[int, bytes]:
    m = _LIT_END.search(j, i + 1)
    e = m.start() if m else len(j)
    return e, j[i:e]


_TONUM_END: Final = re.compile(rb"[\x00- ,\]}]")


def _tonum(j: bytes) -> tuple[bytes, float]:
    m = _TONUM_END.search(j, 1)
    raw = j[: m.start()] if m else j
    return raw, _parse_float0(raw)


def _tolit(j: bytes) -> bytes:
    m = _LIT_END.search(j, 1)
    return j[: m.start()] if m else j


def _tostr(j: bytes) -> tuple[bytes, bytes]:
    """gjson ``tostr``: ``j`` starts with a quote; (raw, unescaped)."""
    q = j.find(b'"', 1)
    b = j.find(b"\\", 1, q if q >= 0 else len(j))
    if b < 0:
        if q < 0:
            return j, j[1:]
        return j[: q + 1], j[1:q]
    q, _ = _string_end(j, 1)
    if q < 0:
        return j, _unescape(j[1:])
    return j[: q + 1], _unescape(j[1:q])


_SIMPLE_ESCAPES: Final = {
    ord("\\"): b"\\",
    ord("/"): b"/",
    ord("b"): b"\b",
    ord("f"): b"\f",
    ord("n"): b"\n",
    ord("r"): b"\r",
    ord("t"): b"\t",
    ord('"'): b'"',
}
_REPLACEMENT: Final = "\ufffd".encode()


def _hex4(s: bytes) -> int:
    # Go: strconv.ParseUint(s[:4], 16, 64) with the error ignored, so bad hex gives 0.
    try:
        return int(s[:4], 16) if len(s) >= 4 and s[:4].isascii() and s[:4].isalnum() else 0
    except ValueError:
        return 0


def _encode_rune(r: int) -> bytes:
    if 0xD800 <= r < 0xE000 or r > 0x10FFFF:
        return _REPLACEMENT
    return chr(r).encode()


def _unescape(s: bytes) -> bytes:
    """gjson ``unescape``: stops at a control byte or a bad escape, keeping what came before."""
    if b"\\" not in s:
        for k, c in enumerate(s):
            if c < 0x20:
                return s[:k]
        return s
    out = bytearray()
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c < 0x20:
            return bytes(out)
        if c != _BACKSLASH:
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            return bytes(out)
        e = s[i]
        simple = _SIMPLE_ESCAPES.get(e)
        if simple is not None:
            out += simple
            i += 1
            continue
        if e != ord("u") or i + 5 > n:
            return bytes(out)
        r = _hex4(s[i + 1 :])
        i += 5
        if 0xD800 <= r < 0xE000 and n - i >= 6 and s[i] == _BACKSLASH and s[i + 1] == ord("u"):
            r2 = _hex4(s[i + 2 :])
            if 0xD800 <= r < 0xDC00 and 0xDC00 <= r2 < 0xE000:
                r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)
            else:
                r = 0xFFFD
            i += 6
        out += _encode_rune(r)
    return bytes(out)


def _decode_rune(s: bytes, i: int, end: int) -> tuple[int, int]:
    """Go ``utf8.DecodeRuneInString(s[i:end])``: (rune, size); (0xFFFD, 1) when invalid."""
    c = s[i]
    if c < 0x80:
        return c, 1
    n = 2 if 0xC2 <= c <= 0xDF else 3 if 0xE0 <= c <= 0xEF else 4 if 0xF0 <= c <= 0xF4 else 0
    if n and i + n <= end:
        try:
            return ord(s[i : i + n].decode("utf-8")), n
        except UnicodeDecodeError:
            pass
    return 0xFFFD, 1


def _decode_last_rune(s: bytes, start: int, end: int) -> tuple[int, int]:
    """Go ``utf8.DecodeLastRuneInString(s[start:end])``."""
    c = s[end - 1]
    if c < 0x80:
        return c, 1
    lim = max(start, end - 4)
    k = end - 1
    while k > lim and (s[k] & 0xC0) == 0x80:
        k -= 1
    r, size = _decode_rune(s, k, end)
    if k + size != end:
        return 0xFFFD, 1
    return r, size


def _trim(s: bytes) -> bytes:
    a = 0
    b = len(s)
    while a < b and s[a] <= 0x20:
        a += 1
    while b > a and s[b - 1] <= 0x20:
        b -= 1
    return s[a:b]


_HEX: Final = b"0123456789abcdef"
# Go's unicode.IsSpace on single bytes (what strings.TrimSpace removes).
_GO_SPACE: Final = b" \t\n\v\f\r\x85\xa0"


def _append_json_string(s: bytes) -> bytes:
    """gjson ``AppendJSONString``: a JSON string literal, ``<>&`` escaped, bad UTF-8 as U+FFFD.

    Byte-level replaces run in C; only runs of non-ASCII bytes go through Python.
    """
    if len(s) + s.count(b"\\") + s.count(b'"') > MAX_BUILT_BYTES:
        # Refuse before building: each escape doubles a byte (repeated @tostr grows 2x a step).
        raise TooMuchWork(f"the path builds a value over {MAX_BUILT_BYTES} bytes")
    out = s.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    for special, escaped in _JS_ASCII_ESCAPES:
        if special in out:
            out = out.replace(special, escaped)
    if not out.isascii():
        out = _JS_HIGH_RUN.sub(_js_high_run, out)
    return b'"' + out + b'"'


_JS_ASCII_ESCAPES: Final = tuple(
    (bytes((c,)), {0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}.get(c, b"\\u%04x" % c))
    for c in [*range(0x20), 0x3C, 0x3E, 0x26]
)
_JS_HIGH_RUN: Final = re.compile(rb"[\x80-\xff]+")


def _js_high_run(m: re.Match[bytes]) -> bytes:
    run = m.group()
    try:
        text = run.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if "\u2028" not in text and "\u2029" not in text:
            return run
    out = bytearray()
    i = 0
    n = len(run)
    while i < n:
        r, size = _decode_rune(run, i, n)
        if r == 0xFFFD and size == 1:
            out += b"\\ufffd"
        elif r in (0x2028, 0x2029):
            out += b"\\u202" + bytes((_HEX[r & 0xF],))
        else:
            out += run[i : i + size]
        i += size
    return bytes(out)


def _parse_any(j: bytes, i: int, hit: bool) -> tuple[int, Result, bool]:
    """gjson ``parseAny``: the next value at or after ``i`` (skipping anything it cannot start)."""
    n = len(j)
    while i < n:
        m = _VALUE_START.search(j, i)
        if m is None:
            return n, Result(), False
        i = m.start()
        ch = j[i]
        if ch == 0x7B or ch == 0x5B:
            i, val = _parse_squash(j, i)
            return i, Result(JSON, val) if hit else Result(), True
        if ch == _QUOTE:
            i, val, vesc, ok = _parse_string(j, i + 1)
            if not ok:
                return i, Result(), False
            if not hit:
                return i, Result(), True
            inner = val[1:-1]
            return i, Result(STRING, val, _unescape(inner) if vesc else inner), True
        if ch == 0x6E and i + 1 < n and j[i + 1] != 0x75:
            pass
        elif ch in b"tfn":
            i, val = _parse_literal(j, i)
            if hit:
                return i, Result(TRUE if ch == 0x74 else FALSE if ch == 0x66 else NULL, val), True
            # Go falls through to the next byte here: a literal without ``hit`` is skipped.
            continue
        i, val = _parse_number(j, i)
        if hit:
            return i, Result(NUMBER, val, b"", _parse_float0(val)), True
        return i, Result(), True
    return i, Result(), False


def _parse(j: bytes) -> Result:
    """gjson ``Parse``: the first value; a container's raw runs to the end of ``j``."""
    n = len(j)
    i = 0
    while i < n and j[i] <= 0x20 and j[i] not in b"{[":
        i += 1
    if i >= n:
        return Result()
    ch = j[i]
    if ch == 0x7B or ch == 0x5B:
        return Result(JSON, j[i:])
    if ch in b"+-0123456789iIN" or (ch == 0x6E and i + 1 < n and j[i + 1] != 0x75):
        raw, num = _tonum(j[i:])
        return Result(NUMBER, raw, b"", num)
    if ch == 0x6E:
        return Result(NULL, _tolit(j[i:]))
    if ch == 0x74:
        return Result(TRUE, _tolit(j[i:]))
    if ch == 0x66:
        return Result(FALSE, _tolit(j[i:]))
    if ch == _QUOTE:
        raw, s = _tostr(j[i:])
        return Result(STRING, raw, s)
    return Result()


def _for_each(t: Result) -> Iterator[tuple[Result, Result]]:
    if not t.exists:
        return
    if t.type != JSON:
        yield Result(), t
        return
    j = t.raw
    n = len(j)
    i = 0
    obj = False
    while i < n:
        c = j[i]
        if c == 0x7B:
            i += 1
            obj = True
            break
        if c == 0x5B:
            i += 1
            break
        if c > 0x20:
            return
        i += 1
    key_num = -1.0
    while i < n:
        key = Result()
        if obj:
            if j[i] != _QUOTE:
                i += 1
                continue
            i, raw, kesc, ok = _parse_string(j, i + 1)
            if not ok:
                return
            inner = raw[1:-1]
            key = Result(STRING, raw, _unescape(inner) if kesc else inner)
        else:
            key_num += 1
            key = Result(NUMBER, b"", b"", key_num)
        while i < n and (j[i] <= 0x20 or j[i] == 0x2C or j[i] == 0x3A):
            i += 1
        i, value, ok = _parse_any(j, i, True)
        if not ok:
            return
        yield key, value
        i += 1
