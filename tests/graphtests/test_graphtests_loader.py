"""Reading ``kind: InferenceGraphTest`` documents: the typed result, every problem at once with its
case, expectation, field and line, and bounded work on hostile input."""

from __future__ import annotations

import json

import pytest

from execution.casecore import (
    MAX_BYTES,
    MAX_CASES,
    BodyExpectation,
    CaseDocumentError,
    CaseIssue,
    CaseRequest,
    LatencyExpectation,
    ParsedCase,
    PathExpectation,
    RouteExpectation,
    StatusExpectation,
    StepExpectation,
    load_suite,
    parse_case,
    suite_from_document,
)

FULL = """\
apiVersion: tests.inferencegraph.studio/v1alpha1
kind: InferenceGraphTest
graph: pets
cases:
- name: cat
  description: a cat photo goes to the cat model
  request:
    payload: {animal: cat, taken: 2024-01-01}
    headers: {X-Request-Id: abc, X-Retries: 3}
  seed: 42
  environment: local
  expectations:
  - status: 200
  - {body: {says: meow}, match: subset, ignore: [id, "a\\\\.b"]}
  - {path: score, step: pets/cat, approx: 0.9, tolerance: 0.05}
  - {route: pets, took: cat}
  - {route: pets, took: null}
  - {step: pets/dog, status: not-reached}
  - {latency: 250}
- name: not json
  request: {raw: "not {json", content_type: text/plain}
"""


def test_a_full_document_becomes_frozen_typed_cases() -> None:
    suite = load_suite(FULL)
    assert suite.graph == "pets"
    cat, raw = suite.cases
    assert cat == ParsedCase(
        name="cat",
        description="a cat photo goes to the cat model",
        request=CaseRequest(
            body=b'{"animal":"cat","taken":"2024-01-01"}',
            content_type="application/json",
            headers=(("Content-Type", "application/json"), ("X-Request-Id", "abc"), ("X-Retries", "3")),
        ),
        seed=42,
        environment="local",
        expectations=(
            StatusExpectation(200),
            BodyExpectation(value={"says": "meow"}, match="subset", ignore=("id", "a\\.b")),
            PathExpectation(path="score", operator="approx", expected=0.9, step="pets/cat", tolerance=0.05),
            RouteExpectation(node="pets", took="cat"),
            RouteExpectation(node="pets", took=None),
            StepExpectation(step="pets/dog", status="not-reached"),
            LatencyExpectation(within_ms=250.0),
        ),
    )
    assert raw.request.body == b"not {json"
    assert raw.request.headers == (("Content-Type", "text/plain"),)
    assert raw.expectations == ()
    with pytest.raises(AttributeError):
        cat.name = "dog"  # type: ignore[misc]
    assert load_suite(FULL).cases[0].document["request"]["payload"]["taken"] == "2024-01-01"


def test_json_text_reads_like_yaml() -> None:
    document = {
        "kind": "InferenceGraphTest",
        "graph": "g",
        "cases": [{"name": "a", "expectations": [{"status": 404}]}],
    }
    suite = load_suite(json.dumps(document).encode())
    assert suite.cases[0].expectations == (StatusExpectation(404),)
    assert suite.cases[0].request.body == b""


BROKEN = """\
kind: InferenceGraphTest
graph: pets
cases:
- name: one
  request: {payload: {}}
  expectations:
  - status: 700
  - {path: x, equal: 1}
  - {path: x, matches: "(unclosed"}
  - {step: cat, status: 200}
- name: one
  expectations:
  - {route: pets}
  - {latency: -5}
  - {body: {a: 1}, match: fuzzy, ignore: ["a..b"]}
  - {path: x, gt: "1", tolerance: 2}
  - {colour: blue}
  - {path: x, exists: true, missing: true}
"""


