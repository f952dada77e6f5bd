"""JSON equality, subsets, ignore paths and diffs as a test author means them."""

from __future__ import annotations

import pytest

from execution.casecore import json_diff, json_equal, json_subset
from execution.casecore.jsondiff import drop_paths, parse_ignore_path


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, None, True),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ("1", 1, False),
    ],
)
def test_json_equality_is_jsons_not_pythons(a: object, b: object, equal: bool) -> None:
    assert json_equal(a, b) is equal


def test_subset_allows_extra_keys_at_any_depth_but_not_extra_elements() -> None:
    assert json_subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not json_subset({"a": {"b": 1}}, {"a": {"b": 2}})
    assert not json_subset([{"a": 1}], [{"a": 1}, {"a": 2}])
    assert json_subset([{"a": 1}], [{"a": 1, "z": 0}])


def test_diff_lists_changes_in_document_order_with_paths() -> None:
    expected = {"a": 1, "b": {"c": [1, 2], "d": "x"}, "gone": True, "odd key": 0}
    actual = {"a": 1, "b": {"c": [1, 3], "d": "y", "new": None}, "odd key": 1}
    assert [d.as_dict() for d in json_diff(expected, actual)] == [
        {"path": "$.b.c[1]", "op": "changed", "expected": 2, "actual": 3},
        {"path": "$.b.d", "op": "changed", "expected": "x", "actual": "y"},
        {"path": "$.b.new", "op": "unexpected", "actual": None},
        {"path": "$.gone", "op": "missing", "expected": True},
        {"path": '$["odd key"]', "op": "changed", "expected": 0, "actual": 1},
    ]
    assert [d.path for d in json_diff(expected, actual, subset=True)] == [
        "$.b.c[1]",
        "$.b.d",
        "$.gone",
        '$["odd key"]',
    ]


def test_diff_is_bounded_and_survives_deep_documents() -> None:
    assert len(json_diff(list(range(1000)), [-1] * 1000, limit=10)) == 10
    deep_a: object = 1
    deep_b: object = 2
    for _ in range(10_000):
        deep_a, deep_b = [deep_a], [deep_b]
    (entry,) = json_diff(deep_a, deep_b)
    assert entry.path.endswith("[0][0]") and entry.expected == 1 and entry.actual == 2


def test_ignore_paths_drop_keys_elements_and_wildcards_without_touching_the_input() -> None:
    value = {
        "id": "x",
        "a.b": 1,
        "preds": [{"score": 0.1, "label": "cat"}, {"score": 0.2, "label": "dog"}],
        "m": {"t": 1, "u": 2},
    }
    paths = tuple(parse_ignore_path(p) for p in ("id", "a\\.b", "preds.#.score", "m.*", "nothing.here"))
    assert drop_paths(value, paths) == {"preds": [{"label": "cat"}, {"label": "dog"}], "m": {}}
    assert drop_paths([1, 2, 3], (("1",),)) == [1, None, 3]
    assert value["id"] == "x"
    with pytest.raises(ValueError):
        parse_ignore_path("a..b")
