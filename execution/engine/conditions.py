"""GJSON step conditions, evaluated the way KServe's router does (docs/router-semantics.md, "GJSON").

KServe tests ``gjson.GetBytes(doc, condition).Exists()`` after checking ``gjson.ValidBytes(doc)``.
A present ``false``, ``null``, ``0``, ``""``, ``[]`` or ``{}`` therefore *matches*; only a missing
result does not. The paths are evaluated by :mod:`execution.engine.goports.gjson`, our pure-Python
gjson v1.18.0 (checked against the Go library), so every modifier, literal and query answers as
in KServe, and no document, however deep, can crash the process.

An empty condition is evaluated like any other path, as Go does: it matches nothing unless the
document has a key named ``""``. (A Sequence never evaluates an empty condition: there it means
"no condition".)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from execution.engine.goports import gjson

__all__ = ["ConditionResult", "condition_exists", "document_is_valid", "evaluate_condition"]

NOT_JSON_REASON = "document is not valid JSON"
DEEP_VALUE_REASON = "value nests too deeply to show"
# ``value`` is rendered by recursive encoders (json, DRF) downstream; deeper than this it would hit
# CPython's default recursion limit of 1000 once the callers' own frames are counted.
MAX_VALUE_DEPTH = 500
# Skips everything up to the next bracket that is outside a string.
_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*"?)*', re.DOTALL)


def _nests_deeper_than(raw: bytes, limit: int) -> bool:
    depth = 0
    pos = 0
    n = len(raw)
    while True:
        m = _TO_BRACKET.match(raw, pos)
        pos = m.end() if m else pos
        if pos >= n:
            return False
        if raw[pos] in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif raw[pos] in b"]}":
            depth -= 1
        pos += 1


@dataclass(frozen=True, slots=True)
class ConditionResult:
    """The outcome of one condition on one document.

    ``matches`` is KServe's ``Exists()``. ``raw`` is gjson's ``Result.Raw`` as text (the exact
    slice of the document, or what a modifier or multipath built; invalid UTF-8 shows as U+FFFD),
    ``value`` that raw parsed as plain Python (JSON types), or None with a ``reason`` when it nests
    deeper than :data:`MAX_VALUE_DEPTH`. ``reason`` otherwise says why it did not match, when there
    is something more to say than "the path is absent".
    """

    matches: bool
    value: Any | None = None
    raw: str | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible view (for traces and the REST endpoint)."""
        return {"matches": self.matches, "value": self.value, "raw": self.raw, "reason": self.reason}


def _get(document: bytes | str, condition: str) -> gjson.Result:
    data = document if isinstance(document, bytes) else document.encode("utf-8", "surrogateescape")
    return gjson.get_bytes(data, condition)


def condition_exists(document: bytes | str, condition: str) -> bool:
    """Fast path for the engine: ``ValidBytes(doc) && GetBytes(doc, cond).Exists()``."""
    if not document_is_valid(document):
        return False
    try:
        return _get(document, condition).exists
    except gjson.Refused:
        return False


def document_is_valid(document: bytes | str) -> bool:
    """``gjson.ValidBytes``: what KServe's Switch and Sequence check before any condition (gjson's
    own validator, not ``encoding/json``'s: it has no depth limit)."""
    return gjson.valid(document)


def evaluate_condition(
    document: bytes | str, condition: str, *, with_value: bool = True, valid: bool | None = None
) -> ConditionResult:
    """Evaluate ``condition`` (a GJSON path) against ``document`` as KServe's router would.

    Never raises for bad input: a document that is not valid JSON gives ``matches=False`` with a
    reason; an absent path gives ``matches=False``. Pure and safe to call concurrently.
    ``with_value=False`` skips building ``value``/``raw`` (they can be as large as the document).
    ``valid`` is :func:`document_is_valid` of ``document`` when the caller knows it already (a
    Switch checks its input once for all its conditions).
    """
    if not (document_is_valid(document) if valid is None else valid):
        return ConditionResult(matches=False, reason=NOT_JSON_REASON)
    try:
        result = _get(document, condition)
    except gjson.Refused as exc:
        return ConditionResult(matches=False, reason=str(exc))
    if not result.exists:
        reason = "empty condition" if condition == "" else "path not found"
        return ConditionResult(matches=False, reason=reason)
    if not with_value:
        return ConditionResult(matches=True)
    raw = result.raw.decode("utf-8", "replace")
    if _nests_deeper_than(result.raw, MAX_VALUE_DEPTH):
        return ConditionResult(matches=True, value=None, raw=raw, reason=DEEP_VALUE_REASON)
    return ConditionResult(matches=True, value=result.value(), raw=raw)
