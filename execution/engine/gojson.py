"""JSON the way KServe's Go router reads and writes it (Go 1.19 ``encoding/json``).

- :func:`is_valid_json` is Go's ``json.Valid`` (strict: no ``NaN``/``Infinity``, no trailing garbage,
  at most 10,000 levels of nesting);
- :func:`go_json_loads` is ``json.Unmarshal(body, &interface{})``; :func:`go_unmarshal_object` is
  ``json.Unmarshal(body, &map[string]interface{})`` as the Ensemble router does it;
  :func:`go_unmarshal_predictions` is the struct decode behind ``mapPredictionsToInstances``. All
  raise :class:`GoJsonError` carrying Go's error text byte for byte;
- :func:`go_json_dumps` is ``json.Marshal`` of the decoded value: sorted keys, compact, ``<>&``
  escaped, non-ASCII kept, every number a float64 printed like Go.

Numbers are decoded as ``float`` on purpose: Go decodes into ``interface{}`` as float64, so
``12345678901234567890`` comes back as ``12345678901234567000``.

Two paths, one answer. Shallow, well-formed documents go through the C ``json`` module (fast). All
else (syntax errors, deep nesting, surrogate escapes, numbers out of range) goes through an
iterative parser over the *bytes* that follows the states of Go's scanner, so errors name the same
byte (as Go does: a byte >= 0x80 is named as the Latin-1 rune, ``'ï'`` for a UTF-8 BOM) in the
same context. Nothing here recurses, so hostile nesting gives Go's error, never a RecursionError.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from json import decoder as _decoder
from typing import Any, Final

__all__ = [
    "GoJsonError",
    "go_float",
    "go_json_dumps",
    "go_json_loads",
    "go_syntax_error",
    "go_unmarshal_object",
    "go_unmarshal_predictions",
    "is_valid_json",
]

_MAP_TYPE: Final = "map[string]interface {}"
_SLICE_TYPE: Final = "[]interface {}"
# reflect's name of the anonymous struct KServe decodes into for mapPredictionsToInstances
# (ROUTER-SEMANTICS §2.4). The router ignores this error, so its wording cannot be observed.
_PREDICTIONS_TYPE: Final = (
    'struct { Predictions []interface {} "json:\\"predictions,omitempty\\""; '
    'Instances []interface {} "json:\\"instances,omitempty\\"" }'
)
# Go's scanner refuses nesting deeper than this (encoding/json scanner.go maxNestingDepth).
_MAX_DEPTH: Final = 10000
_EOF: Final = "unexpected end of JSON input"


class GoJsonError(ValueError):
    """A decode error whose message is the text Go's encoding/json would produce."""


# --- bytes to text the way Go does it -------------------------------------------------------------


def _per_byte_replace(exc: UnicodeError) -> tuple[str, int]:
    # Go's utf8.DecodeRune rejects an invalid sequence one byte at a time, so every byte of it
    # becomes its own U+FFFD; Python's "replace" gives one U+FFFD per maximal invalid subpart.
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd" * (exc.end - exc.start), exc.end


_REPLACE: Final = "gojson.per-byte-replace"
codecs.register_error(_REPLACE, _per_byte_replace)


def _text(data: bytes) -> str:
    return data.decode("utf-8", _REPLACE)


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data


# --- the exact path: an iterative parser over bytes that follows Go's scanner ---------------------

_WS_RE: Final = re.compile(rb"[ \t\r\n]*+")
# The C string decoder behind json.loads (undeclared in typeshed): (text, index after the quote,
# strict) -> (value, index after the closing quote).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = _decoder.scanstring  # type: ignore[attr-defined]


