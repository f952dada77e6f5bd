"""GJSON conditions: the rules of docs/router-semantics.md ("GJSON"), as Go gjson v1.18.0."""

from __future__ import annotations

import pytest

from execution.engine.conditions import evaluate_condition
from execution.engine.goports.gojson import is_valid_json

PICKER_ERROR = '{"decision_picker":"ERROR","key1":{"name":"abc"}}'
PICKER_SUCCESS = '{"decision_picker":"SUCCESS","key1":{"name":"abc"}}'
PICKER_NO_MATCH = '{"decision_picker":"NO_MATCH","key1":{"name":"abc"}}'
DOCS_SAMPLE = '{"source":"client1","instances":[{"intval":1,"strval":"hello-red-server-x"}]}'

# (document, condition, Go's Exists()) — every row of the §2.11 table.
TRUTH_TABLE = [
    (PICKER_ERROR, "[@this].#(decision_picker==ERROR)", True),
    (PICKER_ERROR, "[@this].#(decision_picker==SUCCESS)", False),
    (PICKER_NO_MATCH, "[@this].#(decision_picker==ERROR)", False),
    (PICKER_NO_MATCH, "[@this].#(decision_picker==SUCCESS)", False),
    (PICKER_SUCCESS, "[@this].#(decision_picker==SUCCESS)", True),
    ('{"decision_picker":"ERROR"}', "#(decision_picker==ERROR)", False),
    ('{"decision_picker":"ERROR"}', "[@this].#( decision_picker == ERROR )", True),
    ('{"decision_picker":"ERROR"}', "[@this].#(decision_picker==error)", False),
    ('{"instances":[{"modelId":"2"}]}', 'instances.#(modelId=="2")', True),
    ('{"instances":[{"modelId":"2"}]}', 'instances.#(modelId=="1")', False),
    ('{"instances":[{"modelId":"2"}]}', "instances.#(modelId==2)", True),
    ('{"predictions":[{"label":"dog","score":[0.8,0.2]}]}', 'predictions.#(label=="dog")', True),
    ('{"predictions":[{"label":"cat","score":[0.8,0.2]}]}', 'predictions.#(label=="dog")', False),
    (DOCS_SAMPLE, "[@this].#(source==client)", False),
    (DOCS_SAMPLE, "instances.#(intval>10)", False),
    (DOCS_SAMPLE, "instances.#(strval%*red-server*)", True),
    ('{"predictions":["It\'s a cat!"]}', '[@this].#(predictions.0=="dog")', False),
    ('{"predictions":["dog"]}', '[@this].#(predictions.0=="dog")', True),
    ('{"instances":[{"data":0.3}]}', "[@this].#(instances.0.data>0.5 && instances.0.data<=0.9)", True),
    ('{"instances":[{"data":0.0}]}', "[@this].#(instances.0.data>0.5 && instances.0.data<=0.9)", False),
    ('{"a":1}', "", False),
    ('{"flag":false}', "flag", True),
    ('{"flag":null}', "flag", True),
    ('{"other":1}', "flag", False),
    ('{"predictions":[]}', "predictions", True),
    ('{"predictions":[]}', "predictions.0", False),
    ('[{"a":1},{"a":2}]', "#(a==2)", True),
    ('{"a":"10"}', "[@this].#(a>5)", False),
    ('{"input":{"userId":1}}', "{ .input.userId == 1 }", True),
    ('{"predictions":{"class":"cat"}}', '{ .predictions.class == "dog" }', True),
    ('{"instances":[{"a":1},{"a":5}]}', "instances.#(a>9)#", True),
    ('{"x":1}', "@this", True),
    ("[1,2,3]", "@this", True),
]


@pytest.mark.parametrize(("document", "condition", "expected"), TRUTH_TABLE)
def test_condition_matches_go_gjson(document: str, condition: str, expected: bool) -> None:
    """Each verified Go gjson v1.18.0 result is reproduced, for str and bytes documents."""
    assert evaluate_condition(document, condition).matches is expected
    assert evaluate_condition(document.encode(), condition).matches is expected


