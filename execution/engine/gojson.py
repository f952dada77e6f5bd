"""JSON the way KServe's Go router reads and writes it.

Three jobs:

- :func:`is_valid_json` is Go's ``json.Valid`` (strict: no ``NaN``/``Infinity``, no trailing garbage);
- :func:`go_unmarshal_object` is ``json.Unmarshal(body, &map[string]interface{})`` as the Ensemble
  router does it, raising :class:`GoJsonError` with Go's error text;
- :func:`go_json_dumps` is ``json.Marshal`` of the decoded value: sorted keys, compact, ``<>&``
  escaped, non-ASCII kept, every number a float64 printed like Go.

Numbers are decoded as ``float`` on purpose: Go decodes into ``interface{}`` as float64, so
``12345678901234567890`` comes back as ``12345678901234567000``.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Final

from execution.engine.gjson import valid as _gjson_valid

_MAP_TYPE: Final = "map[string]interface {}"
# Go's decoder refuses nesting deeper than this (encoding/json scanner.go maxNestingDepth).
_MAX_DEPTH: Final = 10000


class GoJsonError(ValueError):
    """A decode error whose message is the text Go's encoding/json would produce."""


def is_valid_json(data: bytes | str) -> bool:
    """Go's ``json.Valid``: strict JSON, one value, surrounding whitespace allowed.

    Bytes that are not UTF-8 are accepted inside strings, as Go does (they decode to U+FFFD).
    For now this is gjson's ``ValidBytes`` (the same grammar, any depth); the 10,000-level depth
    limit of ``encoding/json`` is not applied here.
    """
    return _gjson_valid(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard constant {name}")


class _NumberOverflow(Exception):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _parse_number(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _NumberOverflow(literal)
    return value


def go_json_loads(data: bytes | str) -> Any:
    """Decode like Go into ``interface{}``: numbers become float, invalid UTF-8 becomes U+FFFD.

    Raises :class:`GoJsonError` with Go's message on any syntax error.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_int=_parse_number, parse_float=_parse_number
        )
    except _NumberOverflow as exc:
        raise GoJsonError(
            f"json: cannot unmarshal number {exc.literal} into Go value of type float64"
        ) from None
    except RecursionError:
        raise GoJsonError("exceeded max depth") from None
    except ValueError as exc:
        raise GoJsonError(go_syntax_error(text) or f"invalid JSON: {exc}") from None


def go_unmarshal_object(data: bytes) -> dict[str, Any] | None:
    """``json.Unmarshal(data, &map[string]interface{})``: an object, or ``None`` for ``null``.

    Raises :class:`GoJsonError` (Go's text) for a syntax error or a non-object top-level value.
    """
    value = go_json_loads(data)
    if value is None or isinstance(value, dict):
        return value
    raise GoJsonError(f"json: cannot unmarshal {_go_kind(value)} into Go value of type {_MAP_TYPE}")


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


# --- encoding -------------------------------------------------------------------------------------

_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _escape_char(ch: str) -> str:
    mapped = _ESCAPES.get(ch)
    if mapped is not None:
        return mapped
    code = ord(ch)
    if code < 0x20:
        return f"\\u{code:04x}"
    if 0xD800 <= code <= 0xDFFF:
        # A lone surrogate (from a "\ud800" escape) is invalid UTF-8; Go writes U+FFFD.
        return "\ufffd"
    return ch


def _needs_escape(text: str) -> bool:
    return any(ch in _ESCAPES or ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def _go_string(text: str) -> str:
    if not _needs_escape(text):
        return f'"{text}"'
    return '"' + "".join(_escape_char(ch) for ch in text) + '"'


def go_float(value: float) -> str:
    """Format a float64 exactly as Go's encoding/json does (``strconv`` shortest digits).

    ``'f'`` notation unless ``|v| < 1e-6`` or ``|v| >= 1e21``; exponents lose their leading zero
    (``1e-07`` -> ``1e-7``). Raises ValueError for NaN/Inf, which Go refuses to encode.
    """
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {value!r}")
    shortest = repr(value)  # Python's repr is also the shortest round-tripping digit string
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


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_go_string(value))
    elif isinstance(value, (int, float)):
        out.append(go_float(float(value)))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key in sorted(value):
            if not first:
                out.append(",")
            first = False
            out.append(_go_string(str(key)))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"json: unsupported type: {type(value).__name__}")


def go_json_dumps(value: Any) -> bytes:
    """Encode like Go's ``json.Marshal`` of an ``interface{}`` tree; returns UTF-8 bytes.

    Keys sorted (code point order equals Go's byte order for valid UTF-8), no whitespace, HTML
    characters escaped, numbers formatted as float64.
    """
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


# --- Go's scanner error messages ------------------------------------------------------------------


def _quote_char(ch: str) -> str:
    """Go's ``quoteChar``: how a syntax error names the offending character."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    simple = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    if ch in simple:
        return f"'{simple[ch]}'"
    if ch == "\\":
        return "'\\\\'"
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"'\\x{code:02x}'"
    if not ch.isprintable():
        return f"'\\u{code:04x}'"
    return f"'{ch}'"


class _Syntax(Exception):
    pass


def _invalid(ch: str, context: str) -> _Syntax:
    return _Syntax(f"invalid character {_quote_char(ch)} {context}")


_EOF: Final = "unexpected end of JSON input"
_WS: Final = " \t\r\n"


def go_syntax_error(text: str) -> str | None:
    """The message Go's ``json.Unmarshal`` gives for ``text``, or None when it is valid JSON.

    An iterative scanner (no recursion, so hostile nesting is safe) that follows the states of Go's
    encoding/json scanner closely enough to name the same character and context.
    """
    try:
        _scan(text)
    except _Syntax as exc:
        return str(exc)
    return None


def _scan(text: str) -> None:
    n = len(text)
    i = 0
    stack: list[str] = []  # "{" or "["

    def skip_ws(pos: int) -> int:
        while pos < n and text[pos] in _WS:
            pos += 1
        return pos

    def scan_string(pos: int) -> int:
        # text[pos] == '"'
        pos += 1
        while True:
            if pos >= n:
                raise _Syntax(_EOF)
            ch = text[pos]
            if ch == '"':
                return pos + 1
            if ch == "\\":
                pos += 1
                if pos >= n:
                    raise _Syntax(_EOF)
                esc = text[pos]
                if esc in 'bfnrt\\/"':
                    pos += 1
                    continue
                if esc != "u":
                    raise _invalid(esc, "in string escape code")
                pos += 1
                for _ in range(4):
                    if pos >= n:
                        raise _Syntax(_EOF)
                    if text[pos] not in "0123456789abcdefABCDEF":
                        raise _invalid(text[pos], "in \\u hexadecimal character escape")
                    pos += 1
                continue
            if ord(ch) < 0x20:
                raise _invalid(ch, "in string literal")
            pos += 1

    def scan_number(pos: int) -> int:
        if text[pos] == "-":
            pos += 1
            if pos >= n:
                raise _Syntax(_EOF)
            if text[pos] not in "0123456789":
                raise _invalid(text[pos], "in numeric literal")
        if text[pos] == "0":
            pos += 1
        else:
            while pos < n and text[pos].isdigit() and text[pos].isascii():
                pos += 1
        if pos < n and text[pos] == ".":
            pos += 1
            if pos >= n:
                raise _Syntax(_EOF)
            if not ("0" <= text[pos] <= "9"):
                raise _invalid(text[pos], "after decimal point in numeric literal")
            while pos < n and "0" <= text[pos] <= "9":
                pos += 1
        if pos < n and text[pos] in "eE":
            pos += 1
            if pos < n and text[pos] in "+-":
                pos += 1
            if pos >= n:
                raise _Syntax(_EOF)
            if not ("0" <= text[pos] <= "9"):
                raise _invalid(text[pos], "in exponent of numeric literal")
            while pos < n and "0" <= text[pos] <= "9":
                pos += 1
        return pos

    def scan_literal(pos: int, word: str) -> int:
        for offset in range(1, len(word)):
            if pos + offset >= n:
                raise _Syntax(_EOF)
            if text[pos + offset] != word[offset]:
                raise _invalid(text[pos + offset], f"in literal {word} (expecting '{word[offset]}')")
        return pos + len(word)

    def scan_value_start(pos: int) -> tuple[int, bool]:
        """Scan a scalar, or open a container; returns (position, opened_container)."""
        ch = text[pos]
        if ch == "{":
            stack.append("{")
            return pos + 1, True
        if ch == "[":
            stack.append("[")
            return pos + 1, True
        if ch == '"':
            return scan_string(pos), False
        if ch == "-" or "0" <= ch <= "9":
            return scan_number(pos), False
        if ch == "t":
            return scan_literal(pos, "true"), False
        if ch == "f":
            return scan_literal(pos, "false"), False
        if ch == "n":
            return scan_literal(pos, "null"), False
        raise _invalid(ch, "looking for beginning of value")

    # state: "value" (expect a value), "key" (expect key or '}' if first), "after"
    i = skip_ws(i)
    if i >= n:
        raise _Syntax(_EOF)
    state = "value"
    first_in_container = False
    while True:
        if state == "value":
            i = skip_ws(i)
            if i >= n:
                raise _Syntax(_EOF)
            if first_in_container and stack[-1] == "[" and text[i] == "]":
                stack.pop()
                i += 1
                state = "after"
                first_in_container = False
                continue
            i, opened = scan_value_start(i)
            if len(stack) > _MAX_DEPTH:
                raise _Syntax("exceeded max depth")
            if opened:
                first_in_container = True
                state = "key" if stack[-1] == "{" else "value"
            else:
                first_in_container = False
                state = "after"
        elif state == "key":
            i = skip_ws(i)
            if i >= n:
                raise _Syntax(_EOF)
            if first_in_container and text[i] == "}":
                stack.pop()
                i += 1
                state = "after"
                first_in_container = False
                continue
            if text[i] != '"':
                raise _invalid(text[i], "looking for beginning of object key string")
            i = skip_ws(scan_string(i))
            if i >= n:
                raise _Syntax(_EOF)
            if text[i] != ":":
                raise _invalid(text[i], "after object key")
            i += 1
            first_in_container = False
            state = "value"
        else:  # after a value
            i = skip_ws(i)
            if not stack:
                if i < n:
                    raise _invalid(text[i], "after top-level value")
                return
            if i >= n:
                raise _Syntax(_EOF)
            ch = text[i]
            if stack[-1] == "{":
                if ch == ",":
                    i += 1
                    state = "key"
                elif ch == "}":
                    stack.pop()
                    i += 1
                else:
                    raise _invalid(ch, "after object key:value pair")
            else:
                if ch == ",":
                    i += 1
                    state = "value"
                elif ch == "]":
                    stack.pop()
                    i += 1
                else:
                    raise _invalid(ch, "after array element")
