"""What ``loadgraph`` prints and writes: a load summary as text lines, and its budget verdict as
JUnit XML (one ``<testcase>`` per budget; a budget exceeded is a ``<failure>``). Pure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from execution.engine.load import GRAPH


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_lines(summary: Mapping[str, Any], verdict: Mapping[str, Any]) -> list[str]:
    """A few lines a person reads in a CI log: throughput, errors, the graph's and each step's
    percentiles, then each budget and whether it held."""
    lines = [
        f"{summary.get('completed', 0)} requests in {summary.get('elapsed_s', 0):.2f} s: "
        f"{summary.get('throughput_rps') or 0:.1f} req/s, error rate {summary.get('error_rate', 0):.2%}",
        f"{'':<32} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'errors':>7}",
    ]
    rows = [(GRAPH, summary.get(GRAPH) or {}), *((summary.get("steps") or {}).items())]
    for name, series in rows:
        lines.append(
            f"{name[:32]:<32} {_ms(series.get('p50_ms')):>9} {_ms(series.get('p95_ms')):>9} "
            f"{_ms(series.get('p99_ms')):>9} {series.get('errors', 0):>7}"
        )
    for check in verdict.get("checks") or []:
        state = {True: "ok", False: "EXCEEDED", None: "not measured"}[check["passed"]]
        lines.append(
            f"budget {check['target']}: p95 {_ms(check['measured_ms'])} ms of {_ms(check['budget_ms'])} ms: {state}"
        )
    return lines


def junit_xml(name: str, summary: Mapping[str, Any], verdict: Mapping[str, Any]) -> bytes:
    """The budget verdict as JUnit XML: a test case per budget (skipped when not measured), or one
    ``load`` case when the graph states none (failed when no request was answered)."""
    checks = list(verdict.get("checks") or [])
    elapsed = f"{float(summary.get('elapsed_s') or 0):.3f}"
    cases: list[tuple[str, str | None, bool]] = []  # (name, failure message, skipped)
    for check in checks:
        label = f"p95 of {check['target']} within {_ms(check['budget_ms'])} ms"
        if check["passed"] is None:
            cases.append((label, None, True))
        elif check["passed"]:
            cases.append((label, None, False))
        else:
            cases.append((label, f"p95 measured {_ms(check['measured_ms'])} ms", False))
    if not checks:
        failure = None if summary.get("completed") else "no request was answered"
        cases.append(("load", failure, False))
    failures = sum(1 for _, failure, _ in cases if failure)
    skipped = sum(1 for *_, skip in cases if skip)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}
    root = ET.Element("testsuites", {"name": name, **counts, "time": elapsed})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": name,
            **counts,
            "skipped": str(skipped),
            "time": elapsed,
            "timestamp": datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat(),
            "hostname": "localhost",
        },
    )
    for label, failure, skip in cases:
        case = ET.SubElement(suite, "testcase", {"name": label, "classname": name, "time": elapsed})
        if skip:
            message = "not measured (the step was never called)"
            ET.SubElement(case, "skipped", {"message": message, "type": "NotMeasured"})
        elif failure:
            kind = "LatencyBudgetExceeded" if checks else "NoAnswer"
            ET.SubElement(case, "failure", {"message": failure, "type": kind}).text = failure
    out = ET.SubElement(suite, "system-out")
    out.text = "\n".join(summary_lines(summary, verdict))
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))
