"""Go's ``json.Marshal`` of a decoded value: sorted keys, compact, ``<>&`` escaped, float64
numbers printed as Go prints them."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Final

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