def _skip_ws(data: bytes, pos: int) -> int:
    match = _WS_RE.match(data, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


# A complete, valid string token (possessive, so a failed match costs linear time).
_STRING_RE: Final = re.compile(rb'"((?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+)"')
_NUMBER_RE: Final = re.compile(rb"-?(?:0|[1-9][0-9]*+)(\.[0-9]++)?([eE][-+]?[0-9]++)?")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# Validation only: a run of ", scalar" (array) or ", "key": scalar" (object) members in one regex
# call. A scalar must end where Go's scanner would end it (a number or literal is followed by
# whitespace or punctuation), so the run stops before anything the byte-by-byte path must judge.
_END: Final = rb"(?=[ \t\r\n,\]}])"
_SCALAR: Final = (
    rb'(?:"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
    rb"|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?"
    + _END
    + rb"|(?:true|false|null)"
    + _END
    + rb")"
)
_STRING: Final = rb'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
_W: Final = rb"[ \t\r\n]*+"
_MEMBER: Final = _STRING + _W + rb":" + _W + _SCALAR
# A container holding only scalars (one level deeper: used only below the depth limit).
_FLAT: Final = (
    rb"(?:\[" + _W + rb"(?:" + _SCALAR + rb"(?:" + _W + rb"," + _W + _SCALAR + rb")*+" + _W + rb")?\]"
    rb"|\{" + _W + rb"(?:" + _MEMBER + rb"(?:" + _W + rb"," + _W + _MEMBER + rb")*+" + _W + rb")?\})"
)
_ITEM: Final = rb"(?:" + _SCALAR + rb"|" + _FLAT + rb")"
_LIST_RUN: Final = re.compile(rb"(?:" + _W + rb"," + _W + _ITEM + rb")*+")
_DICT_RUN: Final = re.compile(rb"(?:" + _W + rb"," + _W + _STRING + _W + rb":" + _W + _ITEM + rb")*+")
_LIST_RUN_SCALARS: Final = re.compile(rb"(?:" + _W + rb"," + _W + _SCALAR + rb")*+")
_DICT_RUN_SCALARS: Final = re.compile(rb"(?:" + _W + rb"," + _W + _MEMBER + rb")*+")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = frozenset(b'"\\/bfnrt')
_SPACE: Final = 0x20  # Go's scanner.eof() feeds one ' ' after the last byte


class _Syntax(Exception):
    """A syntax error; its argument is Go's message."""


def _quote_char(byte: int) -> str:
    """Go's ``quoteChar``: how a syntax error names the offending byte (as the rune of that value)."""
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    # strconv.Quote(string(rune(byte))) without its double quotes.
    named = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}
    if byte in named:
        return f"'{named[byte]}'"
    if byte == 0x5C:
        return "'\\\\'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    char = chr(byte)
    if not char.isprintable():  # C1 controls, NBSP, soft hyphen: unicode.IsPrint is false for them
        return f"'\\u{byte:04x}'"
    return f"'{char}'"


def _invalid(byte: int, context: str) -> _Syntax:
    return _Syntax(f"invalid character {_quote_char(byte)} {context}")


def _at(data: bytes, pos: int) -> int:
    return data[pos] if pos < len(data) else _SPACE


def _string_error(data: bytes, pos: int) -> _Syntax:
    """The error in the string starting at ``data[pos] == '"'`` (the token regex did not match)."""
    n = len(data)
    pos += 1
    while pos < n:
        byte = data[pos]
        if byte == 0x5C:  # backslash
            esc = _at(data, pos + 1)
            if esc in _SIMPLE_ESCAPES:
                pos += 2
                continue
            if esc != 0x75:  # 'u'
                return _invalid(esc, "in string escape code")
            for offset in range(2, 6):
                if _at(data, pos + offset) not in _HEX:
                    return _invalid(_at(data, pos + offset), "in \\u hexadecimal character escape")
            pos += 6
            continue
        if byte < 0x20:
            return _invalid(byte, "in string literal")
        pos += 1
    return _Syntax(_EOF)  # Go's scanner treats the final ' ' as part of the string


