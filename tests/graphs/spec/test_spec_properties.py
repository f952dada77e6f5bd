"""Properties over generated valid manifests (hypothesis).

``HYPOTHESIS_MAX_EXAMPLES`` sets the number of examples (default 200; CI raises it)."""

from __future__ import annotations

import json
import os
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphs.language import (
    canonical_document,
    diff,
    export_yaml,
    has_errors,
    manifest_from_document,
    parse,
    spec_hash,
    to_kserve_document,
    validate,
)

settings.register_profile(
    "graphs-spec",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = settings.get_profile("graphs-spec")

# Texts chosen to trip YAML: 1.1 booleans and nulls, numbers, timestamps, unicode, newlines, quotes.
TRICKY = st.sampled_from(
    [
        "yes",
        "on",
        "no",
        "null",
        "~",
        "123",
        "1e3",
        "0x1F",
        "2024-01-01",
        "ünï",
        "a: b",
        "- x",
        "#c",
        "'q'",
        "l1\nl2",
    ]
)
TEXT = st.one_of(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12), TRICKY)
NAME = st.from_regex(r"\A[a-z]([-a-z0-9]{0,8}[a-z0-9])?\Z")
NODE_NAMES = st.sampled_from(["a", "b", "on", "yes", "1", "a.b", "ünï", "node-x", "null"])


