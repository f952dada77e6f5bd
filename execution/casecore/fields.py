"""What the readers of test documents share: paths into the document, the issue collector, and
:class:`At`, the place being read, which files each issue with its case, expectation and field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .limits import DEFAULT_LIMITS, Limits
from .model import CaseIssue

Path = tuple[str | int, ...]
Position = tuple[int, int]


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").replace("-", "").isalnum():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


class Issues:
    """Collects issues, filling in the position of each path from the source; ``limits`` are the
    bounds the readers check (a ``matches`` regex's program size)."""

    def __init__(self, positions: Mapping[Path, Position], limits: Limits = DEFAULT_LIMITS) -> None:
        self.positions = positions
        self.limits = limits
        self.items: list[CaseIssue] = []

    def add(
        self,
        code: str,
        message: str,
        path: Path,
        *,
        case: int | None = None,
        case_name: str | None = None,
        expectation: int | None = None,
    ) -> None:
        pos: Position | None = None
        for cut in range(len(path), -1, -1):
            pos = self.positions.get(path[:cut])
            if pos is not None:
                break
        names = [part for part in path if isinstance(part, str) and part not in ("cases", "expectations")]
        last = names[-1] if names and path[-1] not in ("cases", "expectations") else None
        self.items.append(
            CaseIssue(
                code=code,
                message=message,
                case=case,
                case_name=case_name,
                expectation=expectation,
                field=last,
                path=format_path(path) or None,
                line=pos[0] if pos else None,
                column=pos[1] if pos else None,
            )
        )


@dataclass(frozen=True)
class At:
    """A place in the document: its path, and the case (and expectation) it belongs to."""

    issues: Issues
    path: Path
    where: Mapping[str, Any]

    def add(self, code: str, message: str, *below: str | int) -> None:
        """File an issue at this place, or at ``below`` it (a field name, an index…)."""
        self.issues.add(code, message, (*self.path, *below), **self.where)

    def count(self) -> int:
        """How many issues the whole document has so far (compare before and after a check)."""
        return len(self.issues.items)

    def unknown(self, raw: Mapping[str, Any], allowed: set[str]) -> None:
        """An issue for each key of ``raw`` that is not ``allowed``."""
        for key in raw:
            if key not in allowed:
                self.add(
                    "field.unknown", f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})", key
                )


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def is_step_ref(value: Any) -> bool:
    """``node/step``: a node name, a slash, a step name or index."""
    if not isinstance(value, str):
        return False
    node, sep, step = value.rpartition("/")
    return bool(sep and node and step)