@pytest.mark.parametrize(
    ("condition", "raw"),
    [
        ("!true", "true"),
        ("!false", "false"),
        ("!null", "null"),
        ("!0", "0"),
        ('!"lit"', '"lit"'),
        ("!{}", "{}"),
        ("a|@keys", '["b"]'),
        ("a.@values", "[1]"),
        ("a|@tostr", '"{\\"b\\":1}"'),
    ],
)
def test_literals_modifiers_and_escapes_match_go(condition: str, raw: str) -> None:
    """Literals exist (as in Go); modifiers and escapes give Go's Raw (recorded from oracle/gjson)."""
    result = evaluate_condition('{"a":{"b":1}}', condition)
    assert (result.matches, result.raw) == (True, raw)


def test_deeply_nested_input_neither_crashes_nor_matches() -> None:
    """400,000 nested '[' (which crashed pygjson) is invalid JSON: no match, no crash."""
    deep = b"[" * 400_000
    assert is_valid_json(deep) is False
    assert evaluate_condition(deep, "0").matches is False


def test_raw_is_the_documents_own_slice() -> None:
    """``raw`` keeps the document's spacing and number spelling, as gjson's Raw does."""
    result = evaluate_condition('{"a": [1, 2.50, 1e3]}', "a")
    assert result.raw == "[1, 2.50, 1e3]"
    assert result.value == [1, 2.5, 1000.0]


@pytest.mark.parametrize(
    ("document", "valid"),
    [
        ("", False),
        ("null", True),
        ("123", True),
        ('"str"', True),
        (" {} ", True),
        ("[]", True),
        ("{}\n", True),
        ("{} x", False),
        ("NaN", False),
        ("[1,]", False),
        ('{"a":Infinity}', False),
        (b'{"a":"\xff"}', True),
    ],
)
def test_json_validity_matches_go(document: str | bytes, valid: bool) -> None:
    """``is_valid_json`` is Go's strict ``json.Valid`` (NaN, trailing garbage and commas refused)."""
    assert is_valid_json(document) is valid


def test_invalid_document_never_matches_and_says_why() -> None:
    """A document that is not JSON gives matches=False with a reason, even for ``@this``."""
    result = evaluate_condition("hello world", "@this")
    assert result.matches is False
    assert result.reason == "document is not valid JSON"
    assert evaluate_condition(b"", "@this").matches is False


def test_empty_condition_does_not_match_an_ordinary_document() -> None:
    result = evaluate_condition('{"a":1}', "")
    assert result.matches is False
    assert result.reason == "empty condition"


def test_match_reports_value_and_raw() -> None:
    """The matched value comes back as plain Python and as compact JSON text."""
    result = evaluate_condition('{"instances":[{"modelId":"2","x":[1, 2.5]}]}', 'instances.#(modelId=="2")')
    assert result.matches is True
    assert result.value == {"modelId": "2", "x": [1, 2.5]}
    assert result.raw == '{"modelId":"2","x":[1, 2.5]}'
    assert result.reason is None


def test_falsy_values_exist() -> None:
    """``false``, ``null``, ``0`` and ``""`` are present, so they match (Exists, not truthiness)."""
    for doc in ('{"v":false}', '{"v":null}', '{"v":0}', '{"v":""}', '{"v":{}}'):
        assert evaluate_condition(doc, "v").matches is True


def test_absent_path_reason() -> None:
    result = evaluate_condition('{"a":1}', "b")
    assert (result.matches, result.reason, result.value) == (False, "path not found", None)


def test_with_value_false_skips_value() -> None:
    result = evaluate_condition('{"a":[1,2]}', "a", with_value=False)
    assert result.matches is True
    assert result.value is None and result.raw is None


def test_invalid_utf8_inside_string_is_tolerated() -> None:
    """Go accepts invalid UTF-8 inside strings; so does the engine (it reads it as U+FFFD)."""
    assert evaluate_condition(b'{"a":"\xff","b":1}', "b").matches is True


def test_as_dict_is_json_compatible() -> None:
    assert evaluate_condition('{"a":1}', "a").as_dict() == {
        "matches": True,
        "value": 1,
        "raw": "1",
        "reason": None,
    }


def test_a_deep_valid_document_matches_without_an_unrenderable_value() -> None:
    """The match stands; its value (deeper than JSON renderers recurse) is left out with a reason."""
    result = evaluate_condition("[" * 50_000 + "]" * 50_000, "@this")
    assert (result.matches, result.value, result.reason) == (True, None, "value nests too deeply to show")
