"""GJSON paths as Go's ``github.com/tidwall/gjson`` v1.18.0 evaluates them (KServe's router pins it).

KServe decides Switch routes and Sequence conditions with ``gjson.ValidBytes(doc)`` and
``gjson.GetBytes(doc, condition).Exists()``. This module answers both questions the way that Go
library does, byte for byte, including on odd paths and malformed documents (``Get`` does not
validate). It is our own pure-Python implementation of the documented behaviour, checked against
the Go library (``../shared/oracle/gjson``) by the tests in ``tests/engine/test_gjson.py``.

Public API:

- :func:`valid` is ``gjson.ValidBytes``;
- :func:`get` is ``gjson.GetBytes``; it returns a :class:`Result` whose ``exists`` is
  ``Result.Exists()``, ``raw`` is ``Result.Raw`` (bytes for a bytes document, text for a text
  document), ``type`` one of :data:`NULL` … :data:`JSON`, and :meth:`Result.value` the value as
  Python.

Everything works on bytes, as Go strings do: invalid UTF-8 passes through ``raw`` untouched. A
text document or path is encoded as UTF-8 (``surrogateescape``, so bytes decoded that way round
trip).

Safety: nothing here recurses with the depth of the *document*; scanners are loops with explicit
stacks, and the modifiers that walk a tree (``@pretty``, ``@flatten``, ``@dig``) run on an explicit
stack of generators. Recursion follows the nesting of the *path* only (one level per path
component, query or modifier) and is bounded by :data:`MAX_PATH_NESTING`; a deeper path raises
:class:`PathTooComplex` instead of exhausting the interpreter's stack. Paths whose work grows
without bound (repeated ``@tostr``, ``@dig`` over a deep document) are refused with
:class:`TooMuchWork` (see :data:`MAX_BUILT_BYTES`, :data:`MAX_WORK_BYTES`).
"""

from __future__ import annotations

import functools
import json as _stdjson
import operator
import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "FALSE",
    "JSON",
    "MAX_BUILT_BYTES",
    "MAX_PATH_NESTING",
    "MAX_WORK_BYTES",
    "NULL",
    "NUMBER",
    "STRING",
    "TRUE",
    "PathTooComplex",
    "Refused",
    "Result",
    "TooMuchWork",
    "get",
    "valid",
]

# Result types, numbered as gjson's ``Type`` constants (Null, False, Number, String, True, JSON).
NULL: Final = 0
FALSE: Final = 1
NUMBER: Final = 2
STRING: Final = 3
TRUE: Final = 4
JSON: Final = 5
_TYPE_NAMES: Final = ("Null", "False", "Number", "String", "True", "JSON")

# How many nested path levels (components, queries, modifiers, multipath members) one call may
# open. Each level costs one or two Python frames; 200 keeps us well under CPython's default
# recursion limit of 1000 even when the caller is itself deep (pytest, asyncio, Django).
MAX_PATH_NESTING: Final = 200

# gjson's ``matchLimit`` passes this complexity budget to ``match.MatchLimit`` (gjson.go).
_MATCH_LIMIT: Final = 10000


class Refused(ValueError):
    """The evaluation was refused because it would take unbounded time or memory (gjson has no
    such limits; its Go router would grind or run out of memory on the same request)."""


class PathTooComplex(Refused):
    """The path nests deeper than :data:`MAX_PATH_NESTING` levels; it is refused, not evaluated."""


class TooMuchWork(Refused):
    """A path built a value over :data:`MAX_BUILT_BYTES` or walked over :data:`MAX_WORK_BYTES`."""


# Our own ceilings (gjson has none): no condition needs a constructed value (modifier output,
# multipath, '#.' or '#(...)#' array) of more than 64 MiB, nor tree-walking modifiers (@dig,
# deep @flatten, @pretty) that revisit more than 32 MiB of input (a few seconds of Python on
# bracket-dense input; @dig over a 1 MB document five levels deep revisits about 5 MB).
# Repeated @tostr doubles its size per step and @dig on a deep document is quadratic, so
# without them one path can take unbounded memory or time.
MAX_BUILT_BYTES: Final = 64 * 1024 * 1024
MAX_WORK_BYTES: Final = 32 * 1024 * 1024

_budget = threading.local()


def _charge(nbytes: int) -> None:
    """Count bytes revisited by a tree-walking modifier against this call's budget."""
    left: int = getattr(_budget, "left", MAX_WORK_BYTES) - nbytes
    _budget.left = left
    if left < 0:
        raise TooMuchWork(f"the path revisits more than {MAX_WORK_BYTES} bytes of input")


def _built(raw: bytes | bytearray) -> bytes:
    """Check a constructed value against :data:`MAX_BUILT_BYTES`."""
    if len(raw) > MAX_BUILT_BYTES:
        raise TooMuchWork(f"the path builds a value over {MAX_BUILT_BYTES} bytes")
    return bytes(raw)


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------