def test_every_problem_is_reported_at_once_pinned_to_case_expectation_field_and_line() -> None:
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(BROKEN)
    found = [(i.code, i.case, i.expectation, i.field, i.line, i.column) for i in caught.value.issues]
    assert found == [
        ("expectation.status", 0, 0, "status", 7, 5),
        ("field.unknown", 0, 1, "equal", 8, 15),
        ("expectation.operator", 0, 1, "path", 8, 6),
        ("expectation.regex", 0, 2, "matches", 9, 15),
        ("expectation.step", 0, 3, "step", 10, 6),
        ("expectation.took", 1, 0, "took", 13, 5),
        ("expectation.latency", 1, 1, "latency", 14, 6),
        ("expectation.match", 1, 2, "match", 15, 20),
        ("expectation.ignore", 1, 2, "ignore", 15, 43),
        ("expectation.tolerance", 1, 3, "tolerance", 16, 24),
        ("expectation.operand", 1, 3, "gt", 16, 15),
        ("expectation.kind", 1, 4, None, 17, 5),
        ("expectation.operator", 1, 5, "path", 18, 6),
        ("case.duplicate-name", 1, None, "name", 11, 3),
    ]
    regex = caught.value.issues[3]
    assert regex.message.startswith("not a valid regex: missing )")
    assert regex.path == "cases[0].expectations[2].matches"
    assert caught.value.issues[-1].case_name == "one"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("kind: InferenceGraph\ngraph: g\ncases: []\n", "suite.kind"),
        ("kind: InferenceGraphTest\ncases: []\n", "suite.graph"),
        ("kind: InferenceGraphTest\ngraph: g\ncases: {}\n", "suite.cases"),
        ("kind: InferenceGraphTest\ngraph: g\ncases: []\nextra: 1\n", "field.unknown"),
        ("kind: InferenceGraphTest\napiVersion: v9\ngraph: g\ncases: []\n", "suite.api-version"),
        ("- just a list\n", "suite.not-mapping"),
        ("kind: [unclosed\n", "load.syntax"),
        ("kind: InferenceGraphTest\nkind: InferenceGraphTest\n", "load.duplicate-key"),
        ("kind: InferenceGraphTest\ngraph: g\ncases: [{name: a, seed: .nan}]\n", "load.not-json"),
        ("kind: InferenceGraphTest\ngraph: g\ncases: [{name: a, seed: !!binary aGk=}]\n", "load.not-json"),
        ("kind: InferenceGraphTest\ngraph: g\ncases: [{name: a, seed: '1'}]\n", "case.seed"),
        (
            "kind: InferenceGraphTest\ngraph: g\ncases: [{name: a, request: {payload: 1, raw: x}}]\n",
            "request.body",
        ),
        (
            "kind: InferenceGraphTest\ngraph: g\ncases: [{name: a, request: {headers: {'Bad Name': x}}}]\n",
            "request.header",
        ),
        ("kind: InferenceGraphTest\ngraph: g\ncases: [{name: ''}]\n", "case.name"),
        (b"kind: \xff\n", "load.encoding"),
    ],
)
def test_malformed_documents_are_refused_with_a_stable_code(text: str | bytes, code: str) -> None:
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(text)
    assert code in [issue.code for issue in caught.value.issues]


def test_a_billion_laughs_document_is_refused_before_it_is_expanded() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 10) + "]")
    text = "kind: InferenceGraphTest\ngraph: g\n" + "\n".join(lines) + "\ncases: []\n"
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(text)
    assert [issue.code for issue in caught.value.issues] == ["load.too-many-values"]


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(
            "kind: InferenceGraphTest\ngraph: g\ncases: &loop [{name: a, request: {payload: *loop}}]\n"
        )
    assert [issue.code for issue in caught.value.issues] == ["load.too-many-values"]


def test_too_many_cases_a_huge_expectation_and_a_huge_file_are_refused() -> None:
    many = {
        "kind": "InferenceGraphTest",
        "graph": "g",
        "cases": [{"name": str(i)} for i in range(MAX_CASES + 1)],
    }
    with pytest.raises(CaseDocumentError) as caught:
        suite_from_document(many)
    assert [i.code for i in caught.value.issues] == ["suite.too-many-cases"]

    ten_mb = "x" * (10 * 1024 * 1024)
    with pytest.raises(CaseDocumentError) as caught:
        parse_case({"name": "big", "expectations": [{"path": "a", "equals": ten_mb}, {"body": [ten_mb]}]})
    assert [(i.code, i.expectation, i.field) for i in caught.value.issues] == [
        ("expectation.too-large", 0, "equals"),
        ("expectation.too-large", 1, "body"),
    ]

    with pytest.raises(CaseDocumentError) as caught:
        load_suite(b" " * (MAX_BYTES + 1))
    assert [i.code for i in caught.value.issues] == ["load.too-large"]


@pytest.mark.parametrize(("depth", "code"), [(500, "load.too-deep"), (50_000, "load.syntax")])
def test_deep_nesting_is_refused_not_a_crash(depth: int, code: str) -> None:
    """Past 100 levels we refuse; far past it the YAML parser's own depth limit trips first."""
    text = "kind: InferenceGraphTest\ngraph: g\ncases: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(CaseDocumentError) as caught:
        load_suite(text)
    assert [i.code for i in caught.value.issues] == [code]


def test_parse_case_pins_issues_relative_to_the_case() -> None:
    with pytest.raises(CaseDocumentError) as caught:
        parse_case({"name": "a", "expectations": [{"status": 200}, {"path": "", "lt": 3}]})
    (issue,) = caught.value.issues
    assert issue == CaseIssue(
        code="expectation.path",
        message="path is a non-empty GJSON path",
        expectation=1,
        case_name="a",
        field="path",
        path="expectations[1].path",
    )
    assert issue.to_dict() == {
        "code": "expectation.path",
        "message": "path is a non-empty GJSON path",
        "case_name": "a",
        "expectation": 1,
        "field": "path",
        "path": "expectations[1].path",
    }
