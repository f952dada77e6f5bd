"""What judging a case may cost: a ``matches`` regex whose RE2 program is too large is refused
when the case is read, a value too long is not searched, and a case's (and a suite's) judging
stops when its CPU budget is spent, each saying which bound (setting) refused what."""

from __future__ import annotations

import time
from typing import Any

import pytest
from casekit import answer, run_cases
from test_graphtests_evaluate import PETS, routes

from execution.casecore import (
    Budget,
    CaseDocumentError,
    Limits,
    Observed,
    case_budget,
    evaluate_case,
    load_suite,
    parse_case,
)
from graphs import language

# Hundreds of counted classes: valid RE2, 3.5 KB, ~54,000 instructions; against 16 KiB of a's
# and b's RE2's DFA gives up and its NFA takes seconds per search.
PATHOLOGICAL = "([ab]{1,100})" * 269 + "!"
HOSTILE_TEXT = "ab" * 8192


def case_with(expectations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "c", "request": {"payload": {"animal": "cat"}}, "expectations": expectations}


def test_the_pathological_pattern_is_refused_when_the_case_is_read_and_quickly() -> None:
    assert len(PATHOLOGICAL) < 4096  # under the length limit: only the program size refuses it
    started = time.monotonic()
    with pytest.raises(CaseDocumentError) as caught:
        parse_case(case_with([{"path": "says", "matches": PATHOLOGICAL}]))
    assert time.monotonic() - started < 2
    (issue,) = caught.value.issues
    assert issue.code == "expectation.regex-cost"
    assert issue.expectation == 0
    assert issue.field == "matches"
    assert "GRAPH_TEST_REGEX_MAX_PROGRAM" in issue.message
    assert "RE2 instructions" in issue.message


def test_the_program_bound_is_the_limits_one() -> None:
    pattern = "([ab]{1,100})" * 3  # ~600 instructions
    parse_case(case_with([{"path": "says", "matches": pattern}]))
    with pytest.raises(CaseDocumentError) as caught:
        parse_case(case_with([{"path": "says", "matches": pattern}]), limits=Limits(regex_program=100))
    assert caught.value.issues[0].code == "expectation.regex-cost"


def test_a_test_file_with_the_pathological_pattern_is_refused_with_its_position() -> None:
    text = (
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  expectations:\n"
        f"  - {{path: says, matches: '{PATHOLOGICAL}'}}\n"
    )
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(text)
    (issue,) = caught.value.issues
    assert (issue.code, issue.case, issue.expectation, issue.line) == ("expectation.regex-cost", 0, 0, 6)


@pytest.mark.parametrize(
    "pattern",
    [
        "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
        "(?i)^(cat|dog|bird|fish|horse|rabbit|hamster|snake|lizard|turtle)s?$",
        "^m",
    ],
)
def test_normal_patterns_are_accepted_and_judged(pattern: str) -> None:
    case = parse_case(case_with([{"path": "says", "matches": pattern}]))
    assert len(case.expectations) == 1


def test_normal_pattern_passes_in_a_run() -> None:
    tests = (
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  request: {payload: {animal: cat}}\n"
        "  expectations:\n  - {path: says, matches: '^m[aeiou]+w$'}\n  - {path: id, matches: '^r-[0-9]{1,9}$'}\n"
    )
    (result,) = run_cases(PETS, tests, routes())
    assert result.outcome == "passed"


def test_a_value_longer_than_the_input_bound_is_not_searched() -> None:
    long_value = "a" * (64 * 1024 + 1)
    tests = (
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  request: {payload: {animal: cat}}\n"
        "  expectations:\n  - {path: says, matches: 'a'}\n"
    )
    started = time.monotonic()
    (result,) = run_cases(PETS, tests, routes(**{"http://cat.test/": answer({"says": long_value})}))
    assert time.monotonic() - started < 5
    (failure,) = result.failures
    assert "GRAPH_TEST_REGEX_MAX_INPUT" in failure.message
    assert f"{64 * 1024 + 1} bytes" in failure.message


