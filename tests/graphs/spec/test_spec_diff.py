"""Semantic diff: nodes, steps (matched by name, content, target, position), fields."""

from __future__ import annotations

import json
from typing import Any

from graphs.language import diff, manifest_from_document


def manifest(nodes: dict[str, Any], **spec: Any) -> Any:
    return manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": spec.pop("name", "g"), "labels": spec.pop("labels", {"team": "a"})},
            "spec": {"nodes": nodes, **spec},
        }
    )


BASE = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "pre", "serviceName": "pre"},
            {"name": "model", "serviceName": "model", "data": "$response"},
            {"serviceName": "post"},
        ],
    },
    "other": {"routerType": "Ensemble", "steps": [{"serviceName": "x"}]},
}


def test_a_manifest_has_no_difference_with_itself() -> None:
    result = diff(manifest(BASE), manifest(BASE))
    assert result.is_empty
    assert result.summary == "no changes"
    assert result.to_dict()["nodes"] == {"added": [], "removed": [], "changed": []}


def test_nodes_added_removed_and_router_type_changed() -> None:
    after = json.loads(json.dumps(BASE))
    del after["other"]
    after["new"] = {"routerType": "Switch", "steps": []}
    after["root"]["routerType"] = "Ensemble"
    result = diff(manifest(BASE), manifest(after)).to_dict()
    assert result["nodes"]["added"] == ["new"]
    assert result["nodes"]["removed"] == ["other"]
    [changed] = result["nodes"]["changed"]
    assert changed["node"] == "root"
    assert changed["fields"] == [{"field": "routerType", "before": "Sequence", "after": "Ensemble"}]
    assert result["summary"] == "1 node added, 1 node removed, 1 node field changed"


def test_steps_are_matched_by_name_so_a_reorder_is_a_move_not_a_change() -> None:
    after = json.loads(json.dumps(BASE))
    steps = after["root"]["steps"]
    steps[0], steps[1] = steps[1], steps[0]
    result = diff(manifest(BASE), manifest(after)).to_dict()
    [changed] = result["nodes"]["changed"]
    # One move explains a swap of two neighbours (which of the two is reported is unspecified).
    assert changed["steps"]["moved"] in (
        [{"name": "model", "from": 1, "to": 0}],
        [{"name": "pre", "from": 0, "to": 1}],
    )
    assert changed["steps"]["changed"] == []
    assert changed["steps"]["added"] == changed["steps"]["removed"] == []


def test_an_inserted_step_is_added_and_the_others_do_not_move() -> None:
    after = json.loads(json.dumps(BASE))
    after["root"]["steps"].insert(0, {"name": "first", "serviceUrl": "http://f/"})
    [changed] = diff(manifest(BASE), manifest(after)).to_dict()["nodes"]["changed"]
    assert changed["steps"]["added"] == [
        {"index": 0, "name": "first", "step": {"name": "first", "serviceUrl": "http://f/"}}
    ]
    assert changed["steps"]["moved"] == [] and changed["steps"]["changed"] == []


def test_fields_of_a_step_change_one_by_one() -> None:
    after = json.loads(json.dumps(BASE))
    after["root"]["steps"][1]["data"] = "$request"
    after["root"]["steps"][1]["dependency"] = "Hard"
    after["root"]["steps"][2]["condition"] = "x"
    [changed] = diff(manifest(BASE), manifest(after)).to_dict()["nodes"]["changed"]
    assert changed["steps"]["changed"] == [
        {
            "index": 1,
            "from": 1,
            "name": "model",
            "fields": [
                {"field": "data", "before": "$response", "after": "$request"},
                {"field": "dependency", "before": None, "after": "Hard"},
            ],
        },
        {
            "index": 2,
            "from": 2,
            "name": None,
            "fields": [{"field": "condition", "before": None, "after": "x"}],
        },
    ]


def test_a_renamed_step_with_the_same_target_is_a_change_of_name() -> None:
    after = json.loads(json.dumps(BASE))
    after["root"]["steps"][0]["name"] = "prepare"
    [changed] = diff(manifest(BASE), manifest(after)).to_dict()["nodes"]["changed"]
    assert changed["steps"]["changed"][0]["fields"] == [
        {"field": "name", "before": "pre", "after": "prepare"}
    ]


def test_metadata_and_spec_fields_are_reported_with_paths() -> None:
    before = manifest(BASE, routerTimeouts={"serverWrite": 60}, tolerations=[{"key": "a"}])
    after = manifest(
        BASE,
        name="h",
        labels={"team": "b", "serving.kserve.io/x": "1"},
        routerTimeouts={"serverWrite": 30},
        tolerations=[{"key": "b"}],
    )
    result = diff(before, after).to_dict()
    assert result["metadata"] == [
        {"field": "name", "before": "g", "after": "h"},
        {"field": "labels.team", "before": "a", "after": "b"},
        {"field": 'labels["serving.kserve.io/x"]', "before": None, "after": "1"},
    ]
    assert result["spec"] == [
        {"field": "spec.routerTimeouts.serverWrite", "before": 60, "after": 30},
        {"field": "spec.tolerations", "before": [{"key": "a"}], "after": [{"key": "b"}]},
    ]
    json.dumps(result)  # JSON-compatible


def test_type_changes_are_changes() -> None:
    after = json.loads(json.dumps(BASE))
    after["other"]["steps"][0]["weight"] = 1
    before = json.loads(json.dumps(BASE))
    before["other"]["steps"][0]["weight"] = True
    assert not diff(manifest(before), manifest(after)).is_empty
