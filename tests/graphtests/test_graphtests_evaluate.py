"""Every expectation kind, passing where it should and failing where it should, against real runs of
the engine (steps answered over ``httpx.MockTransport``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from casekit import answer, echo, run_cases, ticking, verdicts

from execution.casecore import Observed, evaluate_case, parse_case
from graphs import language

PETS = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: pets
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - name: classify
        serviceUrl: http://classify.test/
      - name: route
        nodeName: pets
        data: $response
      - name: audit
        serviceUrl: http://audit.test/
        condition: audit
        data: $response
    pets:
      routerType: Switch
      steps:
      - name: cat
        serviceUrl: http://cat.test/
        condition: '[@this].#(animal=="cat")'
      - name: dog
        serviceUrl: http://dog.test/
        condition: '[@this].#(animal=="dog")'
"""

CAT = {
    "says": "meow",
    "score": 0.93,
    "tags": ["small", "furry"],
    "owner": {"name": "Ann", "id": 7},
    "id": "r-1",
}


def routes(**extra: Any) -> dict[str, Any]:
    table = {
        "http://classify.test/": echo,
        "http://cat.test/": answer(CAT),
        "http://dog.test/": answer({"error": "busy"}, 503),
    }
    table.update(extra)
    return table


def one_case(expectations: str, payload: str = "{animal: cat}", **kwargs: Any) -> list[bool]:
    """Verdicts of each expectation of one case sending ``payload`` through PETS."""
    tests = f"kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  request: {{payload: {payload}}}\n  expectations:\n{expectations}"
    (result,) = run_cases(PETS, tests, routes(**kwargs.pop("extra", {})), **kwargs)
    return verdicts(result)


def test_status_expectation_compares_the_final_status() -> None:
    assert one_case("  - status: 200\n  - status: 201\n") == [True, False]


def test_body_exact_passes_with_volatile_fields_ignored_and_fails_with_a_diff() -> None:
    tests = """\
kind: InferenceGraphTest
graph: pets
cases:
- name: c
  request: {payload: {animal: cat}}
  expectations:
  - body: {says: meow, score: 0.93, tags: [small, furry], owner: {name: Ann, id: 1}, id: other}
    ignore: [id, owner.id]
  - body: {says: purr, score: 0.93, tags: [small, furry], owner: {name: Ann, id: 7}, id: r-1, extra: 1}
"""
    (result,) = run_cases(PETS, tests, routes())
    assert verdicts(result) == [True, False]
    failure = result.expectations[1]
    assert [d.as_dict() for d in failure.diff] == [
        {"path": "$.says", "op": "changed", "expected": "purr", "actual": "meow"},
        {"path": "$.extra", "op": "missing", "expected": 1},
    ]
    assert failure.actual == CAT


def test_body_subset_ignores_extra_keys_but_not_different_values() -> None:
    assert one_case(
        "  - {body: {says: meow, owner: {name: Ann}}, match: subset}\n"
        "  - {body: {owner: {name: Bob}}, match: subset}\n"
        "  - {body: {says: meow}, match: exact}\n"
    ) == [True, False, False]


@pytest.mark.parametrize(
    ("expectation", "passes"),
    [
        ("{path: says, equals: meow}", True),
        ("{path: says, equals: purr}", False),
        ("{path: owner, equals: {id: 7, name: Ann}}", True),
        ("{path: owner.id, equals: 7.0}", True),
        ("{path: owner.id, equals: '7'}", False),
        ("{path: says, not_equals: purr}", True),
        ("{path: says, not_equals: meow}", False),
        ("{path: absent, not_equals: meow}", False),
        ("{path: tags.1, exists: true}", True),
        ("{path: tags.5, exists: true}", False),
        ("{path: tags.5, missing: true}", True),
        ("{path: says, missing: true}", False),
        ("{path: id, matches: '^r-[0-9]+$'}", True),
        ("{path: id, matches: '^x'}", False),
        ('{path: owner, matches: \'"name":"Ann"\'}', True),
        ("{path: score, gt: 0.9}", True),
        ("{path: score, gt: 0.93}", False),
        ("{path: says, gt: 0}", False),
        ("{path: score, lt: 1}", True),
        ("{path: score, lt: 0.5}", False),
        ("{path: score, approx: 0.9, tolerance: 0.05}", True),
        ("{path: score, approx: 0.9, tolerance: 0.01}", False),
        ("{path: score, approx: 0.9300000001}", True),
        ("{path: score, approx: 0.931}", False),
        ("{path: says, contains: eo}", True),
        ("{path: says, contains: dog}", False),
        ("{path: tags, contains: furry}", True),
        ("{path: tags, contains: big}", False),
        ("{path: owner, contains: {name: Ann}}", True),
        ("{path: owner, contains: {name: Bob}}", False),
        ("{path: score, contains: 9}", False),
        ('{path: "tags.#(==\\"small\\")", exists: true}', True),
        ("{path: animal, step: root/classify, equals: cat}", True),
        ("{path: animal, step: root/0, equals: dog}", False),
        ("{path: says, step: pets/cat, equals: meow}", True),
        ("{path: says, step: pets/dog, exists: true}", False),
    ],
)
def test_path_operators(expectation: str, passes: bool) -> None:
    assert one_case(f"  - {expectation}\n") == [passes]


def test_a_catastrophic_regex_is_evaluated_in_linear_time() -> None:
    """``(a+)+$`` against many a's and a final "!" backtracks exponentially in Python's ``re``;
    RE2 answers at once (this test would hit the suite's timeout otherwise)."""
    hostile = "a" * 60_000 + "!"  # under the 64 KiB a regex searches
    verdict = one_case(
        "  - {path: says, matches: '^(a+)+$'}\n", extra={"http://cat.test/": answer({"says": hostile})}
    )
    assert verdict == [False]