def manifest() -> language.Manifest:
    return language.parse(PETS)


def observed(says: str) -> Observed:
    return Observed(status=200, body=('{"says":"' + says + '"}').encode(), duration_ms=1.0)


def test_a_case_stops_being_judged_when_its_budget_is_spent() -> None:
    """Under loose program bounds (as a case saved before them would be), the pathological
    pattern costs ~0.3 s per search of 2 KiB: a 0.1 s budget stops the case after the first."""
    loose = Limits(regex_program=100_000, case_seconds=0.1)
    case = parse_case(case_with([{"path": "says", "matches": PATHOLOGICAL}] * 200), limits=loose)
    started = time.monotonic()
    verdict = evaluate_case(case, observed(HOSTILE_TEXT[:2048]), manifest(), limits=loose)
    assert time.monotonic() - started < 10  # 200 searches would take about a minute
    assert verdict.outcome == "error"
    assert verdict.error is not None and "GRAPH_TEST_CASE_JUDGE_SECONDS" in verdict.error
    assert 1 <= len(verdict.expectations) < 200


def test_the_default_bounds_refuse_the_pattern_at_evaluation_too() -> None:
    """A case stored under looser bounds is judged under today's: the regex is refused, fast."""
    loose = Limits(regex_program=100_000)
    case = parse_case(case_with([{"path": "says", "matches": PATHOLOGICAL}]), limits=loose)
    started = time.monotonic()
    verdict = evaluate_case(case, observed(HOSTILE_TEXT), manifest())
    assert time.monotonic() - started < 2
    (failure,) = verdict.failures
    assert "GRAPH_TEST_REGEX_MAX_PROGRAM" in failure.message


def test_a_suite_budget_spent_leaves_the_next_cases_unjudged() -> None:
    limits = Limits(case_seconds=5, suite_seconds=10)
    budget = case_budget(limits, 0)
    assert isinstance(budget, Budget) and budget.setting == "GRAPH_TEST_CASE_JUDGE_SECONDS"
    budget = case_budget(limits, 8)
    assert isinstance(budget, Budget) and budget.seconds == 2
    assert budget.setting == "GRAPH_TEST_SUITE_JUDGE_SECONDS"
    spent = case_budget(limits, 10)
    assert isinstance(spent, str) and "GRAPH_TEST_SUITE_JUDGE_SECONDS" in spent


def test_an_in_process_suite_stops_judging_when_its_budget_is_spent() -> None:
    import asyncio

    import httpx

    from execution.casecore import run_suite
    from execution.engine import EngineConfig

    cases = [
        parse_case({**case_with([{"path": "says", "exists": True}] * 200), "name": f"c{i}"}) for i in range(3)
    ]

    async def main() -> list[Any]:
        handler = routes()
        transport = httpx.MockTransport(lambda r: handler[str(r.url)](r))
        async with httpx.AsyncClient(transport=transport) as client:
            return await run_suite(
                manifest(), cases, config=EngineConfig(), client=client, limits=Limits(suite_seconds=1e-6)
            )

    results = asyncio.run(main())
    assert [r.outcome for r in results] == ["error", "error", "error"]
    assert all("GRAPH_TEST_SUITE_JUDGE_SECONDS" in (r.error or "") for r in results)
    assert any("was not judged" in (r.error or "") for r in results)


def test_testgraph_file_mode_refuses_the_pathological_pattern(tmp_path: Any) -> None:
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    graph = tmp_path / "pets.yaml"
    graph.write_text(PETS)
    cases = tmp_path / "pets.tests.yaml"
    cases.write_text(
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  expectations:\n"
        f"  - {{path: says, matches: '{PATHOLOGICAL}'}}\n"
    )
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("testgraph", str(graph), "--cases", str(cases), stdout=io.StringIO(), stderr=err)
    assert caught.value.returncode == 2
    assert f"{cases}:6:18: error: [expectation.regex-cost]" in err.getvalue()
    assert "GRAPH_TEST_REGEX_MAX_PROGRAM" in err.getvalue()
