"""Edge contracts (``graphs.language.contracts``): a Sequence step fed the previous answer
(``data: $response``) is warned when that answer cannot be its request; pure, on hand-written graphs."""

from __future__ import annotations

from typing import Any

from graphs.language import edge_contracts, manifest_from_document, url_protocol, validate
from graphs.language.contracts import MAP_FIELD_SUPPORTED

V1_A = "http://a.default.svc/v1/models/a:predict"
V1_B = "http://b.default.svc/v1/models/b:predict"
V2_A = "http://a.default.svc/v2/models/a/infer"
V2_B = "http://b.default.svc/v2/models/b/versions/3/infer"


def graph(steps: list[dict[str, Any]], router: str = "Sequence") -> Any:
    return manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g"},
            "spec": {"nodes": {"root": {"routerType": router, "steps": steps}}},
        }
    )


def codes(manifest: Any, services: dict[str, Any] | None = None) -> list[tuple[str, str, int | None]]:
    return [(i.code, i.severity, i.step) for i in edge_contracts(manifest, services)]


def test_url_paths_name_the_protocol() -> None:
    assert url_protocol(V1_A) == "v1"
    assert url_protocol("http://x/v1/models/a") == "v1"
    assert url_protocol(V2_A) == "v2" and url_protocol(V2_B) == "v2"
    assert url_protocol("http://x/predict") == "unknown"


def test_v1_predictions_passed_to_a_v1_step_are_warned_with_the_fix() -> None:
    manifest = graph(
        [{"name": "one", "serviceUrl": V1_A}, {"name": "two", "serviceUrl": V1_B, "data": "$response"}]
    )
    [issue] = edge_contracts(manifest)
    assert (issue.code, issue.severity, issue.node, issue.step, issue.step_name) == (
        "contract.predictions-to-instances",
        "warning",
        "root",
        1,
        "two",
    )
    assert issue.path == "spec.nodes.root.steps[1].data"
    assert MAP_FIELD_SUPPORTED and "mapPredictionsToInstances: true" in issue.message


def test_a_service_names_protocol_comes_from_what_is_known_of_it() -> None:
    """Without a probe's answer a serviceName's protocol is unknown (the environment decides its URL)."""
    manifest = graph([{"serviceName": "a"}, {"serviceName": "b", "data": "$response"}])
    assert codes(manifest) == []
    v1 = {"protocol": "v1"}
    assert codes(manifest, {"a": v1, "b": v1}) == [("contract.predictions-to-instances", "warning", 1)]
    assert codes(manifest, {"a": v1}) == []
    mixed = graph([{"serviceUrl": V1_A}, {"serviceName": "b", "data": "$response"}])
    assert codes(mixed, {"b": v1}) == [("contract.predictions-to-instances", "warning", 1)]


def test_no_warning_when_the_step_maps_predictions_or_does_not_take_the_response() -> None:
    mapped = graph(
        [{"serviceName": "a"}, {"serviceName": "b", "data": "$response", "mapPredictionsToInstances": True}]
    )
    fresh = graph([{"serviceName": "a"}, {"serviceName": "b"}])
    ensemble = graph([{"serviceName": "a"}, {"serviceName": "b", "data": "$response"}], router="Ensemble")
    node_step = graph([{"serviceName": "a"}, {"nodeName": "root", "data": "$response"}])
    unknown = graph(
        [{"serviceUrl": "http://x/predict"}, {"serviceUrl": "http://y/score", "data": "$response"}]
    )
    for manifest in (mapped, fresh, ensemble, node_step, unknown):
        assert codes(manifest) == []


def test_v1_followed_by_v2_and_the_reverse_are_protocol_mismatches() -> None:
    forward = graph([{"serviceUrl": V1_A}, {"serviceUrl": V2_B, "data": "$response"}])
    backward = graph([{"serviceUrl": V2_A}, {"serviceUrl": V1_B, "data": "$response"}])
    assert codes(forward) == [("contract.protocol-mismatch", "warning", 1)]
    assert codes(backward) == [("contract.protocol-mismatch", "warning", 1)]
    assert "speaks v1" in edge_contracts(forward)[0].message


def test_metadata_sets_a_service_names_protocol() -> None:
    manifest = graph([{"serviceName": "a"}, {"serviceName": "b", "data": "$response"}])
    assert codes(manifest, {"a": {"protocol": "v2"}, "b": {"protocol": "v1"}}) == [
        ("contract.protocol-mismatch", "warning", 1)
    ]
    assert codes(manifest, {"a": {"protocol": "v2"}, "b": {"protocol": "v2"}}) == []


def test_v2_tensors_must_match_by_name_datatype_and_shape_when_metadata_is_known() -> None:
    manifest = graph([{"serviceName": "a"}, {"serviceName": "b", "data": "$response"}])
    outputs = [
        {"name": "scores", "datatype": "FP32", "shape": [-1, 3]},
        {"name": "ids", "datatype": "INT64", "shape": [-1]},
    ]
    fits = {"protocol": "v2", "inputs": [{"name": "scores", "datatype": "FP32", "shape": [1, 3]}]}
    assert codes(manifest, {"a": {"protocol": "v2", "outputs": outputs}, "b": fits}) == []
    wrong = {
        "protocol": "v2",
        "inputs": [
            {"name": "scores", "datatype": "FP16", "shape": [-1, 4]},
            {"name": "text", "datatype": "BYTES", "shape": [-1]},
        ],
    }
    [issue] = edge_contracts(manifest, {"a": {"protocol": "v2", "outputs": outputs}, "b": wrong})
    assert issue.code == "contract.tensor-mismatch" and issue.severity == "warning"
    assert "'scores' is FP16, the output is FP32" in issue.message
    assert "shape [-1, 4]" in issue.message and "'text' is not among the outputs" in issue.message
    # Without the previous step's outputs nothing can be compared.
    assert codes(manifest, {"a": {"protocol": "v2"}, "b": wrong}) == []


def test_contracts_are_not_part_of_validate() -> None:
    """validate() stays KServe's checks and ours on the document; contracts are added where the
    editor's issues are built, so a graph's stored validity never depends on them."""
    manifest = graph([{"serviceUrl": V1_A}, {"serviceUrl": V1_B, "data": "$response"}])
    assert edge_contracts(manifest)
    assert not any(i.code.startswith("contract.") for i in validate(manifest))