def test_route_expectations_on_a_switch() -> None:
    assert one_case(
        "  - {route: pets, took: cat}\n  - {route: pets, took: 0}\n  - {route: pets, took: dog}\n"
        "  - {route: pets, took: null}\n"
    ) == [True, True, False, False]
    assert one_case("  - {route: pets, took: null}\n  - {status: 500}\n", payload="{animal: fish}") == [
        True,
        True,
    ]


def test_route_expectation_on_a_switch_that_was_never_reached_fails() -> None:
    extra = {"http://classify.test/": answer({"x": 1}, 500)}
    tests = "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  expectations:\n  - {route: pets, took: cat}\n"
    manifest = PETS.replace("      - name: classify\n", "      - name: classify\n        dependency: Hard\n")
    (result,) = run_cases(manifest, tests, routes(**extra))
    assert result.expectations[0].passed is False
    assert result.expectations[0].message == "node 'pets' was not reached"


CANARY = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: canary
spec:
  nodes:
    root:
      routerType: Splitter
      steps:
      - {name: stable, serviceUrl: "http://a.test/", weight: 50}
      - {name: canary, serviceUrl: "http://b.test/", weight: 50}
"""


def test_route_expectation_on_a_splitter_with_a_fixed_seed() -> None:
    """random.Random(0).randrange(100) is 49 (stable), random.Random(5)'s is 79 (canary)."""
    tests = """\
kind: InferenceGraphTest
graph: canary
cases:
- {name: stable, seed: 0, expectations: [{route: root, took: stable}, {path: v, equals: a}]}
- {name: canary, seed: 5, expectations: [{route: root, took: canary}, {route: root, took: stable}]}
"""
    results = run_cases(
        CANARY, tests, {"http://a.test/": answer({"v": "a"}), "http://b.test/": answer({"v": "b"})}
    )
    assert [verdicts(r) for r in results] == [[True, True], [True, False]]
    assert results[1].expectations[1].message == "Splitter 'root' took canary, expected step stable"


def test_step_expectations_status_skipped_not_reached_and_error() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    assert one_case(
        "  - {step: root/classify, status: 200}\n"
        "  - {step: pets/cat, status: 200}\n"
        "  - {step: pets/dog, status: not-reached}\n"
        "  - {step: root/audit, status: skipped}\n"
        "  - {step: pets/cat, status: 201}\n"
        "  - {step: root/audit, status: not-reached}\n"
    ) == [True, True, True, True, False, False]
    assert one_case("  - {step: pets/dog, status: 503}\n", payload="{animal: dog}") == [True]
    assert one_case(
        "  - {step: pets/cat, status: error}\n  - {step: pets/cat, status: 200}\n",
        extra={"http://cat.test/": refused},
    ) == [True, False]


def test_latency_expectation_uses_the_runs_duration() -> None:
    assert one_case("  - {latency: 100000}\n  - {latency: 1}\n", clock=ticking(10)) == [True, False]


@pytest.mark.parametrize(
    ("expectation", "message"),
    [
        ("{step: pets/horse, status: 200}", "node 'pets' has no step 'horse' (its steps: cat, dog)"),
        ("{step: pets/7, status: 200}", "node 'pets' has no step '7' (its steps: cat, dog)"),
        ("{step: stable/cat, status: 200}", "this version of the graph has no node 'stable'"),
        (
            "{path: x, step: root/gone, exists: true}",
            "node 'root' has no step 'gone' (its steps: classify, route, audit)",
        ),
        ("{route: gone, took: cat}", "this version of the graph has no node 'gone'"),
        ("{route: pets, took: horse}", "node 'pets' has no step 'horse' (its steps: cat, dog)"),
        (
            "{route: root, took: classify}",
            "node 'root' is a Sequence; route expectations are for Switch and Splitter nodes",
        ),
    ],
)
def test_an_expectation_naming_what_the_version_lacks_fails_with_that_reason(
    expectation: str, message: str
) -> None:
    tests = f"kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  request: {{payload: {{animal: cat}}}}\n  expectations:\n  - {expectation}\n  - status: 200\n"
    (result,) = run_cases(PETS, tests, routes())
    assert result.outcome == "failed"
    assert [e.passed for e in result.expectations] == [False, True]
    assert result.expectations[0].message == message


def test_a_stored_run_is_judged_from_its_events_alone() -> None:
    """Evaluation needs no engine: an Observed built from stored events (as the Celery side keeps
    them) is judged the same way; a truncated step response is a reasoned failure."""
    manifest = language.parse(PETS)
    view = {"body": '{"animal":"c', "encoding": "utf-8", "size": 40, "truncated": True}
    events = (
        {"type": "step.finished", "node": "root", "step_index": 0, "data": {"status": 200, "response": view}},
        {
            "type": "route.decided",
            "node": "pets",
            "step_index": None,
            "data": {"router": "Switch", "chosen": 1},
        },
        {"type": "run.finished", "node": None, "step_index": None, "data": {"duration_ms": 12.5}},
    )
    observed = Observed(status=200, body=json.dumps({"ok": True}).encode(), duration_ms=12.5, events=events)
    case = parse_case(
        {
            "name": "stored",
            "expectations": [
                {"route": "pets", "took": "dog"},
                {"path": "animal", "step": "root/classify", "equals": "cat"},
                {"path": "ok", "equals": True},
                {"latency": 12.5},
            ],
        }
    )
    result = evaluate_case(case, observed, manifest)
    assert [e.passed for e in result.expectations] == [True, False, True, True]
    assert result.expectations[1].message == (
        "cannot read the response of step root/classify: the trace kept 12 of the response's 40 bytes"
    )
