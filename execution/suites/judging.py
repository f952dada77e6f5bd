"""Judging a case from its ended run: the run's stored answer and trace read as the graph-test
core's :class:`~execution.casecore.Observed`, then the case's expectations evaluated on it."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder

from execution.casecore import (
    BodyExpectation,
    CaseDocumentError,
    Observed,
    ParsedCase,
    PathExpectation,
    case_budget,
    evaluate_case,
    parse_case,
)
from execution.cases.limits import judge_limits
from execution.models import Run, RunEvent
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs import language

Outcome = SuiteCaseResult.Outcome
# The trace events a case's expectations and the step comparison read.
TRACE_TYPES = ("step.started", "step.finished", "step.skipped", "route.decided")


def observed_from_run(run: Run, stored: Iterable[RunEvent] | None = None) -> Observed:
    """What a stored run produced, as the expectations and the comparison read it: its final
    status and body, its duration and the trace events of its last attempt.

    ``stored``: the run's events as the worker that ran it just wrote them (in ``seq`` order),
    instead of reading them back; their data is taken through JSON as the database returns it, so
    both give the same :class:`Observed`."""
    body = run.response_body or ""
    raw = base64.b64decode(body) if run.response_encoding == "base64" else body.encode("utf-8")
    if stored is None:
        rows: Iterable[RunEvent] = RunEvent.objects.filter(run=run, type__in=TRACE_TYPES).order_by("seq")
    else:
        rows = [
            RunEvent(seq=e.seq, type=e.type, data=json.loads(_dumps(e.data)))
            for e in stored
            if e.type in TRACE_TYPES
        ]
    trace = []
    for row in rows:
        data = row.data or {}
        if data.get("attempt") != run.attempt:
            continue
        trace.append(
            {
                "type": row.type,
                "seq": row.seq,
                "call_id": data.get("call_id"),
                "parent_call_id": data.get("parent_call_id"),
                "node": data.get("node"),
                "step_index": data.get("step_index"),
                "step_name": data.get("step_name"),
                "target": data.get("target"),
                "timestamp": data.get("at"),
                "data": data,
            }
        )
    return Observed(
        status=run.response_status or 0, body=raw, duration_ms=run.duration_ms, events=tuple(trace)
    )


def _dumps(value: Any) -> str:
    """JSON as the database's JSON field stores it (Django's encoder)."""
    return json.dumps(value, cls=DjangoJSONEncoder)


def _reads_final_body(case: ParsedCase) -> bool:
    return any(
        isinstance(e, BodyExpectation) or (isinstance(e, PathExpectation) and e.step is None)
        for e in case.expectations
    )


def judge(
    result: SuiteCaseResult,
    run: Run | None,
    manifests: dict[int, language.Manifest],
    stored: Iterable[RunEvent] | None = None,
) -> dict[str, Any]:
    """The verdict of a case whose run has ended (fields of its row). Pure but for reading the
    run's events (unless given, ``stored``: see :func:`observed_from_run`) and what judging has
    cost the suite run so far; never raises for a bad run or a stale case."""
    return judge_timed(result, run, manifests, stored)[0]


def judge_timed(
    result: SuiteCaseResult,
    run: Run | None,
    manifests: dict[int, language.Manifest],
    stored: Iterable[RunEvent] | None = None,
) -> tuple[dict[str, Any], float]:
    """:func:`judge`, and the CPU seconds its expectations took (for the suite run's budget,
    ``GRAPH_TEST_SUITE_JUDGE_SECONDS``: a case judged once it is spent is an error saying so)."""
    verdict = _verdict(result, run, manifests, stored)
    return verdict, float(verdict.pop("judge_seconds", 0.0))


def _verdict(
    result: SuiteCaseResult,
    run: Run | None,
    manifests: dict[int, language.Manifest],
    stored: Iterable[RunEvent] | None,
) -> dict[str, Any]:
    if run is None:
        return {"outcome": Outcome.ERROR, "error": "its run was deleted before it was judged"}
    common: dict[str, Any] = {"status_code": run.response_status, "duration_ms": run.duration_ms}
    if run.status == Run.Status.CANCELLED:
        return {**common, "outcome": Outcome.CANCELLED, "error": run.error or "cancelled"}
    if run.response_status is None:
        return {**common, "outcome": Outcome.ERROR, "error": run.error or "the run ended without an answer"}
    limits = judge_limits()
    try:
        case = parse_case(result.document, limits=limits)
    except CaseDocumentError as exc:
        return {**common, "outcome": Outcome.ERROR, "error": f"the stored case no longer reads: {exc}"}
    if run.response_truncated and _reads_final_body(case):
        return {
            **common,
            "outcome": Outcome.ERROR,
            "error": f"the graph answered {run.response_size} bytes, more than the {settings.RUN_BODY_CAP} "
            "a run keeps (RUN_BODY_CAP), so its body expectations cannot be judged",
        }
    if run.version_id not in manifests:
        manifests[run.version_id] = language.manifest_from_document(run.version.manifest)
    spent = SuiteRun.objects.filter(pk=result.suite_id).values_list("judge_seconds", flat=True).first()
    budget = case_budget(limits, spent or 0.0)
    if isinstance(budget, str):
        return {**common, "outcome": Outcome.ERROR, "error": budget}
    verdict = evaluate_case(
        case, observed_from_run(run, stored), manifests[run.version_id], limits=limits, budget=budget
    )
    outcomes = {"passed": Outcome.PASSED, "failed": Outcome.FAILED, "error": Outcome.ERROR}
    return {
        **common,
        "outcome": outcomes[verdict.outcome],
        "failures": [failure.as_dict() for failure in verdict.failures],
        "error": verdict.error,
        "judge_seconds": budget.used,
    }
