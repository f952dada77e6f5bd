"""The console report of a suite: one line per case (plus one per failed expectation) and a summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from .compare import RunComparison
from .evaluate import CaseResult
from .model import CaseIssue

__all__ = ["case_lines", "comparison_lines", "describe_issue", "summary_line"]

_MARK: Final = {"passed": "PASS", "failed": "FAIL", "error": "ERROR"}
# A diff line longer than this is cut: the JUnit file and the API carry the whole of it.
_DIFF_LINE: Final = 200


def case_lines(result: CaseResult) -> list[str]:
    """``PASS  name  (200, 12.3 ms)``, then an indented line per failed expectation and diff entry."""
    timing = f"{result.duration_ms:g} ms" if result.duration_ms is not None else "no timing"
    status = f"{result.status}, " if result.status is not None else ""
    lines = [f"{_MARK.get(result.outcome, result.outcome.upper()):<5} {result.name}  ({status}{timing})"]
    if result.outcome == "error":
        lines.append(f"      {result.error}")
    for failure in result.failures:
        lines.append(f"      expectations[{failure.index}] {failure.kind}: {failure.message}")
        for entry in failure.diff:
            text = json.dumps(entry.as_dict(), ensure_ascii=False)
            lines.append("        " + (text if len(text) <= _DIFF_LINE else text[: _DIFF_LINE - 3] + "..."))
    if result.cause:
        lines.append(f"      failing step: {result.cause}")
    return lines


def summary_line(results: Sequence[CaseResult], seconds: float) -> str:
    """``3 cases: 2 passed, 1 failed, 0 errors in 0.05 s``."""
    counts = {outcome: sum(1 for r in results if r.outcome == outcome) for outcome in _MARK}
    noun = "case" if len(results) == 1 else "cases"
    return (
        f"{len(results)} {noun}: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['error']} errors in {seconds:.2f} s"
    )


def describe_issue(issue: CaseIssue, source: str) -> str:
    """``tests.yaml:12:7: error: [expectation.regex] … (case 2 'cat', expectation 0)``, as
    compilers write it, so editors and CI logs link to the line."""
    where = f"{source}:{issue.line}:{issue.column or 1}" if issue.line else source
    at: list[str] = []
    if issue.case is not None:
        at.append(f"case {issue.case}" + (f" {issue.case_name!r}" if issue.case_name else ""))
    if issue.expectation is not None:
        at.append(f"expectation {issue.expectation}")
    if issue.path and not at:
        at.append(issue.path)
    return f"{where}: error: [{issue.code}] {issue.message}" + (f" ({', '.join(at)})" if at else "")


def _cut(text: str) -> str:
    return text if len(text) <= _DIFF_LINE else text[: _DIFF_LINE - 3] + "..."


def comparison_lines(comparison: RunComparison, against: str) -> list[str]:
    """What changed from the run on ``against`` to this one, indented under the case's line;
    ``same as <against>`` when nothing but latency did."""
    if comparison.same:
        return [f"      same as {against}"]
    lines = [f"      changed since {against}:"]
    old, new = comparison.status
    if old != new:
        lines.append(f"        status {old} -> {new}")
    for route in comparison.routes:
        lines.append(f"        route {route.node}: {list(route.a)} -> {list(route.b)}")
    for step in comparison.steps:
        if not step.changed:
            continue
        if step.changed == ("presence",):
            lines.append(f"        step {step.label}: {'only now' if step.a is None else 'no longer'} called")
            continue
        a, b = step.a or {}, step.b or {}
        said = ", ".join(
            f"{name} {a.get(name)} -> {b.get(name)}" for name in ("status", "outcome") if name in step.changed
        )
        lines.append(_cut(f"        step {step.label}: {said or 'payloads changed'}"))
        for kind, diff in (("request", step.request_diff), ("response", step.response_diff)):
            lines.extend(
                _cut(f"          {kind} {json.dumps(d.as_dict(), ensure_ascii=False)}") for d in diff[:5]
            )
    for entry in comparison.body_diff[:5]:
        lines.append(_cut(f"        body {json.dumps(entry.as_dict(), ensure_ascii=False)}"))
    return lines
