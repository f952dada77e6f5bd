"""JSON values compared the way a test author means them: equality, subsets, ignored paths, diffs.

Values are JSON-compatible Python (dict with str keys, list, str, int, float, bool, None). Equality
is JSON's, not Python's: ``true`` is not ``1``, ``1`` equals ``1.0``.

An *ignore path* names fields to leave out of a comparison: keys separated by ``.`` (``\\.`` for a
literal dot), a decimal number selects an array element, ``*`` any key of an object, ``#`` every
element of an array (``predictions.#.score``). It is deliberately smaller than GJSON: it has to
*remove* values, which GJSON paths (queries, modifiers) cannot express.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "DiffEntry",
    "drop_paths",
    "json_diff",
    "json_equal",
    "json_subset",
    "parse_ignore_path",
]

# Diffs are read by people; past this many entries the rest is one line saying how many were left.
MAX_DIFF_ENTRIES: Final = 100
_ABSENT: Final = object()


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One difference at ``path`` (``$`` is the root, then ``.key`` and ``[index]``).

    ``op`` is ``changed`` (both sides have a value), ``missing`` (expected, absent in actual) or
    ``unexpected`` (in actual, not expected; never reported by a subset comparison).
    """

    path: str
    op: str
    expected: Any = None
    actual: Any = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "op": self.op}
        if self.op != "unexpected":
            out["expected"] = self.expected
        if self.op != "missing":
            out["actual"] = self.actual
        return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (``1 == 1.0``), never a boolean equal to a number."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def json_subset(expected: Any, actual: Any) -> bool:
    """True when ``actual`` contains ``expected``: objects may have more keys (recursively), arrays
    must have the same length with each element a subset, scalars must be equal."""
    return not json_diff(expected, actual, subset=True, limit=1)


def _key_path(path: str, key: str) -> str:
    if key and all(c.isalnum() or c in "_-$" for c in key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def json_diff(
    expected: Any, actual: Any, *, subset: bool = False, limit: int = MAX_DIFF_ENTRIES
) -> list[DiffEntry]:
    """The differences between ``expected`` and ``actual``, at most ``limit`` entries, in document
    order. With ``subset``, keys that only ``actual`` has are not differences. Iterative, so deep
    documents cannot exhaust the stack."""
    out: list[DiffEntry] = []
    # Entries still to look at, last first: (path, expected, actual), a side being _ABSENT when only
    # the other has the key (so missing and unexpected keys come out in document order too).
    stack: list[tuple[str, Any, Any]] = [("$", expected, actual)]
    while stack and len(out) < limit:
        path, exp, act = stack.pop()
        if act is _ABSENT:
            out.append(DiffEntry(path, "missing", expected=exp))
        elif exp is _ABSENT:
            out.append(DiffEntry(path, "unexpected", actual=act))
        elif isinstance(exp, dict) and isinstance(act, dict):
            pending = [(_key_path(path, key), value, act.get(key, _ABSENT)) for key, value in exp.items()]
            if not subset:
                pending.extend(
                    (_key_path(path, key), _ABSENT, value) for key, value in act.items() if key not in exp
                )
            stack.extend(reversed(pending))
        elif isinstance(exp, list) and isinstance(act, list):
            if len(exp) != len(act):
                out.append(DiffEntry(path, "changed", expected=exp, actual=act))
            else:
                stack.extend(
                    (f"{path}[{i}]", x, y)
                    for i, (x, y) in reversed(list(enumerate(zip(exp, act, strict=True))))
                )
        elif not json_equal(exp, act):
            out.append(DiffEntry(path, "changed", expected=exp, actual=act))
    return out[:limit]


def parse_ignore_path(path: str) -> tuple[str, ...]:
    """Split an ignore path into its parts; raises ``ValueError`` for an empty path or part."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in path:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    if any(part == "" for part in parts):
        raise ValueError("an ignore path has no empty parts (write `a.b`, `a.0`, `a.#.b`, `a.*`)")
    return tuple(parts)


def drop_paths(value: Any, paths: tuple[tuple[str, ...], ...]) -> Any:
    """A copy of ``value`` without the fields the (parsed) ignore ``paths`` select; ``value`` is
    not changed. A path that selects nothing is fine (the field may be absent in this run)."""
    if not paths:
        return value
    copied = json.loads(json.dumps(value))
    for parts in paths:
        _drop(copied, parts)
    return copied


def _drop(value: Any, parts: tuple[str, ...]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head] if head in value else []
        for key in keys:
            if rest:
                _drop(value[key], rest)
            else:
                del value[key]
    elif isinstance(value, list):
        if head in ("#", "*"):
            if rest:
                for item in value:
                    _drop(item, rest)
            else:
                value.clear()
        elif head.isdigit() and int(head) < len(value):
            if rest:
                _drop(value[int(head)], rest)
            else:
                # The element is replaced, not removed: removing it would shift its followers.
                value[int(head)] = None