@st.composite
def steps_for(draw: Any, router: str, nodes: list[str]) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    names = draw(st.lists(st.one_of(st.none(), NAME), min_size=count, max_size=count))
    seen: set[str] = set()
    steps: list[dict[str, Any]] = []
    for index in range(count):
        step: dict[str, Any] = {}
        name = names[index]
        if name and name not in seen:
            seen.add(name)
            step["name"] = name
        target = draw(
            st.sampled_from(["serviceName", "serviceUrl", "nodeName"] if nodes else ["serviceName"])
        )
        if target == "nodeName":
            step["nodeName"] = draw(st.sampled_from(nodes))
        elif target == "serviceUrl":
            step["serviceUrl"] = "http://" + draw(NAME) + ".local/v1/models/m:predict"
        else:
            step["serviceName"] = draw(NAME)
        if router == "Switch" or (router == "Sequence" and index > 0 and draw(st.booleans())):
            step["condition"] = draw(TEXT)
        if router == "Sequence" and draw(st.booleans()):
            step["data"] = draw(st.sampled_from(["$response", "$request"]))
        if router == "Sequence" and draw(st.booleans()):
            step["mapPredictionsToInstances"] = True
        if draw(st.booleans()):
            step["dependency"] = draw(st.sampled_from(["Soft", "Hard"]))
        steps.append(step)
    if router == "Splitter":
        cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=count - 1, max_size=count - 1)))
        bounds = [0, *cuts, 100]
        for index, step in enumerate(steps):
            step["weight"] = bounds[index + 1] - bounds[index]
    return steps


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    others = draw(st.lists(NODE_NAMES, unique=True, max_size=3))
    names = ["root", *others]
    nodes = {}
    for name in names:
        router = draw(st.sampled_from(["Sequence", "Splitter", "Ensemble", "Switch"]))
        nodes[name] = {"routerType": router, "steps": draw(steps_for(router, names))}
    spec: dict[str, Any] = {"nodes": nodes}
    optional = {
        "timeout": st.integers(0, 3600),
        "minReplicas": st.integers(0, 5),
        "maxReplicas": st.integers(1, 10),
        "scaleTarget": st.integers(0, 100),
        "scaleMetric": st.sampled_from(["cpu", "memory", "concurrency", "rps"]),
        "serviceAccountName": NAME,
        "nodeSelector": st.dictionaries(NAME, TEXT, min_size=1, max_size=2),
        "routerTimeouts": st.fixed_dictionaries(
            {}, optional={"serverRead": st.integers(0, 300), "serviceClient": st.integers(0, 300)}
        ),
        "resources": st.just({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": 1}}),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            value = draw(strategy)
            if value != {}:
                spec[key] = value
    metadata: dict[str, Any] = {"name": draw(NAME)}
    if draw(st.booleans()):
        metadata["namespace"] = draw(NAME)
    for key in ("labels", "annotations"):
        value = draw(st.dictionaries(NAME, TEXT, max_size=2))
        if value:
            metadata[key] = value
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": metadata,
        "spec": spec,
    }


@PROFILE
@given(documents())
def test_generated_manifests_are_valid(document: dict[str, Any]) -> None:
    assert not has_errors(validate(manifest_from_document(document)))


@PROFILE
@given(documents())
def test_the_canonical_form_parses_back_to_itself(document: dict[str, Any]) -> None:
    manifest = manifest_from_document(document)
    canonical = canonical_document(manifest)
    again = parse(json.dumps(canonical))
    assert canonical_document(again) == canonical
    assert spec_hash(again) == spec_hash(manifest)


@PROFILE
@given(documents())
def test_export_of_import_is_the_identity(document: dict[str, Any]) -> None:
    manifest = manifest_from_document(document)
    text = export_yaml(manifest)
    again = parse(text)
    assert canonical_document(again) == canonical_document(manifest)
    assert export_yaml(again) == text
    assert to_kserve_document(again) == document


@PROFILE
@given(documents())
def test_a_manifest_has_no_difference_with_itself(document: dict[str, Any]) -> None:
    manifest = manifest_from_document(document)
    assert diff(manifest, manifest).is_empty


MUTATIONS = [
    "add-node",
    "remove-node",
    "router-type",
    "add-step",
    "remove-step",
    "step-field",
    "label",
    "spec",
]


@PROFILE
@given(documents(), st.sampled_from(MUTATIONS), st.data())
def test_diff_reports_every_mutation(document: dict[str, Any], mutation: str, data: Any) -> None:
    after = json.loads(json.dumps(document))
    nodes = after["spec"]["nodes"]
    name = data.draw(st.sampled_from(sorted(nodes)))
    node = nodes[name]
    if mutation == "add-node":
        nodes["added-node"] = {"routerType": "Ensemble", "steps": [{"serviceName": "z"}]}
    elif mutation == "remove-node":
        if len(nodes) > 1:
            name = data.draw(st.sampled_from(sorted(set(nodes) - {"root"})))
            del nodes[name]
    elif mutation == "router-type":
        node["routerType"] = {"Sequence": "Ensemble"}.get(node["routerType"], "Sequence")
    elif mutation == "add-step":
        node["steps"].insert(data.draw(st.integers(0, len(node["steps"]))), {"serviceUrl": "http://new/"})
    elif mutation == "remove-step":
        node["steps"].pop(data.draw(st.integers(0, len(node["steps"]) - 1)))
    elif mutation == "step-field":
        index = data.draw(st.integers(0, len(node["steps"]) - 1))
        node["steps"][index]["condition"] = node["steps"][index].get("condition", "") + "-changed"
    elif mutation == "label":
        after["metadata"].setdefault("labels", {})["mutated"] = "yes"
    else:
        after["spec"]["timeout"] = after["spec"].get("timeout", 0) + 1
    result = diff(manifest_from_document(document), manifest_from_document(after))
    if after == document:
        assert result.is_empty
        return
    assert not result.is_empty
    changed = {c.node: c for c in result.nodes_changed}
    if mutation == "add-node":
        assert result.nodes_added == ("added-node",)
    elif mutation == "remove-node":
        assert result.nodes_removed == (name,)
    elif mutation == "router-type":
        assert [f.field for f in changed[name].fields] == ["routerType"]
    elif mutation == "add-step":
        assert [entry.step for entry in changed[name].steps_added] == [{"serviceUrl": "http://new/"}]
        assert not changed[name].steps_removed
    elif mutation == "remove-step":
        assert len(changed[name].steps_removed) == 1 and not changed[name].steps_added
    elif mutation == "step-field":
        [step_change] = changed[name].steps_changed
        assert [f.field for f in step_change.fields] == ["condition"]
    elif mutation == "label":
        assert [f.field for f in result.metadata] == ["labels.mutated"]
    else:
        assert [f.field for f in result.spec] == ["spec.timeout"]
    json.dumps(result.to_dict())


# Any text a database can store: no lone surrogates (Cs) and no NUL (the reader refuses both,
# graphs/language/storable.py).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)


@PROFILE
@given(st.dictionaries(ANY_TEXT, ANY_TEXT, min_size=1, max_size=3), ANY_TEXT)
# Found by Hypothesis: a "|+" block lost its trailing blank lines (the value read back as "0\n").
@example({"": "0\n\n"}, "")
@example({"k": "a\nb\n\n\n"}, "x\n\n")
def test_any_text_survives_export_as_keys_and_values(labels: dict[str, str], condition: str) -> None:
    document = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": "g", "annotations": labels},
        "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "a"}]}}},
    }
    if condition:
        document["spec"]["nodes"]["root"]["steps"].append({"serviceName": "b", "condition": condition})
    manifest = manifest_from_document(document)
    text = export_yaml(manifest)
    assert yaml.safe_load(text) == to_kserve_document(manifest)
    assert parse(text).document == to_kserve_document(manifest)
