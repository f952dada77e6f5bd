"""The graph-test cost bounds (``execution.casecore.Limits``) as the settings set them."""

from __future__ import annotations

from django.conf import settings

from execution.casecore import Limits


def judge_limits() -> Limits:
    """The bounds on ``matches`` regexes and on judging time, from config/settings.py."""
    return Limits(
        regex_program=settings.GRAPH_TEST_REGEX_MAX_PROGRAM,
        regex_input=settings.GRAPH_TEST_REGEX_MAX_INPUT,
        case_seconds=settings.GRAPH_TEST_CASE_JUDGE_SECONDS,
        suite_seconds=settings.GRAPH_TEST_SUITE_JUDGE_SECONDS,
    )