def _decode_string(raw: bytes) -> str:
    """Go's ``unquote`` of a valid string body: per-byte U+FFFD, lone surrogate escapes -> U+FFFD."""
    if 0x5C not in raw:
        return raw.decode("ascii") if raw.isascii() else _text(raw)
    text, _ = _scanstring(_text(raw) + '"', 0, True)
    # Python keeps lone surrogates from \uD800-style escapes; Go replaces each with U+FFFD (a valid
    # pair has already been combined by scanstring, as Go's utf16.DecodeRune does).
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _number(data: bytes, pos: int) -> tuple[int, bytes]:
    """Scan the number at ``pos``; returns (end, literal). Errors as Go's number states give them."""
    match = _NUMBER_RE.match(data, pos)
    if match is None:  # a '-' without a digit
        raise _invalid(_at(data, pos + 1), "in numeric literal")
    end = match.end()
    fraction, exponent = match.group(1), match.group(2)
    if exponent is None:
        nxt = _at(data, end)
        if nxt == 0x2E and fraction is None:  # '.'
            raise _invalid(_at(data, end + 1), "after decimal point in numeric literal")
        if nxt in (0x65, 0x45):  # 'e' 'E'
            after = end + 1
            if _at(data, after) in (0x2B, 0x2D):
                after += 1
            raise _invalid(_at(data, after), "in exponent of numeric literal")
    return end, match.group(0)


_LITERALS: Final = {0x74: (b"true", True), 0x66: (b"false", False), 0x6E: (b"null", None)}


def _literal(data: bytes, pos: int) -> tuple[int, Any]:
    word, value = _LITERALS[data[pos]]
    if data.startswith(word, pos):
        return pos + len(word), value
    for offset in range(1, len(word)):
        got = _at(data, pos + offset)
        if got != word[offset]:
            name = word.decode()
            raise _invalid(got, f"in literal {name} (expecting '{chr(word[offset])}')")
    raise AssertionError("unreachable")  # pragma: no cover


class _Parsed:
    """The result of :func:`_parse`: the value, the saved (non-syntax) errors, the top-level pairs."""

    __slots__ = ("errors", "pairs", "value")

    def __init__(self) -> None:
        self.value: Any = None
        # Go's decoder keeps going after a number it cannot hold and reports the first such error.
        self.errors: list[str] = []  # the literals, in document order
        # Every member of a top-level object in document order (duplicates included), with the
        # slice of ``errors`` that arose inside its value.
        self.pairs: list[tuple[str, Any, int, int]] = []  # (key, value, errors start, errors end)


