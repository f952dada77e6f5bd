"""Issues (what is wrong with a manifest, and where) and the exception that carries them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from .model import PathKey, Position

Severity = Literal["error", "warning"]

ERROR: Final = "error"
WARNING: Final = "warning"

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_$][A-Za-z0-9_$-]*$")


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found while reading or validating a manifest.

    ``code`` is stable (tests, the API and the canvas key on it); ``message`` is for people and, for
    KServe's own checks, is KServe's text word for word. ``step`` is the 0-based step index.
    ``line``/``column`` are 1-based positions in the source text when it is known.
    """

    code: str
    severity: Severity
    message: str
    node: str | None = None
    step: int | None = None
    step_name: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Issue:
        """The issue ``to_dict`` gave (as stored with a version or answered by the API)."""
        return cls(**{key: data[key] for key in _FIELDS if data.get(key) is not None})

    def to_dict(self) -> dict[str, Any]:
        """The issue as a JSON-compatible dict, without the fields that are ``None``."""
        out: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        for key in ("node", "step", "step_name", "path", "line", "column"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


_FIELDS: Final = ("code", "severity", "message", "node", "step", "step_name", "path", "line", "column")


def issue_dict(
    code: str,
    message: str,
    *,
    path: str | None = None,
    node: str | None = None,
    step: int | None = None,
    line: int | None = None,
    column: int | None = None,
) -> dict[str, Any]:
    """An error issue as the API answers it (:meth:`Issue.to_dict`): what every refusal outside
    manifest validation puts in its ``issues``, built here so that all of them have one shape."""
    return Issue(code, ERROR, message, node=node, step=step, path=path, line=line, column=column).to_dict()


def describe_issue(issue: Issue, source: str) -> str:
    """One line for a terminal, as compilers write them: ``chain.yaml:12:9: warning: [code] message
    (node=root step=fetch)``; the step is named by its name, else its index."""
    where = f"{source}:{issue.line}:{issue.column or 1}" if issue.line else source
    step = issue.step_name or issue.step
    at = " ".join(
        f"{key}={value}" for key, value in (("node", issue.node), ("step", step)) if value is not None
    )
    return f"{where}: {issue.severity}: [{issue.code}] {issue.message}" + (f" ({at})" if at else "")


def error_issue(
    code: str, message: str, position: Position | None = None, path: PathKey | None = None
) -> Issue:
    """An error found while reading, at ``position`` (line, column) and ``path`` when known."""
    line, column = position if position is not None else (None, None)
    return Issue(
        code=code,
        severity=ERROR,
        message=message,
        path=format_path(path) if path else None,
        line=line,
        column=column,
    )


def has_errors(issues: Iterable[Issue]) -> bool:
    """True when at least one issue is an error (warnings never block anything)."""
    return any(issue.severity == ERROR for issue in issues)


class SpecError(ValueError):
    """The source could not be read as InferenceGraph manifest(s); ``issues`` says why (all errors)."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = list(issues)
        super().__init__("; ".join(issue.message for issue in self.issues) or "invalid manifest")


def format_path(path: PathKey) -> str:
    """Render a path as ``spec.nodes.root.steps[1].weight``.

    Keys that are not plain identifiers (dots, spaces, …) are written ``["a.b"]`` so the path stays
    unambiguous.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def position_of(positions: Mapping[PathKey, Position], path: PathKey) -> Position | None:
    """The position of ``path``, else of its nearest ancestor that has one (a missing field points
    at the object that lacks it)."""
    if not positions:
        return None
    for end in range(len(path), -1, -1):
        found = positions.get(path[:end])
        if found is not None:
            return found
    return None
