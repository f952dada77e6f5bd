"""The OpenAPI schema documents every operation: what it does, its errors, an example request."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml
from openapischema import json_schema
from rest_framework.test import APIClient

from graphs.language.schema import OPENAPI_SCHEMA

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def schema(api: APIClient) -> dict[str, Any]:
    response = api.get("/api/schema/?format=json")
    assert response.status_code == 200
    return dict(yaml.safe_load(response.content))


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def validator(schema: dict[str, Any], target: dict[str, Any]) -> jsonschema.Draft7Validator:
    """A validator of ``target`` that resolves the document's ``#/components/...`` references."""
    registry_doc = {**copy.deepcopy(target), "components": json_schema(schema["components"])}
    return jsonschema.Draft7Validator(registry_doc)


def test_every_operation_says_what_it_does(schema: dict[str, Any]) -> None:
    bare = [f"{m.upper()} {p}" for p, m, op in operations(schema) if len(op.get("description", "")) < 30]
    assert bare == []


def test_every_operation_has_a_summary_and_a_declared_tag(schema: dict[str, Any]) -> None:
    """Swagger lists operations by tag and shows each one's summary: none is bare, every tag is
    declared with a description, and the summaries are short and distinct."""
    declared = {tag["name"]: tag.get("description", "") for tag in schema.get("tags", [])}
    assert declared and all(declared.values()), declared
    bare = [
        f"{m.upper()} {p}"
        for p, m, op in operations(schema)
        if not op.get("summary") or not op.get("tags") or not set(op["tags"]) <= set(declared)
    ]
    assert bare == []
    summaries = [op["summary"] for _, _, op in operations(schema)]
    assert len(set(summaries)) == len(summaries), sorted(s for s in summaries if summaries.count(s) > 1)
    assert all(len(s) <= 80 and not s.endswith(".") for s in summaries)
    used = {tag for _, _, op in operations(schema) for tag in op["tags"]}
    assert used == set(declared)  # no tag without operations
    assert len(used) >= 8  # grouped by topic, not one tag per URL prefix


def test_every_operation_documents_its_error_answers_with_the_one_error_shape(schema: dict[str, Any]) -> None:
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        expected = {"401", "403"} | ({"404"} if "{" in path else set())
        assert expected <= set(responses), f"{method.upper()} {path}: {sorted(responses)}"
        for code, response in responses.items():
            if code.startswith("4") or code.startswith("5"):
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref in ("#/components/schemas/Error", "#/components/schemas/Conflict"), (path, code)
    versions = schema["paths"]["/api/graphs/{name}/versions/"]["post"]["responses"]
    assert {"409", "413"} <= set(versions)
    export = schema["paths"]["/api/graphs/{name}/versions/{number}/export/"]["get"]["responses"]
    assert "422" in export


def test_every_request_body_has_an_example_that_fits_its_schema(schema: dict[str, Any]) -> None:
    for path, method, operation in operations(schema):
        for content_type, media in operation.get("requestBody", {}).get("content", {}).items():
            examples = media.get("examples")
            assert examples, f"{method.upper()} {path} ({content_type}) has no example"
            if content_type == "application/json":
                for example in examples.values():
                    validator(schema, media["schema"]).validate(example["value"])


def test_manifest_fields_are_the_inference_graph_schema(schema: dict[str, Any]) -> None:
    component = dict(schema["components"]["schemas"]["InferenceGraph"])
    component.pop("description")
    assert component == {k: v for k, v in OPENAPI_SCHEMA.items() if k != "description"}
    for name in (
        "GraphCreateInputRequest",
        "VersionSaveInputRequest",
        "ValidateInputRequest",
        "VersionOutput",
    ):
        manifest = schema["components"]["schemas"][name]["properties"]["manifest"]
        assert {"$ref": "#/components/schemas/InferenceGraph"} in manifest["anyOf"], name


def test_a_stale_save_answers_the_documented_conflict_shape(
    api: APIClient, schema: dict[str, Any], manifest: dict[str, Any]
) -> None:
    api.post("/api/graphs/", {"manifest": manifest}, format="json")
    name = manifest["metadata"]["name"]
    changed = copy.deepcopy(manifest)
    changed["metadata"]["namespace"] = "elsewhere"
    assert api.post(f"/api/graphs/{name}/versions/", {"manifest": changed}, format="json").status_code == 201
    stale = api.post(
        f"/api/graphs/{name}/versions/", {"manifest": manifest, "base_version": 1}, format="json"
    )
    assert stale.status_code == 409
    conflict = {"$ref": "#/components/schemas/Conflict"}
    validator(schema, conflict).validate(stale.json())
    assert stale.json()["latest_version"] == 2


def test_an_api_url_no_route_matches_answers_the_error_shape(api: APIClient) -> None:
    response = api.get("/api/environments/%C2%84/")
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    assert "detail" in response.json()
