"""Validation, export and the upgrade rules per KServe release (graphs/language/release_rules.py)."""

from __future__ import annotations

import json

from graphs.language import export_json, parse, validate
from graphs.language.release_rules import release_issues, upgrade_changes
from graphs.language.releases import MASTER, get_release

TIMEOUTS = """
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata: {name: timed}
spec:
  routerTimeouts: {serviceClient: 5}
  tolerations: []
  nodes:
    root:
      routerType: Sequence
      steps:
        - {name: detect, serviceUrl: "http://d/", mapPredictionsToInstances: true}
        - {name: classify, serviceUrl: "http://c/", condition: "label", data: $response}
"""

SPLIT = """
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata: {name: split}
spec:
  nodes:
    root:
      routerType: Splitter
      steps:
        - {name: a, serviceUrl: "http://a/", weight: 99}
        - {name: b, serviceUrl: "http://b/", weight: 1}
"""


def _codes(issues: list, severity: str) -> list[tuple[str, str | None]]:
    return [(i.code, i.path) for i in issues if i.severity == severity]


def test_a_field_the_release_does_not_know_is_an_error_naming_the_release() -> None:
    manifest = parse(TIMEOUTS)
    assert _codes(validate(manifest, MASTER), "error") == []
    issues = validate(manifest, get_release("v0.14.1"))
    assert _codes(issues, "error") == [
        ("release.unknown-field", "spec.routerTimeouts"),
        ("release.unknown-field", "spec.tolerations"),
        ("release.unknown-field", "spec.nodes.root.steps[0].mapPredictionsToInstances"),
    ]
    first = next(i for i in issues if i.severity == "error")
    assert first.message == (
        "spec.routerTimeouts is not in KServe v0.14.1's InferenceGraph CRD (it arrived in v0.16.0): "
        "v0.14.1's API server drops it"
    )
    assert first.line is not None  # pinned to its line like every other issue
    # v0.15 has tolerations but not the v0.16 fields.
    assert len(_codes(validate(manifest, get_release("v0.15.2")), "error")) == 2


def test_a_behaviour_of_the_release_is_a_warning() -> None:
    manifest = parse(TIMEOUTS)
    assert [i.code for i in release_issues(manifest, get_release("v0.15.1")) if i.severity == "warning"] == []
    warnings = release_issues(manifest, get_release("v0.13.0"))
    unmet = [i for i in warnings if i.code == "release.unmet-condition-500"]
    assert [(i.step_name, i.path) for i in unmet] == [("classify", "spec.nodes.root.steps[1].condition")]
    split = parse(SPLIT)
    assert [i.code for i in release_issues(split, get_release("v0.11.2"))] == [
        "release.splitter-never-chosen"
    ]
    assert [i.code for i in release_issues(split, get_release("v0.17.1"))] == ["release.splitter-drops"]
    assert release_issues(split, MASTER) == []


def test_export_leaves_out_what_the_release_does_not_know() -> None:
    manifest = parse(TIMEOUTS)
    full = json.loads(export_json(manifest))
    old = json.loads(export_json(manifest, release=get_release("v0.13.1")))
    assert "routerTimeouts" in full["spec"] and "routerTimeouts" not in old["spec"]
    assert "mapPredictionsToInstances" not in old["spec"]["nodes"]["root"]["steps"][0]
    assert old["spec"]["nodes"]["root"]["steps"][1] == full["spec"]["nodes"]["root"]["steps"][1]


def test_upgrade_rules_name_each_change_for_this_graph() -> None:
    manifest = parse(TIMEOUTS)
    changes = upgrade_changes(manifest, get_release("v0.12.1"), MASTER)
    assert {c.code: c.release for c in changes} == {
        "unmet-condition-status": "v0.15.1",
        "map-predictions": "v0.16.0",
        "router-timeouts": "v0.16.0",
        "readyz": "v0.15.0",
    }
    unmet = next(c for c in changes if c.code == "unmet-condition-status")
    assert unmet.step_name == "classify" and "answers 200 instead of 500" in unmet.message
    # Either direction names the same changes; none between releases sharing a router.
    assert [c.code for c in upgrade_changes(manifest, MASTER, get_release("v0.12.1"))] == [
        c.code for c in changes
    ]
    assert upgrade_changes(manifest, get_release("v0.17.0"), get_release("v0.18.1")) == []


def test_upgrade_rules_for_a_splitter() -> None:
    hundred = parse(SPLIT.replace("weight: 99", "weight: 50").replace("weight: 1", "weight: 50"))
    changes = upgrade_changes(hundred, get_release("v0.12.1"), get_release("v0.13.1"))
    assert [c.code for c in changes] == ["splitter-no-route"]
    assert "drops about 1 in 101 requests on v0.13 to v0.18" in changes[0].message
    assert (
        changes[0].after
        == "draws no route for about 1.0% of requests, which gets no answer (the router crashes)"
    )
    fixed = upgrade_changes(hundred, get_release("v0.18.1"), MASTER)
    assert [c.code for c in fixed] == ["splitter-no-route"] and fixed[0].after == "always finds a route"
    never = upgrade_changes(parse(SPLIT), get_release("v0.11.2"), MASTER)
    assert "splitter-unreachable-route" in [c.code for c in never]