class Result:
    """One gjson ``Result``: ``type``, ``raw`` (bytes), ``str`` (unescaped string bytes), ``num``.

    ``exists`` is gjson's ``Exists()``: ``type != NULL or raw != b""``.
    """

    __slots__ = ("num", "raw", "str", "type")

    def __init__(self, type_: int = NULL, raw: bytes = b"", str_: bytes = b"", num: float = 0.0):
        self.type = type_
        self.raw = raw
        self.str = str_
        self.num = num

    @property
    def exists(self) -> bool:
        """gjson's ``Exists()``: a present ``null`` exists; only a missing value does not."""
        return self.type != NULL or len(self.raw) != 0

    @property
    def type_name(self) -> str:
        """gjson's ``Type.String()``: ``"Null"``, ``"False"``, ``"Number"``, ``"String"``, ..."""
        return _TYPE_NAMES[self.type]

    def is_object(self) -> bool:
        return self.type == JSON and self.raw[:1] == b"{"

    def is_array(self) -> bool:
        return self.type == JSON and self.raw[:1] == b"["

    def string(self) -> bytes:
        """gjson's ``Result.String()`` as bytes."""
        t = self.type
        if t == FALSE:
            return b"false"
        if t == TRUE:
            return b"true"
        if t == STRING:
            return self.str
        if t == JSON:
            return self.raw
        if t == NUMBER:
            raw = self.raw
            if raw and _INT_RAW.fullmatch(raw):
                return raw
            return _format_float(self.num)
        return b""

    def as_bool(self) -> bool:
        """gjson's ``Result.Bool()``."""
        t = self.type
        if t == TRUE:
            return True
        if t == STRING:
            return self.str.lower() in (b"1", b"t", b"true")
        if t == NUMBER:
            return self.num != 0
        return False

    def as_int(self) -> int:
        """gjson's ``Result.Int()`` (int64 semantics)."""
        t = self.type
        if t == TRUE:
            return 1
        if t == STRING:
            n = _parse_int(self.str)
            if n is None:
                f = _go_parse_float(self.str)
                return _f2i(f) if f is not None else 0
            return n
        if t == NUMBER:
            f = self.num
            if -9007199254740991 <= f <= 9007199254740991:
                return int(f)
            n = _parse_int(self.raw)
            return n if n is not None else _f2i(f)
        return 0

    def get(self, path: bytes) -> Result:
        """``Result.Get(path)``: the path evaluated on this result's raw JSON."""
        return _get(self.raw, path, 0)

    def for_each(self) -> Iterator[tuple[Result, Result]]:
        """gjson's ``ForEach`` as an iterator of ``(key, value)``."""
        return _for_each(self)

    def value(self) -> Any:
        """The value as Python: dict, list, str, int/float, bool or None (None when missing too).

        Mirrors gjson's ``Value()`` (the first of duplicate keys wins; strings are unescaped and
        decoded as UTF-8 with U+FFFD for invalid bytes), except that an integer literal becomes a
        Python ``int`` instead of a float64. Built with an explicit stack: any depth is fine.
        """
        return _to_python(self)

    def text(self) -> str:
        """``raw`` as text (invalid UTF-8 kept through ``surrogateescape``)."""
        return self.raw.decode("utf-8", "surrogateescape")

    def __repr__(self) -> str:
        return f"Result(type={self.type_name}, raw={self.raw!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return (self.type, self.raw, self.str, self.num) == (other.type, other.raw, other.str, other.num)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class TextResult:
    """What :func:`get` returns for a text document: the same fields, ``raw`` as text."""

    result: Result

    @property
    def exists(self) -> bool:
        return self.result.exists

    @property
    def type(self) -> int:
        return self.result.type

    @property
    def type_name(self) -> str:
        return self.result.type_name

    @property
    def raw(self) -> str:
        return self.result.text()

    def value(self) -> Any:
        return self.result.value()


_INT_RAW: Final = re.compile(rb"-?[0-9]*")


def _f2i(f: float) -> int:
    if f != f:
        return -(2**63)
    if f >= 2**63:
        return 2**63 - 1
    if f < -(2**63):
        return -(2**63)
    return int(f)


def _format_float(f: float) -> bytes:
    """Go's ``strconv.FormatFloat(f, 'f', -1, 64)``: shortest digits, never an exponent."""
    if f != f:
        return b"NaN"
    if f in (float("inf"), float("-inf")):
        return b"+Inf" if f > 0 else b"-Inf"
    return format(Decimal(repr(f)).normalize(), "f").encode()


# Go's strconv.ParseFloat accepts: decimal with optional sign/fraction/exponent, "inf"/"infinity"
# and "nan" in any case (a sign only on inf), and hexadecimal mantissas with a 'p' exponent.
_GO_DEC_FLOAT: Final = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GO_HEX_FLOAT: Final = re.compile(
    rb"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+))[pP]([+-]?[0-9]+)"
)


def _go_parse_float(s: bytes) -> float | None:
    """Go's ``strconv.ParseFloat(s, 64)``: the value, or None on a syntax error (Go gives 0)."""
    if _GO_DEC_FLOAT.fullmatch(s):
        return float(s)
    low = s.lower()
    if low in (b"inf", b"+inf", b"infinity", b"+infinity"):
        return float("inf")
    if low in (b"-inf", b"-infinity"):
        return float("-inf")
    if low == b"nan":
        return float("nan")
    m = _GO_HEX_FLOAT.fullmatch(s)
    if m:
        sign, mant, exp = m.groups()
        try:
            v = float.fromhex(f"0x{mant.decode()}p{exp.decode()}")
        except OverflowError:
            v = float("inf")
        return -v if sign == b"-" else v
    return None


def _parse_float0(s: bytes) -> float:
    v = _go_parse_float(s)
    return 0.0 if v is None else v


def _parse_uint(s: bytes) -> int | None:
    if not s or not s.isdigit() or not s.isascii():
        return None
    # Go accumulates into a uint64 and wraps around silently.
    return int(s) % (1 << 64)


def _parse_int(s: bytes) -> int | None:
    neg = s[:1] == b"-"
    digits = s[1:] if neg else s
    if not digits or not digits.isdigit() or not digits.isascii():
        return None
    n = int(digits) % (1 << 64)
    if n >= 1 << 63:
        n -= 1 << 64
    return -n if neg else n


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


# --------------------------------------------------------------------------------------------
# Wildcard matching (github.com/tidwall/match v1.1.1 MatchLimit), iterative
# --------------------------------------------------------------------------------------------


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


def _match_limit(s: bytes, pat: bytes) -> bool:
    """``match.MatchLimit(s, pat, 10000)``'s match flag (False when the budget runs out).

    match's recursion (one call per star tried) runs here on an explicit stack of frames
    ``[s_start, s_end, p_start, p_end]``.
    """
    if pat == b"*":
        return True
    counter = 0
    stack: list[list[int]] = []
    frame = [0, len(s), 0, len(pat)]
    while True:
        if counter > _MATCH_LIMIT:
            return False  # gjson reads "stopped" as no match
        counter += 1
        result = _match_run(s, pat, frame)
        while True:
            if result is None:
                # The frame waits at a star: try the rest of the pattern on the string first.
                stack.append(frame)
                frame = [frame[0], frame[1], frame[2] + 1, frame[3]]
                break
            if not stack:
                return result == 1
            parent = stack.pop()
            if result != 0:
                continue
            if parent[0] == parent[1]:
                continue
            _r, size = _decode_rune(s, parent[0], parent[1])
            parent[0] += size
            frame = parent
            result = _match_run(s, pat, frame)


