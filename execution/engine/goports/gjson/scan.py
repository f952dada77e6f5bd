"""Scanning a document as gjson does: strings, squashed containers, numbers, literals, escapes,
UTF-8 runes, ``parseAny``/``Parse``/``ForEach`` and ``AppendJSONString``."""

from __future__ import annotations

import json as _stdjson
import re
from collections.abc import Iterator
from typing import Final

from execution.engine.goports.gjson.result import (
    FALSE,
    JSON,
    NULL,
    NUMBER,
    STRING,
    TRUE,
    Result,
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
    """gjson ``parseSquash``: ``j[i]`` opens a container; (index past its end, its raw)."""
    end = _squash_end(j, i)
    return end, j[i:end]


def _squash_end(j: bytes, i: int) -> int:
    """Where the container opened at ``j[i]`` ends (one past the end of ``j`` when a string in it
    is unterminated).

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
                return end
        m = skip(j, pos)
        pos = m.end() if m else pos
        if pos >= n:
            return n
        c = j[pos]
        if c == _QUOTE:
            # An unterminated string: Go's loop leaves its index one past the end, which
            # makes an enclosing array scan stop without reaching its virtual ']'.
            return n + 1
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
                return end
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


# Go's unicode.IsSpace on single bytes (what strings.TrimSpace removes).
_GO_SPACE: Final = b" \t\n\v\f\r\x85\xa0"


# ---- One value, by the byte that starts it -----------------------------------------------------
# gjson's parseObject, parseArray and parseAny each read a value with the same switch on its first
# byte; here that switch is a table per byte: a reader builds the value's Result, a skipper only
# finds its end. Both get ``j[i]``, the value's first byte (one that _VALUE_START finds).


def _read_string(j: bytes, i: int) -> tuple[int, Result | None]:
    """A string value; None when it is unterminated (then the index is the end of ``j``)."""
    q, esc = _string_end(j, i + 1)
    if q < 0:
        return len(j), None
    inner = j[i + 1 : q]
    return q + 1, Result(STRING, j[i : q + 1], _unescape(inner) if esc else inner)


def _read_container(j: bytes, i: int) -> tuple[int, Result | None]:
    end = _squash_end(j, i)
    return end, Result(JSON, j[i:end])


def _read_number(j: bytes, i: int) -> tuple[int, Result | None]:
    m = _NUM_END.search(j, i + 1)
    end = m.start() if m else len(j)
    raw = j[i:end]
    return end, Result(NUMBER, raw, b"", _parse_float0(raw))


def _literal_end(j: bytes, i: int) -> int:
    m = _LIT_END.search(j, i + 1)
    return m.start() if m else len(j)


def _read_true(j: bytes, i: int) -> tuple[int, Result | None]:
    end = _literal_end(j, i)
    return end, Result(TRUE, j[i:end])


def _read_false(j: bytes, i: int) -> tuple[int, Result | None]:
    end = _literal_end(j, i)
    return end, Result(FALSE, j[i:end])


def _n_is_number(j: bytes, i: int) -> bool:
    """gjson reads an 'n' not followed by 'u' (``nan``, ``n1``) as a number, not as ``null``."""
    return i + 1 < len(j) and j[i + 1] != 0x75


def _read_n(j: bytes, i: int) -> tuple[int, Result | None]:
    if _n_is_number(j, i):
        return _read_number(j, i)
    end = _literal_end(j, i)
    return end, Result(NULL, j[i:end])


def _skip_string(j: bytes, i: int) -> int:
    """Past a string value, or -1 when it is unterminated."""
    q, _ = _string_end(j, i + 1)
    return q + 1 if q >= 0 else -1


def _number_end(j: bytes, i: int) -> int:
    m = _NUM_END.search(j, i + 1)
    return m.start() if m else len(j)


def _skip_n(j: bytes, i: int) -> int:
    return _number_end(j, i) if _n_is_number(j, i) else _literal_end(j, i)


# The first bytes with their own (reader, skipper); every other byte _VALUE_START finds starts a number.
_BY_FIRST_BYTE: Final = {
    0x22: (_read_string, _skip_string),  # '"'
    0x7B: (_read_container, _squash_end),  # '{'
    0x5B: (_read_container, _squash_end),  # '['
    0x74: (_read_true, _literal_end),  # 't'
    0x66: (_read_false, _literal_end),  # 'f'
    0x6E: (_read_n, _skip_n),  # 'n'
}
_NUMBER_ENTRY: Final = (_read_number, _number_end)
_READ: Final = tuple(_BY_FIRST_BYTE.get(byte, _NUMBER_ENTRY)[0] for byte in range(256))
_SKIP: Final = tuple(_BY_FIRST_BYTE.get(byte, _NUMBER_ENTRY)[1] for byte in range(256))


def _parse_any(j: bytes, i: int) -> tuple[int, Result, bool]:
    """gjson ``parseAny`` (with ``hit``): the next value at or after ``i``; ok is False at the end
    of ``j`` or on an unterminated string."""
    m = _VALUE_START.search(j, i)
    if m is None:
        return len(j), Result(), False
    i, res = _READ[j[m.start()]](j, m.start())
    if res is None:
        return i, Result(), False
    return i, res, True


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
        i, value, ok = _parse_any(j, i)
        if not ok:
            return
        yield key, value
        i += 1
