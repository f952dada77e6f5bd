"""A suite judged on the engine gives the verdicts it gives on KServe's own router's answers
(recorded from ``../shared/oracle/kserve-router``; re-asked live where the oracle exists)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from oracle_suite import GRAPH, RECORD, SUITE, oracle_answers, oracle_available, serve_steps

from execution.casecore import Observed, evaluate_case, json_equal, load_suite, run_suite_sync
from execution.engine import EngineConfig, UrlGuard
from graphs import language

RECORDED: dict[str, dict[str, Any]] = json.loads(RECORD.read_text())


@pytest.fixture
def steps(server: Any) -> Any:
    serve_steps(server)
    return server


def test_every_expectation_has_the_same_verdict_on_the_engine_and_on_kserves_router(steps: Any) -> None:
    manifest = language.parse(GRAPH.format(url=steps.url("").rstrip("/")))
    suite = load_suite(SUITE)
    config = EngineConfig(guard=UrlGuard(allow_loopback=True))
    engine = run_suite_sync(manifest, suite.cases, config=config)
    compared = 0
    for case, ours in zip(suite.cases, engine, strict=True):
        theirs = RECORDED[case.name]
        assert ours.result is not None
        assert ours.status == theirs["status"], case.name
        assert json_equal(json.loads(ours.result.body), json.loads(theirs["body"])), case.name
        on_router = evaluate_case(case, Observed(theirs["status"], theirs["body"].encode(), None), manifest)
        assert [e.passed for e in ours.expectations] == [e.passed for e in on_router.expectations], case.name
        compared += len(case.expectations)
    assert compared == 23
    # Not vacuous: the suite holds expectations that fail on both.
    assert [r.outcome for r in engine] == ["failed", "failed", "passed", "failed", "passed", "failed"]


def test_the_recorded_answers_are_what_the_router_answers(steps: Any) -> None:
    if not oracle_available():
        pytest.skip(
            "KServe's router oracle is not in ../shared/oracle/ (the recorded answers are used anyway)"
        )
    live = oracle_answers(steps)
    assert live.keys() == RECORDED.keys()
    for name, answer in live.items():
        assert answer["status"] == RECORDED[name]["status"], name
        assert json.loads(answer["body"]) == json.loads(RECORDED[name]["body"]), name
