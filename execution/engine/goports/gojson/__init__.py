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

import json
import math
import re
from typing import Any, Final

from execution.engine.goports.gojson.encode import go_float, go_json_dumps
from execution.engine.goports.gojson.scanner import (
    _as_bytes,
    _parse,
    _Parsed,
    _Syntax,
    _text,
    go_syntax_error,
)

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
# (docs/router-semantics.md, "Sequence"). The router ignores this error, so its wording cannot be observed.
_PREDICTIONS_TYPE: Final = (
    'struct { Predictions []interface {} "json:\\"predictions,omitempty\\""; '
    'Instances []interface {} "json:\\"instances,omitempty\\"" }'
)


class GoJsonError(ValueError):
    """A decode error whose message is the text Go's encoding/json would produce."""


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

    This is the decode behind ``mapPredictionsToInstances`` (docs/router-semantics.md, "Sequence"): keys match
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
