"""gjson's ``Result`` and what every part of the evaluation shares: the result types, the
refusals, the per-call work budget, Go's number conversions and the trampoline that runs nested
calls on an explicit stack."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

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
        from execution.engine.goports.gjson.walk import _get  # the walk builds Results: import it late

        return _get(self.raw, path, 0)

    def for_each(self) -> Iterator[tuple[Result, Result]]:
        """gjson's ``ForEach`` as an iterator of ``(key, value)``."""
        from execution.engine.goports.gjson.scan import _for_each  # the scanner builds Results

        return _for_each(self)

    def value(self) -> Any:
        """The value as Python: dict, list, str, int/float, bool or None (None when missing too).

        Mirrors gjson's ``Value()`` (the first of duplicate keys wins; strings are unescaped and
        decoded as UTF-8 with U+FFFD for invalid bytes), except that an integer literal becomes a
        Python ``int`` instead of a float64. Built with an explicit stack: any depth is fine.
        """
        from execution.engine.goports.gjson.pyvalue import _to_python  # it reads Results

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
