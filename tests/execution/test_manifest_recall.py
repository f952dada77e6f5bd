"""A worker process keeps the parsed manifests of the versions it ran (execution/services/recall.py).
A version id can be given again to another version (a flushed or restored database, a reset
sequence): the kept manifest must then not be taken for the new version's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from execution.models import Run
from execution.services import recall
from graphs import language
from graphs.models import GraphVersion


def manifest(name: str, service: str) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name},
        "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": service}]}}},
    }


def run_of(version_id: int, document: dict[str, Any], saved_at: datetime) -> Run:
    version = GraphVersion(
        id=version_id,
        manifest=document,
        spec_hash=language.spec_hash(language.manifest_from_document(document)),
        created_at=saved_at,
    )
    return Run(version=version)


def service_of(manifest: language.Manifest) -> str | None:
    return manifest.spec.nodes["root"].steps[0].service_name


def test_a_version_id_given_again_does_not_bring_back_the_old_manifest() -> None:
    saved_at = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    assert (
        service_of(recall.manifest_of(run_of(900_001, manifest("old", "first-model"), saved_at)))
        == "first-model"
    )
    later = saved_at + timedelta(minutes=5)  # the old graph deleted, the id given to a new version
    assert (
        service_of(recall.manifest_of(run_of(900_001, manifest("new", "second-model"), later)))
        == "second-model"
    )


def test_one_version_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_of(900_002, manifest("once", "a-model"), datetime(2026, 12, 1, 4, 0, tzinfo=UTC))
    parsed = []
    real = recall.language.manifest_from_document
    monkeypatch.setattr(recall.language, "manifest_from_document", lambda doc: parsed.append(1) or real(doc))
    first = recall.manifest_of(run)
    assert recall.manifest_of(run) is first
    assert parsed == [1]