def _match_run(s: bytes, pat: bytes, frame: list[int]) -> int | None:
    """Run one match frame: 0 no match, 1 match, None when it stops at a star (state saved)."""
    ss, se, ps, pe = frame
    while ps < pe:
        pc, psz = _decode_rune(pat, ps, pe)
        if ss < se:
            sc, ssz = _decode_rune(s, ss, se)
        else:
            sc, ssz = 0, 0
        if pc == 0x3F:  # '?'
            if ssz == 0:
                return 0
        elif pc == 0x2A:  # '*'
            while pe - ps > 1 and pat[ps + 1] == 0x2A:
                ps += 1
            if pe - ps == 1:
                return 1
            se, pe, ok = _match_trim_suffix(s, ss, se, pat, ps, pe)
            if not ok:
                return 0
            if pe - ps == 1:
                return 1
            frame[0], frame[1], frame[2], frame[3] = ss, se, ps, pe
            return None
        else:
            if ssz == 0:
                return 0
            if pc == _BACKSLASH:
                ps += psz
                if ps >= pe:
                    return 0
                pc, psz = _decode_rune(pat, ps, pe)
            if sc != pc:
                return 0
        ss += ssz
        ps += psz
    return 1 if ss == se else 0


def _match_trim_suffix(s: bytes, ss: int, se: int, pat: bytes, ps: int, pe: int) -> tuple[int, int, bool]:
    ok = True
    while se > ss and pe - ps > 1:
        pc, psz = _decode_last_rune(pat, ps, pe)
        esc = False
        k = 0
        while True:
            if pat[pe - psz - k - 1] != _BACKSLASH:
                if k & 1:
                    esc = True
                    psz += 1
                break
            k += 1
        if pc == 0x2A and not esc:
            ok = True
            break
        sc, ssz = _decode_last_rune(s, ss, se)
        if not ((pc == 0x3F and not esc) or pc == sc):
            ok = False
            break
        se -= ssz
        pe -= psz
    return se, pe, ok


# --------------------------------------------------------------------------------------------
# Path parsing
# --------------------------------------------------------------------------------------------


class _Ctx:
    __slots__ = ("calcd", "json", "pipe", "piped", "value")

    def __init__(self, j: bytes) -> None:
        self.json = j
        self.value = Result()
        self.pipe = b""
        self.piped = False
        self.calcd = False


class _ObjPath:
    __slots__ = ("more", "part", "path", "pipe", "piped", "wild")

    def __init__(self) -> None:
        self.part = b""
        self.path = b""
        self.pipe = b""
        self.piped = False
        self.wild = False
        self.more = False


class _ArrPath:
    __slots__ = (
        "alogkey",
        "alogok",
        "arrch",
        "more",
        "part",
        "path",
        "pipe",
        "piped",
        "q_all",
        "q_on",
        "q_op",
        "q_path",
        "q_value",
    )

    def __init__(self) -> None:
        self.part = b""
        self.path = b""
        self.pipe = b""
        self.piped = False
        self.more = False
        self.alogok = False
        self.arrch = False
        self.alogkey = b""
        self.q_on = False
        self.q_all = False
        self.q_path = b""
        self.q_op = b""
        self.q_value = b""


_MODIFIER_NAMES: Final = frozenset(
    (
        b"pretty",
        b"ugly",
        b"reverse",
        b"this",
        b"flatten",
        b"join",
        b"valid",
        b"keys",
        b"values",
        b"tostr",
        b"fromstr",
        b"group",
        b"dig",
    )
)


def _is_dot_piper(s: bytes) -> bool:
    """After a '.', does ``s`` start a modifier, a multipath or (not) a plain key?"""
    c = s[0]
    if c == 0x40:  # '@'
        i = 1
        n = len(s)
        while i < n and s[i] not in b".|:":
            i += 1
        return s[1:i] in _MODIFIER_NAMES
    return c == 0x5B or c == 0x7B


@functools.lru_cache(maxsize=1024)
def _parse_object_path(path: bytes) -> _ObjPath:
    """gjson ``parseObjectPath`` (memoised: the result is never mutated, paths repeat per row)."""
    r = _ObjPath()
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == 0x7C:  # '|'
            r.part, r.pipe, r.piped = path[:i], path[i + 1 :], True
            return r
        if c == 0x2E:  # '.'
            r.part = path[:i]
            if i < n - 1 and _is_dot_piper(path[i + 1 :]):
                r.pipe, r.piped = path[i + 1 :], True
            else:
                r.path, r.more = path[i + 1 :], True
            return r
        if c == 0x2A or c == 0x3F:
            r.wild = True
        elif c == _BACKSLASH:
            epart = bytearray(path[:i])
            i += 1
            if i < n:
                epart.append(path[i])
                i += 1
                while i < n:
                    c = path[i]
                    if c == _BACKSLASH:
                        i += 1
                        if i < n:
                            epart.append(path[i])
                        i += 1
                        continue
                    if c == 0x2E:
                        r.part = bytes(epart)
                        if i < n - 1 and _is_dot_piper(path[i + 1 :]):
                            r.pipe, r.piped = path[i + 1 :], True
                        else:
                            r.path, r.more = path[i + 1 :], True
                        return r
                    if c == 0x7C:
                        r.part, r.pipe, r.piped = bytes(epart), path[i + 1 :], True
                        return r
                    if c == 0x2A or c == 0x3F:
                        r.wild = True
                    epart.append(c)
                    i += 1
            r.part = bytes(epart)
            return r
        i += 1
    r.part = path
    return r


def _trim(s: bytes) -> bytes:
    a = 0
    b = len(s)
    while a < b and s[a] <= 0x20:
        a += 1
    while b > a and s[b - 1] <= 0x20:
        b -= 1
    return s[a:b]


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


