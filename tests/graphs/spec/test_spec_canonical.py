"""Canonical form and hash: formatting never matters, content always does."""

from __future__ import annotations

import json

from graphs.language import canonical_document, parse, spec_hash

YAML_TEXT = """\
# comment
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: g
spec:
  nodes:
    root:
      routerType: Splitter
      steps:
      - serviceName: a
        weight: 80
      - {weight: 20, serviceName: b}
  unknownField: kept
"""


def test_key_order_whitespace_and_json_versus_yaml_do_not_change_the_hash() -> None:
    manifest = parse(YAML_TEXT)
    as_json = json.dumps(dict(reversed(list(manifest.document.items()))), indent=4)
    assert spec_hash(parse(as_json)) == spec_hash(manifest)
    assert spec_hash(manifest).startswith("sha256:") and len(spec_hash(manifest)) == 7 + 64


def test_the_canonical_form_keeps_unknown_fields_and_sorts_keys() -> None:
    canonical = canonical_document(parse(YAML_TEXT))
    assert canonical["spec"]["unknownField"] == "kept"
    assert list(canonical) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(canonical["spec"]["nodes"]["root"]["steps"][1]) == ["serviceName", "weight"]


def test_any_change_the_user_wrote_changes_the_hash() -> None:
    base = spec_hash(parse(YAML_TEXT))
    for old, new in [
        ("weight: 80", "weight: 80.0"),
        ("weight: 80", 'weight: "80"'),
        ("unknownField: kept", "unknownField: changed"),
        ("serviceName: a", "serviceName: a2"),
    ]:
        assert spec_hash(parse(YAML_TEXT.replace(old, new))) != base, new


def test_the_canonical_form_parses_back_to_the_same_hash() -> None:
    manifest = parse(YAML_TEXT)
    again = parse(json.dumps(canonical_document(manifest)))
    assert canonical_document(again) == canonical_document(manifest)
    assert spec_hash(again) == spec_hash(manifest)
