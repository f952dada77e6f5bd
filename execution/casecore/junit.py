"""JUnit XML for CI servers (GitLab, GitHub Actions reporters, Jenkins), built with the stdlib.

The shape is the common subset those readers share (the Ant JUnit schema): ``<testsuites>`` holding
one ``<testsuite name tests failures errors skipped time timestamp>``, one ``<testcase name
classname time>`` per case, with a ``<failure message type>`` or ``<error message type>`` child
whose text lists every failed expectation. With a latency budget verdict (``graphs.language.budgets``:
``{passed, checks}``) each budget is one more ``<testcase>``: a ``<failure>`` when exceeded,
``<skipped>`` when the step was never called.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from .evaluate import CaseResult

__all__ = ["junit_xml"]

# XML 1.0 cannot hold these characters at all, not even escaped; a model's answer may contain them.
_NOT_XML: Final = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _seconds(ms: float | None) -> str:
    return f"{(ms or 0.0) / 1000:.3f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def budget_label(check: Mapping[str, Any]) -> str:
    """A budget's test case name: ``latency budget: p95 of root/detect within 120.00 ms``."""
    return f"latency budget: p95 of {check['target']} within {_ms(check['budget_ms'])} ms"


def junit_xml(
    suite_name: str,
    results: Sequence[CaseResult],
    *,
    duration_ms: float,
    timestamp: datetime | None = None,
    budgets: Mapping[str, Any] | None = None,
) -> bytes:
    """The report as UTF-8 XML bytes (with declaration). Pure apart from the default timestamp."""
    when = (timestamp or datetime.now(UTC)).replace(microsecond=0, tzinfo=None).isoformat()
    checks = list((budgets or {}).get("checks") or [])
    failures = sum(1 for r in results if r.outcome == "failed") + sum(
        1 for c in checks if c["passed"] is False
    )
    errors = sum(1 for r in results if r.outcome == "error")
    skipped = sum(1 for c in checks if c["passed"] is None)
    counts = {"tests": str(len(results) + len(checks)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": _text(suite_name), **counts, "time": _seconds(duration_ms)})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _text(suite_name),
            **counts,
            "skipped": str(skipped),
            "time": _seconds(duration_ms),
            "timestamp": when,
            "hostname": "localhost",
        },
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "name": _text(result.name),
                "classname": _text(suite_name),
                "time": _seconds(result.duration_ms),
            },
        )
        if result.outcome == "failed":
            failed = result.failures
            first = failed[0].message if failed else "failed"
            if result.cause:
                first = f"{first} ({result.cause})"
            element = ET.SubElement(case, "failure", {"message": _text(first), "type": "ExpectationFailed"})
            lines = [f"failing step: {result.cause}"] if result.cause else []
            for item in failed:
                lines.append(f"expectations[{item.index}] ({item.kind}): {item.message}")
                if item.diff:
                    lines.extend(f"    {json.dumps(d.as_dict(), ensure_ascii=False)}" for d in item.diff)
            element.text = _text("\n".join(lines))
        elif result.outcome == "error":
            element = ET.SubElement(
                case, "error", {"message": _text(result.error or "error"), "type": "CaseError"}
            )
            element.text = _text(
                "\n".join(filter(None, [result.error, result.cause and f"failing step: {result.cause}"]))
            )
    for check in checks:
        case = ET.SubElement(
            suite,
            "testcase",
            {"name": _text(budget_label(check)), "classname": _text(suite_name), "time": "0.000"},
        )
        if check["passed"] is None:
            ET.SubElement(
                case,
                "skipped",
                {"message": "not measured (the step was never called)", "type": "NotMeasured"},
            )
        elif not check["passed"]:
            message = f"p95 measured {_ms(check['measured_ms'])} ms, over the budget of {_ms(check['budget_ms'])} ms"
            ET.SubElement(
                case, "failure", {"message": message, "type": "LatencyBudgetExceeded"}
            ).text = message
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml
