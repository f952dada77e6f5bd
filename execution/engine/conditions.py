"""GJSON step conditions, evaluated the way KServe's router does (ROUTER-SEMANTICS §2.11).

KServe tests ``gjson.GetBytes(doc, condition).Exists()`` after checking ``gjson.ValidBytes(doc)``.
A present ``false``, ``null``, ``0``, ``""``, ``[]`` or ``{}`` therefore *matches*; only a missing
result does not. We use ``pygjson`` (Rust gjson.rs bindings), which agrees with Go gjson v1.18.0
on the whole verified truth table except one row: the literal path ``!true`` exists in Go and does
not in pygjson. Nobody writes ``!true`` as a route condition, so we accept the difference.

An empty condition is evaluated like any other path, as Go does: it matches nothing unless the
document has a key named ``""``. (A Sequence never evaluates an empty condition: there it means
"no condition".)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pygjson

from execution.engine.gojson import is_valid_json

__all__ = ["ConditionResult", "evaluate_condition", "to_python"]

NOT_JSON_REASON = "document is not valid JSON"


@dataclass(frozen=True, slots=True)
class ConditionResult:
    """The outcome of one condition on one document.

    ``matches`` is KServe's ``Exists()``. ``value`` is the matched value as plain Python (JSON
    types), ``raw`` that value re-encoded as compact JSON (pygjson does not expose the source slice,
    so whitespace and number spelling may differ from the document). ``reason`` says why it did not
    match, when there is something more to say than "the path is absent".
    """

    matches: bool
    value: Any | None = None
    raw: str | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible view (for traces and the REST endpoint)."""
        return {"matches": self.matches, "value": self.value, "raw": self.raw, "reason": self.reason}


def to_python(result: Any) -> Any:
    """Convert a pygjson ``Result`` tree into dicts, lists and scalars."""
    kind = result.type_
    if kind is dict:
        return {key: to_python(child) for key, child in result.items()}
    if kind is list:
        return [to_python(child) for child in result.value]
    return result.value


def _get(document: bytes | str, condition: str) -> Any:
    if isinstance(document, bytes):
        try:
            return pygjson.get_bytes(document, condition)
        except UnicodeDecodeError:
            # Go reads invalid UTF-8 inside strings as U+FFFD; so do we.
            return pygjson.get(document.decode("utf-8", "replace"), condition)
    return pygjson.get(document, condition)


def condition_exists(document: bytes | str, condition: str) -> bool:
    """Fast path for the engine: ``ValidBytes(doc) && GetBytes(doc, cond).Exists()``."""
    return is_valid_json(document) and bool(_get(document, condition).exists())


def evaluate_condition(document: bytes | str, condition: str, *, with_value: bool = True) -> ConditionResult:
    """Evaluate ``condition`` (a GJSON path) against ``document`` as KServe's router would.

    Never raises for bad input: a document that is not valid JSON gives ``matches=False`` with a
    reason; an absent path gives ``matches=False``. Pure and safe to call concurrently.
    ``with_value=False`` skips building ``value``/``raw`` (they can be as large as the document).
    """
    if not is_valid_json(document):
        return ConditionResult(matches=False, reason=NOT_JSON_REASON)
    result = _get(document, condition)
    if not result.exists():
        reason = "empty condition" if condition == "" else "path not found"
        return ConditionResult(matches=False, reason=reason)
    if not with_value:
        return ConditionResult(matches=True)
    value = to_python(result)
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return ConditionResult(matches=True, value=value, raw=raw)
