"""How deep a JSON text nests, counted before anything parses it (no Django, no DRF).

One limit for every way JSON comes in: request bodies, a run's raw payload string, the document of
the condition evaluator and the stored bodies the run API shows. Python's json, DRF's renderer and
tree walks recurse once per level and meet the interpreter's recursion limit (1,000 frames) well
before 1,000 levels; 200 leaves room under it for the frames around them and is far above any
inference payload or manifest seen in practice (a handful of levels).
"""

from __future__ import annotations

from typing import Any, Final

MAX_JSON_DEPTH: Final = 200


def nesting_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a left-to-right JSON reader could get more than ``limit`` brackets deep in ``text``.

    Counts ``[`` and ``{`` outside JSON strings (a ``"`` opens one, an unescaped ``"`` closes it),
    for any text, valid JSON or not: a recursive parser (Python's json, GJSON's validator) only
    descends along the valid prefix, and that prefix reads strings exactly this way. A stray
    closing bracket does not take the count below zero, so ``]]][[[`` counts as 3 levels. Linear,
    allocates nothing; text with at most ``limit`` opening brackets returns at once. Never raises.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}" and depth:
            depth -= 1
    return False


def too_deep_message(where: str, limit: int = MAX_JSON_DEPTH) -> str:
    """The one wording of a refusal for nesting: where it was hit and the limit."""
    return f"{where} is nested deeper than {limit} levels (the limit of JSON nesting)."


def too_deep_issue(where: str, path: str, limit: int = MAX_JSON_DEPTH) -> dict[str, Any]:
    """An API issue (``request.too-deep``) for :func:`too_deep_message` at field ``path``."""
    return {
        "code": "request.too-deep",
        "severity": "error",
        "path": path,
        "message": too_deep_message(where, limit),
    }
