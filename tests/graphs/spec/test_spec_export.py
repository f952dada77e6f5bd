"""Export: CRD fields only, omitempty as Go, keys in the order people write them, strict-schema valid."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from graphs.language import (
    canonical_document,
    export_json,
    export_yaml,
    has_errors,
    normalize_for_export,
    parse,
    to_kserve_document,
    validate,
)
from graphs.language.schema import OPENAPI_SCHEMA

EXAMPLES = sorted((Path(__file__).parent / "examples" / "valid").glob("*.yaml"))


def strict(schema: Any) -> Any:
    """The CRD schema with ``additionalProperties: false`` wherever ``properties`` is declared alone,
    i.e. the API server's strict field validation."""
    if isinstance(schema, dict):
        out = {key: strict(value) for key, value in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    return schema


STRICT_SCHEMA = strict(copy.deepcopy(dict(OPENAPI_SCHEMA)))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_exported_yaml_of_every_valid_example_passes_the_strict_crd_schema(path: Path) -> None:
    exported = yaml.safe_load(export_yaml(parse(path.read_text())))
    jsonschema.validate(exported, STRICT_SCHEMA)


def test_the_strict_schema_does_reject_unknown_fields() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"spec": {"nodes": {}, "bogus": 1}}, STRICT_SCHEMA)


MESSY = """\
# a comment that export drops
kind: InferenceGraph
spec:
  maxReplicas: 0
  minReplicas: 0
  timeout: 0
  nodeName: ""
  tolerations: []
  nodeSelector: {}
  resources: {}
  replicas: 3
  nodes:
    split:
      steps:
      - weight: 0
        serviceName: b
        mapPredictionsToInstances: false
        name: ""
        condition: ""
      - dependency: Hard
        weight: 100
        serviceUrl: http://c.local/
        name: c
        service: legacy
      routerType: Splitter
      routes: []
    root:
      steps:
      - data: $response
        condition: "predictions"
        nodeName: split
        name: first
        mapPredictionsToInstances: true
      routerType: Sequence
    empty: {routerType: Ensemble}
status:
  url: http://x
metadata:
  annotations: {team: a}
  uid: 1234
  labels: {}
  namespace: ml
  name: messy
apiVersion: serving.kserve.io/v1alpha1
"""


def test_export_orders_keys_omits_empties_and_drops_unknown_fields() -> None:
    document = to_kserve_document(parse(MESSY))
    assert json.dumps(document) == json.dumps(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "messy", "namespace": "ml", "annotations": {"team": "a"}},
            "spec": {
                "nodes": {
                    "split": {
                        "routerType": "Splitter",
                        "steps": [
                            {"serviceName": "b", "weight": 0},
                            {
                                "name": "c",
                                "serviceUrl": "http://c.local/",
                                "weight": 100,
                                "dependency": "Hard",
                            },
                        ],
                    },
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {
                                "name": "first",
                                "nodeName": "split",
                                "condition": "predictions",
                                "data": "$response",
                                "mapPredictionsToInstances": True,
                            }
                        ],
                    },
                    "empty": {"routerType": "Ensemble"},
                },
                "minReplicas": 0,
                "timeout": 0,
            },
        }
    )


def test_export_keeps_the_stored_document_untouched() -> None:
    manifest = parse(MESSY)
    before = json.dumps(manifest.document)
    export_yaml(manifest)
    assert json.dumps(manifest.document) == before
    assert manifest.document["spec"]["replicas"] == 3


def test_export_yaml_is_block_style_with_a_comment_header_and_no_aliases() -> None:
    manifest = parse(
        """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata: {name: g, labels: &l {a: "yes"}, annotations: *l}
spec:
  nodes:
    root:
      routerType: Switch
      steps:
      - {serviceName: "ünïcode", condition: "[@this].#(x==\\"on\\")"}
"""
    )
    text = export_yaml(manifest, header="Exported by Inference Graph Studio\n\nversion 3")
    assert text.startswith("# Exported by Inference Graph Studio\n#\n# version 3\napiVersion: ")
    assert "&" not in text and "*" not in text
    assert "{" not in text.split("condition")[0]  # block style
    assert "ünïcode" in text
    assert "a: 'yes'" in text  # a string that YAML 1.1 would read as a boolean is quoted
    assert parse(text).document["metadata"]["labels"] == {"a": "yes"}
    assert text.index("name: g") < text.index("labels:") < text.index("annotations:")


def test_multiline_strings_are_literal_blocks_and_round_trip() -> None:
    manifest = parse(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g", "annotations": {"note": "line one\nline two\n"}},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "a"}]}}},
        }
    )
    text = export_yaml(manifest)
    assert "note: |" in text
    assert parse(text).document["metadata"]["annotations"]["note"] == "line one\nline two\n"


def test_export_json_is_the_same_document_indented() -> None:
    manifest = parse(MESSY)
    text = export_json(manifest)
    assert text.startswith('{\n  "apiVersion"')
    assert json.loads(text) == to_kserve_document(manifest)


def test_round_trip_through_export_equals_the_normalized_manifest() -> None:
    manifest = parse(MESSY)
    again = parse(export_yaml(manifest))
    assert canonical_document(again) == normalize_for_export(manifest)
    assert not has_errors(validate(again))
