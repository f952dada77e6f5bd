"""A suite run's judging is bounded: a case judged after the suite run has spent its CPU budget
(GRAPH_TEST_SUITE_JUDGE_SECONDS) is an error saying so, and each verdict adds its judging time to
the suite run's tally."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from execution.models import Run
from execution.suites import services as suites
from execution.suites.judging import judge, judge_timed
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs import services as graphs

pytestmark = pytest.mark.django_db

MANIFEST = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "budget"},
    "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceName": "a"}]}}},
}
DOCUMENT: dict[str, Any] = {
    "name": "c",
    "request": {"payload": {}},
    "expectations": [{"status": 200}, {"path": "says", "matches": "^m"}],
}


def ended_case(judge_seconds: float = 0.0) -> tuple[SuiteRun, SuiteCaseResult, Run]:
    user = get_user_model().objects.create_user("budget")
    graph = graphs.graph_create(owner=user, manifest=MANIFEST)
    version = graph.latest_version
    assert version is not None
    suite = SuiteRun.objects.create(
        graph=graph,
        version=version,
        status=SuiteRun.Status.RUNNING,
        concurrency=1,
        seed=1,
        cases_digest="x",
        created_by=user,
        total=1,
        judge_seconds=judge_seconds,
    )
    run = Run.objects.create(
        graph=graph,
        version=version,
        environment_name="local",
        request_body="{}",
        seed=1,
        created_by=user,
        status=Run.Status.SUCCEEDED,
        response_status=200,
        response_body='{"says":"meow"}',
    )
    result = SuiteCaseResult.objects.create(
        suite=suite,
        position=0,
        case_ref=1,
        name="c",
        document=DOCUMENT,
        outcome=SuiteCaseResult.Outcome.RUNNING,
        run=run,
    )
    return suite, result, run


def test_a_case_is_judged_and_its_time_counted() -> None:
    suite, result, run = ended_case()
    verdict, spent = judge_timed(result, run, {})
    assert verdict["outcome"] == SuiteCaseResult.Outcome.PASSED
    assert spent >= 0
    suites.suite_advance(suite.pk)
    result.refresh_from_db()
    suite.refresh_from_db()
    assert result.outcome == SuiteCaseResult.Outcome.PASSED
    assert suite.status == SuiteRun.Status.PASSED
    assert suite.judge_seconds > 0


@override_settings(GRAPH_TEST_SUITE_JUDGE_SECONDS=10.0)
def test_a_case_after_the_suite_budget_is_spent_is_an_error_naming_the_setting() -> None:
    suite, result, _run = ended_case(judge_seconds=10.0)
    suites.suite_advance(suite.pk)
    result.refresh_from_db()
    suite.refresh_from_db()
    assert result.outcome == SuiteCaseResult.Outcome.ERROR
    assert result.error is not None and "GRAPH_TEST_SUITE_JUDGE_SECONDS" in result.error
    assert suite.status == SuiteRun.Status.ERROR


@override_settings(GRAPH_TEST_CASE_JUDGE_SECONDS=0.0)
def test_a_case_over_its_own_budget_is_an_error_naming_the_setting() -> None:
    _suite, result, run = ended_case()
    verdict = judge(result, run, {})
    assert verdict["outcome"] == SuiteCaseResult.Outcome.ERROR
    assert "GRAPH_TEST_CASE_JUDGE_SECONDS" in verdict["error"]
