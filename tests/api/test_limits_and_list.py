"""One set of manifest limits for every way in (JSON API create and save, YAML/JSON import), with
the reader's issue codes; graph list entries carry a summary of the latest version, never its
manifest."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from graphs import language
from graphs.models import Graph, GraphVersion

pytestmark = pytest.mark.django_db


def _with_nodes(manifest: dict[str, Any], count: int) -> dict[str, Any]:
    doc = copy.deepcopy(manifest)
    for index in range(count - 1):
        doc["spec"]["nodes"][f"n{index}"] = {"routerType": "Sequence", "steps": []}
    return doc


def _with_steps(manifest: dict[str, Any], count: int) -> dict[str, Any]:
    doc = copy.deepcopy(manifest)
    doc["spec"]["nodes"]["root"]["steps"] = [{"serviceUrl": f"http://m/{i}"} for i in range(count)]
    return doc


def _with_depth(manifest: dict[str, Any], depth: int) -> dict[str, Any]:
    doc = copy.deepcopy(manifest)
    nested: Any = {}
    for _ in range(depth):
        nested = {"a": nested}
    doc["spec"]["nodes"]["root"]["steps"][0]["extra"] = nested
    return doc


OVER_LIMITS = [
    pytest.param(lambda m: _with_nodes(m, language.MAX_GRAPH_NODES + 1), "load.too-many-nodes", id="nodes"),
    pytest.param(lambda m: _with_steps(m, language.MAX_STEPS + 1), "load.too-many-steps", id="steps"),
    pytest.param(lambda m: _with_depth(m, language.MAX_DEPTH), "load.too-deep", id="depth"),
]


def _import(api: APIClient, document: dict[str, Any], graph: str | None = None) -> Any:
    url = "/api/graphs/import/" + (f"?graph={graph}" if graph else "")
    return api.post(url, json.dumps(document), content_type="application/json")


@pytest.mark.parametrize(("build", "code"), OVER_LIMITS)
def test_create_save_and_import_refuse_the_same_manifests_with_the_same_code(
    api: APIClient, manifest: dict[str, Any], build: Any, code: str
) -> None:
    big = build(manifest)
    imported = _import(api, big)
    assert imported.status_code == 400 and imported.json()["issues"][0]["code"] == code
    created = api.post("/api/graphs/", {"manifest": big}, format="json")
    assert created.status_code == 400, created.json()
    assert created.json()["issues"][0]["code"] == code
    assert not Graph.objects.exists()

    assert api.post("/api/graphs/", {"manifest": manifest}, format="json").status_code == 201
    saved = api.post("/api/graphs/model-chainer/versions/", {"manifest": big}, format="json")
    assert saved.status_code == 400 and saved.json()["issues"][0]["code"] == code
    assert _import(api, big, graph="model-chainer").json()["issues"][0]["code"] == code
    assert GraphVersion.objects.count() == 1


def test_a_manifest_at_the_limits_is_accepted_by_every_way_in(
    api: APIClient, manifest: dict[str, Any]
) -> None:
    at_limit = _with_nodes(manifest, language.MAX_GRAPH_NODES)
    assert api.post("/api/graphs/", {"manifest": at_limit}, format="json").status_code == 201
    other = copy.deepcopy(at_limit)
    other["metadata"]["name"] = "imported"
    assert _import(api, other).status_code == 201
    version = GraphVersion.objects.get(graph__name="model-chainer")
    assert (version.node_count, version.step_count) == (language.MAX_GRAPH_NODES, 2)


def test_a_manifest_over_the_byte_limit_is_413_by_every_way_in(
    api: APIClient, manifest: dict[str, Any], settings: Any
) -> None:
    settings.STUDIO_MAX_MANIFEST_BYTES = 4_000
    big = copy.deepcopy(manifest)
    big["metadata"]["annotations"] = {"note": "x" * 5_000}
    assert _import(api, big).status_code == 413
    created = api.post("/api/graphs/", {"manifest": big}, format="json")
    assert created.status_code == 413 and created.json()["issues"][0]["code"] == "load.too-large"
    assert not Graph.objects.exists()


def test_list_entries_carry_a_summary_and_never_the_manifest(
    api: APIClient, manifest: dict[str, Any]
) -> None:
    manifest["spec"]["nodes"]["root"]["steps"].append({"name": "broken"})  # no target: an error
    assert (
        api.post("/api/graphs/", {"manifest": manifest, "message": "first"}, format="json").status_code == 201
    )
    with CaptureQueriesContext(connection) as queries:
        body = api.get("/api/graphs/").json()
    entry = body["results"][0]
    latest = entry["latest_version"]
    assert set(latest) == {
        "number",
        "spec_hash",
        "message",
        "author",
        "created_at",
        "valid",
        "node_count",
        "step_count",
        "issue_counts",
        "tests",
    }
    stored = GraphVersion.objects.get()
    errors = sum(1 for i in stored.issues if i["severity"] == "error")
    warnings = sum(1 for i in stored.issues if i["severity"] == "warning")
    assert errors >= 1
    assert (latest["number"], latest["valid"], latest["node_count"], latest["step_count"]) == (1, False, 1, 3)
    assert latest["issue_counts"] == {"error": errors, "warning": warnings}
    assert (latest["message"], latest["author"], latest["spec_hash"]) == ("first", "alice", stored.spec_hash)
    assert not any('"manifest"' in q["sql"] or '"issues"' in q["sql"] for q in queries.captured_queries)
    # The graph's own page still has the whole latest version.
    detail = api.get("/api/graphs/model-chainer/").json()["latest_version"]
    assert detail["manifest"]["spec"]["nodes"]["root"]["steps"][2] == {"name": "broken"}