def _parse(data: bytes, *, build: bool = True) -> _Parsed:
    """Parse ``data`` as Go's ``checkValid`` + decoder into ``interface{}`` would; iterative.

    Raises :class:`_Syntax` with Go's message on the first syntax error (in byte order). With
    ``build=False`` it only validates (Go's ``checkValid``): no values, no saved errors.
    """
    result = _Parsed()
    n = len(data)
    containers: list[Any] = []  # open dicts and lists
    keys: list[str] = []  # the pending key of each open dict (placeholder "" for lists)
    pair_start = 0
    pos = _skip_ws(data, 0)
    # States: expecting a value, expecting an object key, having completed a value.
    value: Any = None
    expect_key = False
    while True:
        if expect_key:
            # After '{' (not empty) or ',' inside an object: a key string, ':' then a value.
            if pos >= n:
                raise _Syntax(_EOF)
            if data[pos] != 0x22:
                raise _invalid(data[pos], "looking for beginning of object key string")
            match = _STRING_RE.match(data, pos)
            if match is None:
                raise _string_error(data, pos)
            key = _decode_string(match.group(1)) if build else ""
            pos = _skip_ws(data, match.end())
            if pos >= n:
                raise _Syntax(_EOF)
            if data[pos] != 0x3A:
                raise _invalid(data[pos], "after object key")
            keys[-1] = key
            if len(containers) == 1:
                pair_start = len(result.errors)
            pos = _skip_ws(data, pos + 1)
            expect_key = False
        # Expecting a value.
        if pos >= n:
            raise _Syntax(_EOF)
        byte = data[pos]
        if byte == 0x7B or byte == 0x5B:  # '{' '['
            if len(containers) >= _MAX_DEPTH:
                raise _invalid(byte, "exceeded max depth")
            pos = _skip_ws(data, pos + 1)
            if pos >= n:
                raise _Syntax(_EOF)
            if byte == 0x7B:
                if data[pos] == 0x7D:
                    value, pos = {}, pos + 1
                else:
                    containers.append({})
                    keys.append("")
                    expect_key = True
                    continue
            elif data[pos] == 0x5D:
                value, pos = [], pos + 1
            else:
                containers.append([])
                keys.append("")
                continue
        elif byte == 0x22:
            match = _STRING_RE.match(data, pos)
            if match is None:
                raise _string_error(data, pos)
            value, pos = (_decode_string(match.group(1)) if build else None), match.end()
        elif byte == 0x2D or 0x30 <= byte <= 0x39:
            pos, literal = _number(data, pos)
            value = float(literal) if build else None
            if build and math.isinf(value):
                result.errors.append(literal.decode("ascii"))
        elif byte in _LITERALS:
            pos, value = _literal(data, pos)
        else:
            raise _invalid(byte, "looking for beginning of value")
        # A value is complete: attach it, then close as many containers as the input closes.
        while True:
            if not containers:
                pos = _skip_ws(data, pos)
                if pos < n:
                    raise _invalid(data[pos], "after top-level value")
                result.value = value
                return result
            parent = containers[-1]
            if not build:
                if len(containers) < _MAX_DEPTH:
                    runs = (_DICT_RUN, _LIST_RUN)
                else:  # a nested container here would exceed the limit: scalars only
                    runs = (_DICT_RUN_SCALARS, _LIST_RUN_SCALARS)
                run = runs[0 if isinstance(parent, dict) else 1].match(data, pos)
                assert run is not None  # the pattern matches the empty string
                pos = run.end()
            elif isinstance(parent, dict):
                parent[keys[-1]] = value
                if build and len(containers) == 1:
                    result.pairs.append((keys[-1], value, pair_start, len(result.errors)))
            elif build:
                parent.append(value)
            pos = _skip_ws(data, pos)
            if pos >= n:
                raise _Syntax(_EOF)
            byte = data[pos]
            if byte == 0x2C:  # ','
                pos = _skip_ws(data, pos + 1)
                expect_key = isinstance(parent, dict)
                break
            if isinstance(parent, dict):
                if byte != 0x7D:
                    raise _invalid(byte, "after object key:value pair")
            elif byte != 0x5D:
                raise _invalid(byte, "after array element")
            value = containers.pop()
            keys.pop()
            pos += 1


def go_syntax_error(data: bytes | str) -> str | None:
    """The syntax error Go's ``json.Unmarshal`` reports for ``data``, or None if ``json.Valid``."""
    try:
        _parse(_as_bytes(data), build=False)
    except _Syntax as exc:
        return str(exc)
    return None


# --- the fast path: the C json module, for what it decodes exactly like Go ------------------------

# An escape that may stand for a surrogate: Go and Python treat lone ones differently.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


class _Unsupported(Exception):
    """The fast path cannot answer exactly; use the exact parser."""


def _reject(_: str) -> Any:
    raise _Unsupported


