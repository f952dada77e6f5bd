"""GJSON paths as Go's ``github.com/tidwall/gjson`` v1.18.0 evaluates them (KServe's router pins it).

KServe decides Switch routes and Sequence conditions with ``gjson.ValidBytes(doc)`` and
``gjson.GetBytes(doc, condition).Exists()``. This package answers both questions the way that Go
library does, byte for byte, including on odd paths and malformed documents (``Get`` does not
validate). It is our own pure-Python implementation of the documented behaviour, checked against
the Go library itself by the tests in ``tests/engine/test_gjson.py`` (recorded answers, and the
live Go binary where it is installed).

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

The package follows the concerns of the Go source: :mod:`.result` (the ``Result`` type, limits,
Go number conversions), :mod:`.scan` (reading strings, numbers, literals and containers),
:mod:`.match` (wildcards), :mod:`.query` and :mod:`.paths` (reading a path), :mod:`.walk` (the
walk itself), :mod:`.modifiers` and :mod:`.pretty`, :mod:`.validate` (``ValidBytes``) and
:mod:`.pyvalue` (values as Python).
"""

from __future__ import annotations

from typing import Any

from execution.engine.goports.gjson.flavour import gjson_context, is_legacy
from execution.engine.goports.gjson.result import (
    FALSE,
    JSON,
    MAX_BUILT_BYTES,
    MAX_PATH_NESTING,
    MAX_WORK_BYTES,
    NULL,
    NUMBER,
    STRING,
    TRUE,
    PathTooComplex,
    Refused,
    Result,
    TextResult,
    TooMuchWork,
    _budget,
)
from execution.engine.goports.gjson.validate import _valid
from execution.engine.goports.gjson.walk import _get

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
    "TextResult",
    "TooMuchWork",
    "get",
    "get_bytes",
    "gjson_context",
    "is_legacy",
    "valid",
]
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
