"""Reading YAML and JSON: documents, positions, error locations and the limits on hostile input."""

from __future__ import annotations

import json
import time

import pytest

from graphs.language import (
    Issue,
    SpecError,
    load_documents,
    manifest_from_document,
    parse,
    validate,
)

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: {name}
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - serviceName: model
"""


def graph(name: str = "g") -> str:
    return GRAPH.format(name=name)


def only_issue(exc: pytest.ExceptionInfo[SpecError]) -> Issue:
    assert len(exc.value.issues) == 1, exc.value.issues
    return exc.value.issues[0]


# -- documents ---------------------------------------------------------------------------------


def test_a_single_document_reads_with_positions_of_every_path() -> None:
    [doc] = load_documents(graph())
    assert doc.document["metadata"]["name"] == "g"
    assert doc.positions[()] == (1, 1)
    assert doc.positions[("metadata", "name")] == (4, 3)
    assert doc.positions[("spec", "nodes", "root", "steps", 0)] == (10, 9)
    assert doc.positions[("spec", "nodes", "root", "steps", 0, "serviceName")] == (10, 9)
    assert doc.where == "document 1"


def test_a_multi_document_stream_yields_every_graph_and_skips_empty_documents() -> None:
    docs = load_documents("---\n" + graph("a") + "---\n---\n" + graph("b"))
    assert [d.document["metadata"]["name"] for d in docs] == ["a", "b"]
    assert [d.number for d in docs] == [1, 3]
    assert docs[1].positions[("metadata", "name")] == (17, 3)


def test_a_kubectl_list_yields_each_item_with_positions_relative_to_the_item() -> None:
    items = [json.loads(json.dumps(parse(graph(n)).document)) for n in ("a", "b")]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
    docs = load_documents(text)
    assert [d.document["metadata"]["name"] for d in docs] == ["a", "b"]
    assert [d.where for d in docs] == ["document 1, item 1", "document 1, item 2"]
    assert ("metadata", "name") in docs[1].positions


def test_a_document_of_another_kind_is_refused_naming_what_was_found() -> None:
    other = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"
    with pytest.raises(SpecError) as exc:
        load_documents(graph() + "---\n" + other)
    issue = only_issue(exc)
    assert issue.code == "load.not-inferencegraph"
    assert issue.message == (
        "expected kind InferenceGraph (serving.kserve.io/v1alpha1), found kind Deployment (apps/v1) in "
        "document 2"
    )
    assert issue.line == 13


def test_other_kinds_can_be_skipped() -> None:
    other = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: x\n"
    docs = load_documents(other + "---\n" + graph(), other_kinds="skip")
    assert [d.number for d in docs] == [2]


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents("- a\n- b\n")
    assert only_issue(exc).message == (
        "expected kind InferenceGraph (serving.kserve.io/v1alpha1), found a list in document 1"
    )


def test_no_document_at_all_is_an_error() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents("# nothing here\n")
    assert only_issue(exc).code == "load.empty"


def test_parse_wants_exactly_one_graph() -> None:
    with pytest.raises(SpecError) as exc:
        parse(graph("a") + "---\n" + graph("b"))
    assert only_issue(exc).code == "load.multiple-documents"


# -- syntax ------------------------------------------------------------------------------------


def test_a_yaml_syntax_error_has_line_and_column() -> None:
    text = "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nspec:\n  nodes: [a\n  b: c\n"
    with pytest.raises(SpecError) as exc:
        load_documents(text)
    issue = only_issue(exc)
    assert issue.code == "yaml.syntax"
    assert issue.message.startswith("YAML syntax error: ")
    assert (issue.line, issue.column) == (5, 4)


def test_a_bad_indentation_points_at_the_line() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents("a:\n  b: 1\n c: 2\n")
    issue = only_issue(exc)
    assert issue.code == "yaml.syntax"
    assert issue.line == 3


def test_a_json_syntax_error_has_line_and_column() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents('{\n  "kind": "InferenceGraph",\n  "spec": {,}\n}')
    issue = only_issue(exc)
    assert issue.code == "json.syntax"
    assert (issue.line, issue.column) == (3, 12)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_is_strict_about_non_finite_numbers(constant: str) -> None:
    with pytest.raises(SpecError) as exc:
        load_documents('{"kind": "InferenceGraph", "spec": {"timeout": ' + constant + "}}")
    assert only_issue(exc).code == "json.constant"


def test_yaml_non_finite_floats_are_refused() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents(graph() + "  timeout: .nan\n")
    assert only_issue(exc).code == "yaml.non-finite"


def test_json_input_gets_positions_too() -> None:
    text = json.dumps(parse(graph()).document, indent=2)
    [doc] = load_documents(text)
    assert doc.positions[("metadata", "name")][0] == 5


def test_yaml_flow_style_that_is_not_json_still_reads() -> None:
    [doc] = load_documents(
        "{apiVersion: serving.kserve.io/v1alpha1, kind: InferenceGraph, spec: {nodes: {}}}"
    )
    assert doc.document["spec"] == {"nodes": {}}


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents(graph() + "  nodes: {}\n")
    issue = only_issue(exc)
    assert issue.code == "yaml.duplicate-key"
    assert issue.line == 11


def test_python_tags_are_refused() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents("kind: !!python/object:os.system {}\n")
    assert only_issue(exc).code == "yaml.tag"


def test_bytes_must_be_utf8() -> None:
    with pytest.raises(SpecError) as exc:
        load_documents(b"kind: \xff\xfe\n")
    assert only_issue(exc).code == "load.encoding"


# -- YAML 1.1 details --------------------------------------------------------------------------


def test_timestamps_stay_strings_and_keys_stay_as_written() -> None:
    text = graph() + "    on:\n      routerType: Sequence\n    yes: {routerType: Switch}\n    1: {}\n"
    text = text.replace("  name: g\n", "  name: g\n  annotations:\n    created: 2024-01-01T00:00:00Z\n")
    [doc] = load_documents(text)
    assert doc.document["metadata"]["annotations"]["created"] == "2024-01-01T00:00:00Z"
    assert list(doc.document["spec"]["nodes"]) == ["root", "on", "yes", "1"]
    json.dumps(doc.document, allow_nan=False)  # JSON-compatible


def test_anchors_aliases_and_merge_keys_are_expanded() -> None:
    text = graph() + (
        "    a: &base\n      routerType: Ensemble\n      steps: [{serviceName: x}]\n"
        "    b:\n      <<: *base\n      routerType: Sequence\n"
    )
    [doc] = load_documents(text)
    nodes = doc.document["spec"]["nodes"]
    assert nodes["b"] == {"routerType": "Sequence", "steps": [{"serviceName": "x"}]}


# -- lenient parsing ---------------------------------------------------------------------------


def test_wrong_types_and_unknown_keys_go_to_extra() -> None:
    manifest = manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g"},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Bogus",
                        "routes": [{"service": "x"}],
                        "steps": [{"serviceName": "a", "service": "b", "weight": "80"}],
                    }
                }
            },
        }
    )
    node = manifest.spec.nodes["root"]
    assert node.router_type == "Bogus"
    assert dict(node.extra) == {"routes": [{"service": "x"}]}
    assert node.steps[0].weight is None
    assert dict(node.steps[0].extra) == {"service": "b", "weight": "80"}
    assert manifest.positions == {}
    codes = [issue.code for issue in validate(manifest)]
    assert codes == ["schema.enum", "schema.type", "legacy.routes", "legacy.service"]


def test_integral_floats_count_as_integers_like_the_api_server() -> None:
    manifest = parse(
        graph().replace("routerType: Sequence", "routerType: Splitter") + "        weight: 100.0\n"
    )
    assert manifest.spec.nodes["root"].steps[0].weight == 100
    assert validate(manifest) == []


def test_parse_of_a_mapping_refuses_non_json_values() -> None:
    with pytest.raises(SpecError) as exc:
        parse({"kind": "InferenceGraph", "spec": {"timeout": object()}})
    assert only_issue(exc).code == "load.not-json"


def test_parse_of_a_mapping_refuses_another_kind() -> None:
    with pytest.raises(SpecError) as exc:
        parse({"apiVersion": "v1", "kind": "ConfigMap"})
    assert only_issue(exc).code == "load.not-inferencegraph"


# -- limits ------------------------------------------------------------------------------------


def _refused_quickly(text: str, **limits: int) -> Issue:
    started = time.perf_counter()
    with pytest.raises(SpecError) as exc:
        load_documents(text, **limits)  # type: ignore[arg-type]
    # Generous bound: the point is "does not expand the bomb", not a benchmark.
    assert time.perf_counter() - started < 5
    return only_issue(exc)


def test_billion_laughs_is_refused_naming_the_limit() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    issue = _refused_quickly("\n".join(lines) + "\n")
    assert issue.code == "load.too-many-values"
    assert "max_values" in issue.message


def test_too_many_alias_references_are_refused() -> None:
    text = "a: &x 1\nb: [" + ", ".join(["*x"] * 2000) + "]\n"
    issue = _refused_quickly(text)
    assert issue.code == "load.too-many-aliases"
    assert "max_aliases" in issue.message


def test_a_huge_document_is_refused_before_parsing() -> None:
    issue = _refused_quickly("a: " + "x" * (3 * 1024 * 1024) + "\n")
    assert issue.code == "load.too-large"
    assert "2,097,152 bytes (max_bytes)" in issue.message


def test_the_size_limit_is_configurable() -> None:
    issue = _refused_quickly(graph(), max_bytes=100)
    assert issue.code == "load.too-large"


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_deep_nesting_is_refused_naming_the_limit(opener: str) -> None:
    text = opener * 200_000
    issue = _refused_quickly(text)
    assert issue.code == "load.too-deep"
    assert "100 levels (max_depth)" in issue.message


def test_deep_json_nesting_is_refused() -> None:
    issue = _refused_quickly('{"a":' * 50_000 + "1" + "}" * 50_000)
    assert issue.code == "load.too-deep"


def test_too_many_graph_nodes_are_refused() -> None:
    nodes = {f"n{i}": {"routerType": "Sequence"} for i in range(2001)}
    text = json.dumps(
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "InferenceGraph", "spec": {"nodes": nodes}}
    )
    issue = _refused_quickly(text)
    assert issue.code == "load.too-many-nodes"
    assert "max_graph_nodes" in issue.message


def test_too_many_steps_are_refused() -> None:
    steps = [{"serviceName": "a"}] * 30
    text = json.dumps({"kind": "InferenceGraph", "spec": {"nodes": {"root": {"steps": steps}}}})
    issue = _refused_quickly(text, max_steps=20)
    assert issue.code == "load.too-many-steps"
    assert "max_steps" in issue.message