def _parse_array_path(path: bytes) -> _ArrPath:
    r = _ArrPath()
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == 0x7C:
            r.part, r.pipe, r.piped = path[:i], path[i + 1 :], True
            return r
        if c == 0x2E:
            r.part = path[:i]
            if not r.arrch and i < n - 1 and _is_dot_piper(path[i + 1 :]):
                r.pipe, r.piped = path[i + 1 :], True
            else:
                r.path, r.more = path[i + 1 :], True
            return r
        if c == 0x23:  # '#'
            r.arrch = True
            if i == 0 and n > 1:
                if path[1] == 0x2E:
                    r.alogok = True
                    r.alogkey = path[2:]
                    r.path = path[:1]
                elif path[1] == 0x5B or path[1] == 0x28:
                    r.q_on = True
                    qpath, op, value, fi, vesc, ok = _parse_query(path[i:])
                    if not ok:
                        break
                    if len(value) >= 2 and value[0] == _QUOTE and value[-1] == _QUOTE:
                        value = value[1:-1]
                        if vesc:
                            value = _unescape(value)
                    r.q_path, r.q_op, r.q_value = qpath, op, value
                    i = fi - 1
                    if i + 1 < n and path[i + 1] == 0x23:
                        r.q_all = True
        i += 1
    r.part = path
    r.path = b""
    return r


def _split_possible_pipe(path: bytes) -> tuple[bytes, bytes, bool]:
    if b"|" not in path:
        return b"", b"", False
    if path[:1] == b"{":
        squashed = _squash(path[1:])
        if len(squashed) < len(path) - 1:
            squashed = path[: len(squashed) + 1]
            remain = path[len(squashed) :]
            if remain[:1] == b"|":
                return squashed, remain[1:], True
        return b"", b"", False
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == _BACKSLASH:
            i += 1
        elif c == 0x2E:
            if i == n - 1:
                return b"", b"", False
            if path[i + 1] == 0x23:
                i += 2
                if i == n:
                    return b"", b"", False
                if path[i] == 0x5B or path[i] == 0x28:
                    start, end = (0x5B, 0x5D) if path[i] == 0x5B else (0x28, 0x29)
                    i += 1
                    depth = 1
                    while i < n:
                        c = path[i]
                        if c == _BACKSLASH:
                            i += 1
                        elif c == start:
                            depth += 1
                        elif c == end:
                            depth -= 1
                            if depth == 0:
                                break
                        elif c == _QUOTE:
                            i += 1
                            while i < n:
                                if path[i] == _BACKSLASH:
                                    i += 1
                                elif path[i] == _QUOTE:
                                    break
                                i += 1
                        i += 1
        elif c == 0x7C:
            return path[:i], path[i + 1 :], True
        i += 1
    return b"", b"", False


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


# --------------------------------------------------------------------------------------------
# The walk: gjson's parseObject / parseArray / Get
# --------------------------------------------------------------------------------------------


def _nest(d: int) -> int:
    d += 1
    if d > MAX_PATH_NESTING:
        raise PathTooComplex(f"the path nests deeper than {MAX_PATH_NESTING} levels")
    return d