def _float64(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Unsupported
    return value


def _fast_loads(data: bytes) -> Any:
    if _SURROGATE_ESCAPE.search(data):
        raise _Unsupported
    try:
        return json.loads(_text(data), parse_constant=_reject, parse_int=_float64, parse_float=_float64)
    except (ValueError, RecursionError):
        raise _Unsupported from None


def is_valid_json(data: bytes | str) -> bool:
    """Go's ``json.Valid``: one strict JSON value, surrounding whitespace, nesting <= 10,000.

    Bytes that are not UTF-8 are accepted inside strings, as Go does. Pure; never recurses.
    """
    raw = _as_bytes(data)
    try:
        # Valid for the C parser (NaN and Infinity refused) is valid for Go; its failures, deep
        # nesting and integers too long for int() included, are re-judged by the exact parser.
        json.loads(_text(raw), parse_constant=_reject)
        return True
    except (_Unsupported, ValueError, RecursionError):
        pass
    try:
        _parse(raw, build=False)
    except _Syntax:
        return False
    return True


def _exact(data: bytes) -> _Parsed:
    try:
        _parse(data, build=False)  # a syntax error is found faster without building values
        return _parse(data)
    except _Syntax as exc:
        raise GoJsonError(str(exc)) from None


def _number_error(literal: str) -> GoJsonError:
    return GoJsonError(f"json: cannot unmarshal number {literal} into Go value of type float64")


def go_json_loads(data: bytes | str) -> Any:
    """``json.Unmarshal(data, &v)`` with ``var v interface{}``: numbers float, bad UTF-8 U+FFFD.

    Raises :class:`GoJsonError` with Go's message (syntax errors first, then a number that does not
    fit a float64).
    """
    raw = _as_bytes(data)
    try:
        return _fast_loads(raw)
    except _Unsupported:
        pass
    parsed = _exact(raw)
    if parsed.errors:
        raise _number_error(parsed.errors[0])
    return parsed.value


def _go_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def go_unmarshal_object(data: bytes) -> dict[str, Any] | None:
    """``json.Unmarshal(data, &map[string]interface{})``: an object, or ``None`` for ``null``.

    Raises :class:`GoJsonError` (Go's text) for a syntax error, a non-object top-level value (Go
    decodes nothing further then), or a number beyond float64.
    """
    try:
        value = _fast_loads(data)
    except _Unsupported:
        parsed = _exact(data)
        value = parsed.value
        if value is not None and not isinstance(value, dict):
            raise GoJsonError(
                f"json: cannot unmarshal {_go_kind(value)} into Go value of type {_MAP_TYPE}"
            ) from None
        if parsed.errors:
            raise _number_error(parsed.errors[0]) from None
        return value
    if value is None or isinstance(value, dict):
        return value
    raise GoJsonError(f"json: cannot unmarshal {_go_kind(value)} into Go value of type {_MAP_TYPE}")


_FIELDS: Final = ("predictions", "instances")


def _fold_equal(name: str, key: str) -> bool:
    """encoding/json's case-insensitive field match for an ASCII letter ``name`` with an 's'.

    ASCII letters match either case; U+017F (long s) matches 's' and U+212A (Kelvin) matches 'k',
    as Go's simple folding does; nothing else (no multi-character folds).
    """
    if len(name) != len(key):
        return False
    for want, got in zip(name, key, strict=True):
        if got == want or (got.isascii() and got.lower() == want):
            continue
        if (want, got) in (("s", "\u017f"), ("k", "\u212a")):
            continue
        return False
    return True


def _field_for(key: str) -> str | None:
    if key in _FIELDS:
        return key
    for name in _FIELDS:
        if _fold_equal(name, key):
            return name
    return None


def go_unmarshal_predictions(data: bytes) -> list[Any] | None:
    """The ``predictions`` of ``json.Unmarshal(data, &struct{Predictions, Instances []any})``.

    This is the decode behind ``mapPredictionsToInstances`` (ROUTER-SEMANTICS §2.4): keys match
    the two fields exactly or case-insensitively (Go's folding), the last occurrence wins, other
    keys are skipped without being decoded (so ``{"predictions":[1],"x":1e400}`` decodes), ``null``
    leaves a field nil. Returns the predictions list, or None when absent or null.

    Raises :class:`GoJsonError` whenever Go's Unmarshal returns an error: a syntax error, a
    non-object top-level value, a field that is neither an array nor null (``"predictions":"x"``
    or ``"instances":{}``), or a number beyond float64 inside either field. KServe then leaves the
    body unchanged; the router never shows this error, so only its occurrence is checked against
    the oracle, not its wording.
    """
    parsed = _exact(data)
    if parsed.value is None:
        return None
    if not isinstance(parsed.value, dict):
        raise GoJsonError(
            f"json: cannot unmarshal {_go_kind(parsed.value)} into Go value of type {_PREDICTIONS_TYPE}"
        )
    fields: dict[str, list[Any] | None] = {}
    first_error: str | None = None
    for key, value, errors_start, errors_end in parsed.pairs:
        name = _field_for(key)
        if name is None:
            continue
        if value is None or isinstance(value, list):
            if errors_end > errors_start and first_error is None:
                first_error = (
                    f"json: cannot unmarshal number {parsed.errors[errors_start]} "
                    f"into Go struct field .{name} of type float64"
                )
            fields[name] = value
        elif first_error is None:
            first_error = (
                f"json: cannot unmarshal {_go_kind(value)} into Go struct field .{name} of type {_SLICE_TYPE}"
            )
    if first_error is not None:
        raise GoJsonError(first_error)
    return fields.get("predictions")


# --- encoding -------------------------------------------------------------------------------------

# Go 1.19's encodeState.string: short escapes only for \n \r \t \" \\; every other control byte,
# <, >, & and U+2028/U+2029 as \u00XX / \u20XX. DEL (0x7f) is written as is.
_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    mapped = _ESCAPES.get(char)
    if mapped is not None:
        return mapped
    code = ord(char)
    if code < 0x20:
        return f"\\u{code:04x}"
    # A lone surrogate cannot come from Go's decoder; written as U+FFFD, like invalid UTF-8.
    return "\ufffd"


def _go_string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return f'"{text}"'
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def go_float(value: float) -> str:
    """Format a float64 exactly as Go's encoding/json does (``strconv`` shortest digits).

    ``'f'`` notation unless ``|v| < 1e-6`` or ``|v| >= 1e21``; exponents lose their leading zero
    (``1e-07`` -> ``1e-7``). Raises ValueError for NaN/Inf, which Go refuses to encode.
    """
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {value!r}")
    shortest = repr(value)  # Python's repr is also the shortest round-tripping digit string
    if "e" not in shortest:
        # Python writes positional notation for 1e-4 <= |v| < 1e16, inside Go's 'f' range; only
        # Python's ".0" on whole numbers differs.
        return shortest[:-2] if shortest.endswith(".0") else shortest
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = shortest.partition("e")
        if mantissa.endswith(".0"):
            mantissa = mantissa[:-2]
        sign = exponent[0] if exponent[0] in "+-" else "+"
        digits = exponent.lstrip("+-")
        if len(digits) < 2:
            digits = "0" + digits
        if sign == "-" and len(digits) == 2 and digits[0] == "0":
            digits = digits[1:]
        return f"{mantissa}e{sign}{digits}"
    text = format(Decimal(shortest), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _key_text(entry: tuple[Any, Any]) -> str:
    return str(entry[0])


class _Raw(str):
    """Text to emit as is (the encoder's work stack also holds values, which may be strings)."""

    __slots__ = ()


_OPEN_OBJECT: Final = _Raw("{")
_CLOSE_OBJECT: Final = _Raw("}")
_OPEN_ARRAY: Final = _Raw("[")
_CLOSE_ARRAY: Final = _Raw("]")
_COMMA: Final = _Raw(",")


def go_json_dumps(value: Any) -> bytes:
    """Encode like Go's ``json.Marshal`` of an ``interface{}`` tree; returns UTF-8 bytes.

    Keys sorted (code point order equals Go's byte order for valid UTF-8), no whitespace, HTML
    characters escaped, numbers formatted as float64. Iterative: any depth. Raises TypeError for
    values JSON cannot hold and ValueError for NaN/Inf.
    """
    out: list[str] = []
    emit = out.append
    work: list[Any] = [value]
    pop = work.pop
    push = work.append
    while work:
        item = pop()
        if isinstance(item, _Raw):
            emit(item)
        elif item is None:
            emit("null")
        elif item is True:
            emit("true")
        elif item is False:
            emit("false")
        elif isinstance(item, str):
            emit(_go_string(item))
        elif isinstance(item, (int, float)):
            emit(go_float(float(item)))
        elif isinstance(item, dict):
            if not item:
                emit("{}")
                continue
            emit("{")
            push(_CLOSE_OBJECT)
            entries = sorted(item.items(), key=_key_text)
            for index in range(len(entries) - 1, -1, -1):
                key, member = entries[index]
                push(member)
                prefix = _go_string(str(key)) + ":"
                push(_Raw("," + prefix if index else prefix))
        elif isinstance(item, (list, tuple)):
            if not item:
                emit("[]")
                continue
            emit("[")
            push(_CLOSE_ARRAY)
            for index in range(len(item) - 1, -1, -1):
                push(item[index])
                if index:
                    push(_COMMA)
        else:
            raise TypeError(f"json: unsupported type: {type(item).__name__}")
    return "".join(out).encode("utf-8")
