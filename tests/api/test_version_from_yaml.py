"""A new version from a YAML file: ``POST /api/graphs/{name}/versions/`` with
``Content-Type: application/yaml`` (the body is the manifest; ``?message=`` and ``?base_version=``
or ``If-Match``) answers as the JSON save does; YAML errors are pinned to line and column."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from graphs.models import AuditEvent, GraphVersion

pytestmark = pytest.mark.django_db

URL = "/api/graphs/model-chainer/versions/"


@pytest.fixture
def graph(api: APIClient, manifest: dict[str, Any]) -> dict[str, Any]:
    layout = {"nodes": {"root": {"x": 10, "y": 20}}}
    created = api.post("/api/graphs/", {"manifest": manifest, "layout": layout}, format="json")
    assert created.status_code == 201
    return manifest


def _changed(manifest: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].append({"name": "third", "serviceUrl": "http://m/3"})
    return changed


def post_yaml(api: APIClient, text: str, query: str = "", **headers: Any) -> Any:
    return api.generic("POST", URL + query, text, content_type="application/yaml", **headers)


def test_a_yaml_body_saves_a_new_version_like_the_json_save(api: APIClient, graph: Any, user: Any) -> None:
    changed = _changed(graph)
    response = post_yaml(api, yaml.safe_dump(changed), "?message=add+third", HTTP_IF_MATCH='"v1"')
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["number"], body["message"], body["parent"], body["author"]) == (2, "add third", 1, "alice")
    assert body["manifest"] == changed and body["valid"] is True
    assert response["ETag"] == '"v2"'
    # The canvas positions of the version it builds on are kept.
    assert body["layout"] == {"nodes": {"root": {"x": 10, "y": 20}}}
    assert AuditEvent.objects.filter(action="version.create", version_number=2).exists()


def test_the_same_yaml_again_returns_the_latest_version(api: APIClient, graph: Any) -> None:
    assert post_yaml(api, yaml.safe_dump(_changed(graph))).status_code == 201
    again = post_yaml(api, yaml.safe_dump(_changed(graph)))
    assert again.status_code == 200 and again.json()["number"] == 2
    assert GraphVersion.objects.count() == 2


def test_a_stale_base_is_409_by_query_or_if_match(api: APIClient, graph: Any) -> None:
    assert post_yaml(api, yaml.safe_dump(_changed(graph)), "?base_version=1").status_code == 201
    third = _changed(graph)
    third["spec"]["nodes"]["root"]["steps"][0]["name"] = "renamed"
    for query, headers in (("?base_version=1", {}), ("", {"HTTP_IF_MATCH": '"v1"'})):
        stale = post_yaml(api, yaml.safe_dump(third), query, **headers)
        assert stale.status_code == 409, (query, headers)
        assert stale.json()["latest_version"] == 2 and stale.json()["diff"] is not None
    assert GraphVersion.objects.count() == 2
    disagree = post_yaml(api, yaml.safe_dump(third), "?base_version=2", HTTP_IF_MATCH='"v1"')
    assert disagree.status_code == 400


def test_yaml_syntax_errors_are_pinned_to_line_and_column(api: APIClient, graph: Any) -> None:
    text = "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nmetadata:\n  name: [model-chainer\n"
    response = post_yaml(api, text)
    assert response.status_code == 400
    issue = response.json()["issues"][0]
    assert issue["line"] >= 4 and issue["column"] >= 1
    assert GraphVersion.objects.count() == 1


def test_kserve_errors_in_yaml_are_saved_invalid_with_their_lines(api: APIClient, graph: Any) -> None:
    broken = _changed(graph)
    broken["spec"]["nodes"]["root"]["routerType"] = "Fanout"
    response = post_yaml(api, yaml.safe_dump(broken, sort_keys=False))
    assert response.status_code == 201
    assert response.json()["valid"] is False
    assert any(i.get("line") for i in response.json()["issues"])


def test_a_yaml_save_refuses_what_the_json_save_refuses(
    api: APIClient, bob_api: APIClient, graph: Any
) -> None:
    renamed = _changed(graph)
    renamed["metadata"]["name"] = "another-name"
    assert post_yaml(api, yaml.safe_dump(renamed)).status_code == 400
    two = yaml.safe_dump(graph) + "---\n" + yaml.safe_dump(graph)
    assert post_yaml(api, two).status_code == 400
    assert post_yaml(api, "").status_code == 400
    assert post_yaml(api, yaml.safe_dump(_changed(graph)), "?base_version=x").status_code == 400
    assert post_yaml(bob_api, yaml.safe_dump(_changed(graph))).status_code == 403
    assert GraphVersion.objects.count() == 1