def _parse_object(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    d = _nest(d)
    rp = _parse_object_path(path)
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    j = c.json
    n = len(j)
    key = b""
    kesc = False
    ok = False
    part = rp.part
    while i < n:
        m = _KEY_OR_CLOSE.search(j, i)
        if m is None:
            i = n
        else:
            i = m.start()
            if j[i] == 0x7D:  # '}'
                return i + 1, False
            s = i + 1
            q, kesc = _string_end(j, s)
            if q < 0:
                key, kesc, ok = j[s:], False, False
                i = n
            else:
                key, ok = j[s:q], True
                i = q + 1
        if not ok:
            return i, False
        if rp.wild:
            pmatch = _match_limit(_unescape(key) if kesc else key, part)
        else:
            pmatch = part == (_unescape(key) if kesc else key)
        hit = pmatch and not rp.more
        m = _VALUE_START.search(j, i)
        if m is None:
            i = n
            continue
        i = m.start()
        ch = j[i]
        num = False
        if ch == _QUOTE:
            i, val, vesc, ok = _parse_string(j, i + 1)
            if not ok:
                return i, False
            if hit:
                inner = val[1:-1]
                c.value = Result(STRING, val, _unescape(inner) if vesc else inner)
                return i, True
        elif ch == 0x7B or ch == 0x5B:
            if pmatch and not hit:
                if ch == 0x7B:
                    i, hit = _parse_object(c, i + 1, rp.path, d)
                else:
                    i, hit = _parse_array(c, i + 1, rp.path, d)
                if hit:
                    return i, True
            else:
                i, val = _parse_squash(j, i)
                if hit:
                    c.value = Result(JSON, val)
                    return i, True
        elif ch == 0x6E and i + 1 < n and j[i + 1] != 0x75:
            num = True
        elif ch in b"tfn":
            i, val = _parse_literal(j, i)
            if hit:
                c.value = Result(TRUE if ch == 0x74 else FALSE if ch == 0x66 else NULL, val)
                return i, True
        else:
            num = True
        if num:
            i, val = _parse_number(j, i)
            if hit:
                c.value = Result(NUMBER, val, b"", _parse_float0(val))
                return i, True
    return i, False


def _parse_array(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    d = _nest(d)
    rp = _parse_array_path(path)
    partidx = -1
    if not rp.arrch:
        u = _parse_uint(rp.part)
        partidx = -1 if u is None else u
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    j = c.json
    n = len(j)
    h = 0
    alog: list[int] = []
    multires: bytearray | None = None
    pmatch = False
    hit = False

    def proc_query(qval: Result) -> bool:
        nonlocal multires
        if rp.q_all and multires is None:
            multires = bytearray(b"[")
        if qval.type == JSON:
            res = _get(qval.raw, rp.q_path, d)
        else:
            if rp.q_path != b"":
                return False
            res = qval
        if _query_matches(rp, res):
            if rp.more:
                left, right, ok = _split_possible_pipe(rp.path)
                if ok:
                    rp.path = left
                    c.pipe, c.piped = right, True
                res = _get(qval.raw, rp.path, d)
            else:
                res = qval
            if rp.q_all:
                raw = res.raw or res.string()
                if raw:
                    assert multires is not None
                    if len(multires) > 1:
                        multires.append(0x2C)
                    multires += raw
            else:
                c.value = res
                return True
        return False

    while i < n + 1:
        if not rp.arrch:
            pmatch = partidx == h
            hit = pmatch and not rp.more
        h += 1
        if rp.alogok:
            alog.append(i)
        if i >= n:
            ch = 0x5D
        else:
            m = _ARRAY_VALUE_START.search(j, i)
            if m is None:
                i = n
                ch = 0x5D
            else:
                i = m.start()
                ch = j[i]
        num = False
        if ch == _QUOTE:
            i, val, vesc, ok = _parse_string(j, i + 1)
            if not ok:
                return i, False
            if rp.q_on:
                inner = val[1:-1]
                if proc_query(Result(STRING, val, _unescape(inner) if vesc else inner)):
                    return i, True
            elif hit and not rp.alogok:
                inner = val[1:-1]
                c.value = Result(STRING, val, _unescape(inner) if vesc else inner)
                return i, True
        elif ch == 0x7B or ch == 0x5B:
            if pmatch and not hit:
                if ch == 0x7B:
                    i, hit = _parse_object(c, i + 1, rp.path, d)
                else:
                    i, hit = _parse_array(c, i + 1, rp.path, d)
                if hit and not rp.alogok:
                    return i, True
            else:
                i, val = _parse_squash(j, i)
                if rp.q_on:
                    if proc_query(Result(JSON, val)):
                        return i, True
                elif hit and not rp.alogok:
                    c.value = Result(JSON, val)
                    return i, True
        elif ch == 0x6E and i + 1 < n and j[i + 1] != 0x75:
            num = True
        elif ch in b"tfn":
            i, val = _parse_literal(j, i)
            qtype = TRUE if ch == 0x74 else FALSE if ch == 0x66 else NULL
            if rp.q_on:
                if proc_query(Result(qtype, val)):
                    return i, True
            elif hit and not rp.alogok:
                c.value = Result(qtype, val)
                return i, True
        elif ch == 0x5D:
            if rp.arrch and rp.part == b"#":
                if rp.alogok:
                    left, right, ok = _split_possible_pipe(rp.alogkey)
                    if ok:
                        rp.alogkey = left
                        c.pipe, c.piped = right, True
                    out = bytearray(b"[")
                    k = 0
                    for idx in alog:
                        while idx < n and j[idx] in b" \t\r\n":
                            idx += 1
                        if idx < n and j[idx] != 0x5D:
                            _, res, ok = _parse_any(j, idx, True)
                            if ok:
                                res = _get(res.raw, rp.alogkey, d)
                                if res.exists:
                                    if k > 0:
                                        out.append(0x2C)
                                    out += res.raw or res.string()
                                    k += 1
                    out.append(0x5D)
                    c.value = Result(JSON, _built(bytes(out)))
                    return i + 1, True
                c.value = Result(NUMBER, str(h - 1).encode(), b"", float(h - 1))
                c.calcd = True
                return i + 1, True
            if not c.value.exists:
                if multires:
                    c.value = Result(JSON, _built(bytes(multires) + b"]"))
                elif rp.q_all:
                    c.value = Result(JSON, b"[]")
            return i + 1, False
        else:
            num = True
        if num:
            i, val = _parse_number(j, i)
            if rp.q_on:
                if proc_query(Result(NUMBER, val, b"", _parse_float0(val))):
                    return i, True
            elif hit and not rp.alogok:
                c.value = Result(NUMBER, val, b"", _parse_float0(val))
                return i, True
    return i, False


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


def _get(j: bytes, path: bytes, d: int) -> Result:
    d = _nest(d)
    if len(path) > 1:
        c0 = path[0]
        if c0 == 0x40 or c0 == 0x21:  # '@' or '!'
            if c0 == 0x40:
                npath, rjson, ok = _exec_modifier(j, path, d)
            else:
                npath, rjson, ok = _exec_static(path)
            if ok:
                if npath[:1] in (b"|", b"."):
                    return _get(rjson, npath[1:], d)
                return _parse(rjson)
        if c0 == 0x5B or c0 == 0x7B:
            subs, path, ok = _parse_sub_selectors(path)
            if ok and (not path or path[0] in b"|."):
                b = bytearray((c0,))
                k = 0
                for name, spath in subs:
                    res = _get(j, spath, d)
                    if not res.exists:
                        continue
                    if k > 0:
                        b.append(0x2C)
                    if c0 == 0x7B:
                        if name:
                            if name[0] == _QUOTE and _valid(name):
                                b += name
                            else:
                                b += _append_json_string(name)
                        else:
                            last = _name_of_last(spath)
                            b += _append_json_string(last if _is_simple_name(last) else b"_")
                        b.append(0x3A)
                    raw = res.raw
                    if not raw:
                        raw = res.string() or b"null"
                    b += raw
                    k += 1
                b.append(c0 + 2)
                _built(b)
                if path:
                    return _get(bytes(b), path[1:], d)
                return Result(JSON, bytes(b))
    c = _Ctx(j)
    if path[:2] == b"..":
        _parse_array(c, 0, path[2:], d)
    else:
        m = _CONTAINER_START.search(j)
        if m is not None:
            i = m.start()
            if j[i] == 0x7B:
                _parse_object(c, i + 1, path, d)
            else:
                _parse_array(c, i + 1, path, d)
    if c.piped:
        return _get(c.value.raw, c.pipe, d)
    return c.value


def _parse_sub_selectors(path: bytes) -> tuple[list[tuple[bytes, bytes]], bytes, bool]:
    sels: list[tuple[bytes, bytes]] = []
    modifier = 0
    depth = 1
    colon = 0
    start = 1
    n = len(path)
    i = 1
    while i < n:
        c = path[i]
        if c == _BACKSLASH:
            i += 1
        elif c == 0x40:
            if modifier == 0 and i > 0 and path[i - 1] in b".|":
                modifier = i
        elif c == 0x3A:
            if modifier == 0 and colon == 0 and depth == 1:
                colon = i
        elif c == 0x2C:
            if depth == 1:
                if colon == 0:
                    sels.append((b"", path[start:i]))
                else:
                    sels.append((path[start:colon], path[colon + 1 : i]))
                colon = 0
                modifier = 0
                start = i + 1
        elif c == _QUOTE:
            i += 1
            while i < n:
                if path[i] == _BACKSLASH:
                    i += 1
                elif path[i] == _QUOTE:
                    break
                i += 1
        elif c in b"[({":
            depth += 1
        elif c in b"])}":
            depth -= 1
            if depth == 0:
                if colon == 0:
                    sels.append((b"", path[start:i]))
                else:
                    sels.append((path[start:colon], path[colon + 1 : i]))
                return sels, path[i + 1 :], True
        i += 1
    return [], b"", False


def _name_of_last(path: bytes) -> bytes:
    for i in range(len(path) - 1, -1, -1):
        if path[i] in b"|.":
            if i > 0 and path[i - 1] == _BACKSLASH:
                continue
            return path[i + 1 :]
    return path


def _is_simple_name(comp: bytes) -> bool:
    return all(c >= 0x20 and c not in b"[]{}()#|!" for c in comp)


_HEX: Final = b"0123456789abcdef"


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


def _exec_static(path: bytes) -> tuple[bytes, bytes, bool]:
    name = path[1:]
    if name and name[0] in b'{["+-0123456789':
        _, res = _parse_squash(name, 0)
        return name[len(res) :], res, True
    path_out = b""
    for i in range(1, len(path)):
        if path[i] in b"|.":
            path_out = path[i:]
            name = path[1:i]
            break
    if name.lower() in (b"true", b"false", b"null", b"nan", b"inf"):
        return path_out, name, True
    return path_out, b"", False


def _args_end(s: bytes) -> int:
    """Where a modifier's plain-text argument ends: the first '|' outside brackets and strings.

    Checked against Go gjson v1.18.0: any of ``([{`` opens and any of ``)]}`` closes (a closer
    with nothing open is ignored), strings honour backslash escapes; with no such '|' the
    argument runs to the end of the path.
    """
    depth = 0
    n = len(s)
    i = 0
    while i < n:
        c = s[i]
        if c == 0x7C and depth == 0:
            return i
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth > 0:
                depth -= 1
        elif c == _QUOTE:
            q, _ = _string_end(s, i + 1)
            if q < 0:
                return n
            i = q
        i += 1
    return n


def _exec_modifier(j: bytes, path: bytes, d: int) -> tuple[bytes, bytes, bool]:
    name = path[1:]
    path_out = b""
    has_args = False
    for i in range(1, len(path)):
        c = path[i]
        if c == 0x3A:
            path_out = path[i + 1 :]
            name = path[1:i]
            has_args = len(path_out) > 0
            break
        if c == 0x7C or c == 0x2E:
            path_out = path[i:]
            name = path[1:i]
            break
    fn = _MODIFIERS.get(name)
    if fn is None:
        return path_out, b"", False
    args = b""
    if has_args:
        parsed = False
        if path_out[0] in b'{["' and _parse(path_out).exists:
            args = _squash(path_out)
            path_out = path_out[len(args) :]
            parsed = True
        if not parsed:
            idx = _args_end(path_out)
            args, path_out = path_out[:idx], path_out[idx:]
    return path_out, _built(fn(j, args, d)), True


# --------------------------------------------------------------------------------------------
# ForEach, trampoline, modifiers
# --------------------------------------------------------------------------------------------


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


_Step = Generator[tuple[Callable[..., Any], tuple[Any, ...]], Any, Any]


def _trampoline(gen: _Step) -> Any:
    """Run a generator that ``yield``s ``(function, args)`` to make a nested call, iteratively."""
    stack = [gen]
    sent: Any = None
    while stack:
        try:
            fn, args = stack[-1].send(sent)
        except StopIteration as stop:
            stack.pop()
            sent = stop.value
            continue
        stack.append(fn(*args))
        sent = None
    return sent


def _mod_this(j: bytes, arg: bytes, d: int) -> bytes:
    return j


def _mod_valid(j: bytes, arg: bytes, d: int) -> bytes:
    return j if _valid(j) else b""


def _mod_ugly(j: bytes, arg: bytes, d: int) -> bytes:
    return _ugly(j)


_UGLY_TOKEN: Final = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*"?)|[\x00- ]+', re.DOTALL)


def _ugly(j: bytes) -> bytes:
    return _UGLY_TOKEN.sub(lambda m: m.group(1) or b"", j)


def _mod_reverse(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if res.is_array():
        values = [v.raw for _, v in _for_each(res)]
        return b"[" + b",".join(reversed(values)) + b"]"
    if res.is_object():
        pairs = [k.raw + b":" + v.raw for k, v in _for_each(res)]
        return b"{" + b",".join(reversed(pairs)) + b"}"
    return j


def _unwrap(j: bytes) -> bytes:
    j = _trim(j)
    if len(j) >= 2 and j[0] in b"[{":
        j = j[1:-1]
    return j


_GO_SPACE: Final = b" \t\n\v\f\r\x85\xa0"


def _mod_flatten(j: bytes, arg: bytes, d: int) -> bytes:
    deep = False
    if arg:
        for k, v in _for_each(_parse(arg)):
            if k.string() == b"deep":
                deep = v.as_bool()
    out: bytes = _trampoline(_flatten_step(j, deep))
    return out


def _flatten_step(j: bytes, deep: bool) -> _Step:
    _charge(len(j))
    res = _parse(j)
    if not res.is_array():
        return j
    out = bytearray(b"[")
    idx = 0
    for _, value in _for_each(res):
        if value.is_array():
            if deep:
                inner = yield (_flatten_step, (value.raw, deep))
                raw = _unwrap(inner)
            else:
                raw = _unwrap(value.raw)
        else:
            raw = value.raw
        raw = raw.strip(_GO_SPACE)
        if raw:
            if idx > 0:
                out.append(0x2C)
            out += raw
            idx += 1
    out.append(0x5D)
    return bytes(out)


def _mod_join(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if not res.is_array():
        return j
    preserve = False
    if arg:
        for k, v in _for_each(_parse(arg)):
            if k.string() == b"preserve":
                preserve = v.as_bool()
    out = bytearray(b"{")
    if preserve:
        idx = 0
        for _, value in _for_each(res):
            if not value.is_object():
                continue
            if idx > 0:
                out.append(0x2C)
            out += _unwrap(value.raw)
            idx += 1
    else:
        keys: list[Result] = []
        kvals: dict[bytes, Result] = {}
        for _, value in _for_each(res):
            if not value.is_object():
                continue
            for key, val in _for_each(value):
                kstr = key.string()
                if kstr not in kvals:
                    keys.append(key)
                kvals[kstr] = val
        for n, key in enumerate(keys):
            if n > 0:
                out.append(0x2C)
            out += key.raw + b":" + kvals[key.string()].raw
    out.append(0x7D)
    return bytes(out)


def _mod_keys(j: bytes, arg: bytes, d: int) -> bytes:
    v = _parse(j)
    if not v.exists:
        return b"[]"
    obj = v.is_object()
    return b"[" + b",".join(k.raw if obj else b"null" for k, _ in _for_each(v)) + b"]"


def _mod_values(j: bytes, arg: bytes, d: int) -> bytes:
    v = _parse(j)
    if not v.exists:
        return b"[]"
    if v.is_array():
        return j
    return b"[" + b",".join(val.raw for _, val in _for_each(v)) + b"]"


def _mod_tostr(j: bytes, arg: bytes, d: int) -> bytes:
    return _append_json_string(j)


def _mod_fromstr(j: bytes, arg: bytes, d: int) -> bytes:
    if not _valid(j):
        return b""
    return _parse(j).string()


def _mod_group(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if not res.is_object():
        return b""
    groups: list[bytearray] = []
    for key, value in _for_each(res):
        if not value.is_array():
            continue
        for idx, (_, item) in enumerate(_for_each(value)):
            if idx == len(groups):
                groups.append(bytearray())
            groups[idx] += b"," + key.raw + b":" + item.raw
    return b"[" + b",".join(b"{" + bytes(g[1:]) + b"}" for g in groups) + b"]"


def _mod_dig(j: bytes, arg: bytes, d: int) -> bytes:
    found: list[bytes] = []
    # Pre-order walk with an explicit stack of child iterators (gjson recurses per level).
    root = _parse(j)
    res = _get(root.raw, arg, d)
    if res.exists:
        found.append(res.raw)
    stack: list[Iterator[tuple[Result, Result]]] = []
    if root.is_array() or root.is_object():
        stack.append(_for_each(root))
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            continue
        child = nxt[1]
        _charge(len(child.raw))
        res = _get(child.raw, arg, d)
        if res.exists:
            found.append(res.raw)
        if child.is_array() or child.is_object():
            stack.append(_for_each(child))
    return b"[" + b",".join(found) + b"]"


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
    if width > 0:
        if pretty and open_ == 0x5B and mx == -1:
            # Try the whole array on one line first.
            mx2 = width - (len(buf) - nl)
            if mx2 > 3:
                s1, s2 = len(buf), i
                i, _, ok = yield (
                    _pretty_object,
                    (buf, j, i, 0x5B, 0x5D, False, width, prefix, b"", sortkeys, 0, 0, mx2),
                )
                _charge(len(buf) - s1)
                if ok and len(buf) - s1 <= mx2:
                    return i, nl, True
                del buf[s1:]
                i = s2
        elif mx != -1 and open_ == 0x7B:
            return i, nl, False
    buf.append(open_)
    i += 1
    pairs: list[list[int]] = []
    n = 0
    ln = len(j)
    ok = True
    while i < ln:
        c = j[i]
        if c <= 0x20:
            i += 1
            continue
        if c == close:
            if pretty:
                if open_ == 0x7B and sortkeys:
                    _sort_pairs(j, buf, pairs)
                if n > 0:
                    nl = len(buf)
                    if buf[nl - 1] == 0x20:
                        buf[nl - 1] = 0x0A
                    else:
                        buf.append(0x0A)
                if buf[-1] != open_:
                    _append_tabs(buf, prefix, indent, tabs)
            buf.append(close)
            return i + 1, nl, open_ != 0x7B
        if open_ == 0x5B or c == _QUOTE:
            if n > 0:
                buf.append(0x2C)
                if width != -1 and open_ == 0x5B:
                    buf.append(0x20)
            p = [0, 0, 0, 0]  # kstart, kend, vstart, vend
            if pretty:
                nl = len(buf)
                if buf[nl - 1] == 0x20:
                    buf[nl - 1] = 0x0A
                else:
                    buf.append(0x0A)
                if open_ == 0x7B and sortkeys:
                    p[0] = i
                    p[2] = len(buf)
                _append_tabs(buf, prefix, indent, tabs + 1)
            if open_ == 0x7B:
                i, nl, _ = _pretty_string(buf, j, i, nl)
                if sortkeys:
                    p[1] = i
                buf.append(0x3A)
                if pretty:
                    buf.append(0x20)
            i, nl, ok = yield (
                _pretty_any,
                (buf, j, i, pretty, width, prefix, indent, sortkeys, tabs + 1, nl, mx),
            )
            if mx != -1 and not ok:
                return i, nl, False
            if pretty and open_ == 0x7B and sortkeys:
                p[3] = len(buf)
                if p[0] > p[1] or p[2] > p[3]:
                    sortkeys = False
                else:
                    pairs.append(p)
            n += 1
            continue
        i += 1
    return i, nl, open_ != 0x7B


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


_MODIFIERS: Final[dict[bytes, Callable[[bytes, bytes, int], bytes]]] = {
    b"pretty": _mod_pretty,
    b"ugly": _mod_ugly,
    b"reverse": _mod_reverse,
    b"this": _mod_this,
    b"flatten": _mod_flatten,
    b"join": _mod_join,
    b"valid": _mod_valid,
    b"keys": _mod_keys,
    b"values": _mod_values,
    b"tostr": _mod_tostr,
    b"fromstr": _mod_fromstr,
    b"group": _mod_group,
    b"dig": _mod_dig,
}


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
    """The same decision as :func:`_valid`, with an explicit stack (any nesting depth)."""
    n = len(data)
    stack = bytearray()
    i = _skip_ws(data, 0)
    want_value = True
    while True:
        if want_value:
            if i >= n:
                return False
            c = data[i]
            if c == 0x7B:
                i = _skip_ws(data, i + 1)
                if i < n and data[i] == 0x7D:
                    i += 1
                    want_value = False
                    continue
                stack.append(0x7D)
                m = _V_STRING.match(data, i)
                if m is None:
                    return False
                i = _skip_ws(data, m.end())
                if i >= n or data[i] != 0x3A:
                    return False
                i = _skip_ws(data, i + 1)
                continue
            if c == 0x5B:
                i = _skip_ws(data, i + 1)
                if i < n and data[i] == 0x5D:
                    i += 1
                    want_value = False
                    continue
                stack.append(0x5D)
                continue
            if c == _QUOTE:
                m = _V_STRING.match(data, i)
            elif c == 0x2D or 0x30 <= c <= 0x39:
                m = _V_NUMBER.match(data, i)
            elif data.startswith((b"true", b"false", b"null"), i):
                i += 4 if c != 0x66 else 5
                want_value = False
                continue
            else:
                return False
            if m is None:
                return False
            i = m.end()
            want_value = False
            continue
        i = _skip_ws(data, i)
        if not stack:
            return i == n
        if i >= n:
            return False
        c = data[i]
        if c == stack[-1]:
            stack.pop()
            i += 1
            continue
        if c != 0x2C:
            return False
        i = _skip_ws(data, i + 1)
        want_value = True
        if stack[-1] == 0x7D:
            m = _V_STRING.match(data, i)
            if m is None:
                return False
            i = _skip_ws(data, m.end())
            if i >= n or data[i] != 0x3A:
                return False
            i = _skip_ws(data, i + 1)


# --------------------------------------------------------------------------------------------
# Value as Python
# --------------------------------------------------------------------------------------------

_VALUE_TOKEN: Final = re.compile(
    rb'(")|([{\[])|([\]}])|(-?[0-9][^\x00- ,\]}]*|-[^\x00- ,\]}]*)|(t[a-z]*)|(f[a-z]*)|(n[a-z]*)',
)


def _py_number(raw: bytes) -> int | float:
    if raw and _INT_RAW.fullmatch(raw) and raw not in (b"-", b""):
        return int(raw)
    return _parse_float0(raw)


def _to_python(r: Result) -> Any:
    t = r.type
    if t == NULL:
        return None
    if t == FALSE:
        return False
    if t == TRUE:
        return True
    if t == NUMBER:
        return _py_number(r.raw)
    if t == STRING:
        return r.str.decode("utf-8", "replace")
    j = r.raw
    m = _CONTAINER_START.search(j)
    if m is None or j[: m.start()].strip(b" \t\r\n\v\f"):
        return None
    # Containers: (object?, container, pending key) on an explicit stack.
    root: Any = None
    stack: list[list[Any]] = []
    i = m.start()
    n = len(j)
    sentinel = object()
    while i < n:
        tok = _VALUE_TOKEN.search(j, i)
        if tok is None:
            break
        i = tok.end()
        value: Any = sentinel
        if tok.group(1):
            raw, s = _tostr(j[tok.start() :])
            i = tok.start() + len(raw)
            value = s.decode("utf-8", "replace")
        elif tok.group(2):
            container: Any = {} if tok.group(2) == b"{" else []
            if stack:
                _py_add(stack[-1], container)
            else:
                root = container
            stack.append([isinstance(container, dict), container, _PENDING])
            continue
        elif tok.group(3):
            stack.pop()
            if not stack:
                break
            continue
        elif tok.group(4):
            value = _py_number(tok.group(4))
        elif tok.group(5):
            value = True
        elif tok.group(6):
            value = False
        else:
            value = None
        if not stack:
            break
        _py_add(stack[-1], value)
    return root


def _py_add(frame: list[Any], value: Any) -> None:
    is_obj, container, key = frame
    if not is_obj:
        container.append(value)
        return
    if key is _PENDING:
        frame[2] = value if isinstance(value, str) else ""
        return
    if key not in container:
        container[key] = value
    frame[2] = _PENDING


_PENDING: Final = object()


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def _as_bytes(s: bytes | str) -> bytes:
    return s if isinstance(s, bytes) else s.encode("utf-8", "surrogateescape")


def valid(doc: bytes | str) -> bool:
    """``gjson.ValidBytes(doc)``: is ``doc`` exactly one JSON value (whitespace around allowed)?

    Strings may hold any bytes except control characters (invalid UTF-8 is accepted, as in Go);
    ``NaN``, ``Infinity``, trailing commas and trailing garbage are not. Any nesting depth.
    """
    return _valid(_as_bytes(doc))


def get(doc: bytes | str, path: str | bytes) -> Any:
    """``gjson.GetBytes(doc, path)``: the :class:`Result` gjson v1.18.0 returns.

    Does not validate ``doc`` (gjson does not): on malformed input it answers what gjson answers.
    For a ``bytes`` document the result is a :class:`Result` (``raw`` is bytes); for a ``str``
    document a :class:`TextResult` (``raw`` is text). Raises :class:`Refused`: its subclass
    :class:`PathTooComplex` when the path nests deeper than :data:`MAX_PATH_NESTING` levels,
    :class:`TooMuchWork` past :data:`MAX_BUILT_BYTES` / :data:`MAX_WORK_BYTES`. Pure; safe to
    call concurrently (the work budget is per thread).
    """
    _budget.left = MAX_WORK_BYTES
    res = _get(_as_bytes(doc), _as_bytes(path), 0)
    if isinstance(doc, str):
        return TextResult(res)
    return res


def get_bytes(doc: bytes, path: str | bytes) -> Result:
    """Like :func:`get` on bytes, typed as :class:`Result`."""
    _budget.left = MAX_WORK_BYTES
    return _get(doc, _as_bytes(path), 0)
