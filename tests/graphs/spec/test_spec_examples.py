"""The example manifests: each valid one produces no errors (and exactly the warnings of its
``.expected.json`` when there is one); each invalid one produces exactly the issues of its
``.expected.json`` (code, severity, message, node, step, path, line, column)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.language import export_yaml, has_errors, parse, validate

EXAMPLES = Path(__file__).parent / "examples"
VALID = sorted((EXAMPLES / "valid").glob("*.yaml"))
INVALID = sorted((EXAMPLES / "invalid").glob("*.yaml"))


def _expected(path: Path) -> list[dict[str, object]]:
    expected = path.with_suffix(".expected.json")
    return json.loads(expected.read_text()) if expected.exists() else []


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_example_has_no_errors_and_exactly_its_warnings(path: Path) -> None:
    issues = validate(parse(path.read_text()))
    assert not has_errors(issues)
    assert [issue.to_dict() for issue in issues] == _expected(path)


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_example_reports_exactly_its_issues(path: Path) -> None:
    issues = validate(parse(path.read_text()))
    assert has_errors(issues)
    assert [issue.to_dict() for issue in issues] == _expected(path)


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_example_survives_export_and_reimport(path: Path) -> None:
    manifest = parse(path.read_text())
    again = parse(export_yaml(manifest))
    assert not has_errors(validate(again))
    assert export_yaml(again) == export_yaml(manifest)
    if not any(
        i.code in ("schema.unknown-field", "legacy.routes", "legacy.service") for i in validate(manifest)
    ):
        # Nothing to drop: the exported manifest is the same graph (server-set metadata aside).
        assert again.spec == manifest.spec


def test_examples_cover_every_webhook_rule_and_every_warning() -> None:
    codes = {issue["code"] for path in VALID + INVALID for issue in _expected(path)}
    assert {
        "webhook.name-format",
        "webhook.root-missing",
        "webhook.duplicate-step-name",
        "webhook.no-target",
        "webhook.multiple-targets",
        "webhook.weight-missing",
        "webhook.weight-sum",
        "graph.cycle",
        "graph.unknown-node",
        "graph.unreachable",
        "graph.empty-node",
        "switch.no-condition",
        "step.condition-ignored",
        "sequence.condition-on-first-step",
        "sequence.response-on-first-step",
        "step.data-ignored",
        "step.data-unknown",
        "step.weight-ignored",
        "step.map-predictions-ignored",
        "splitter.negative-weight",
        "step.dependency-ignored",
        "legacy.routes",
        "legacy.service",
        "condition.jsonpath",
        "condition.always-true",
        "condition.logical-operator",
        "condition.syntax",
        "ensemble.key-collision",
        "spec.timeout-ignored",
        "schema.unknown-field",
        "schema.type",
        "schema.enum",
        "schema.required",
        "schema.format",
        "schema.pattern",
        "manifest.api-version",
        "manifest.kind",
        "metadata.name-missing",
    } <= codes
