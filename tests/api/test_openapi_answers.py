"""The schema's answer components say what the answers really carry: the frontend's types are
generated from them (scripts/api_types.sh), so a field the schema calls always present must be in
every answer, with the type it names, including the JSON columns config/openapi.py describes."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml
from openapischema import json_schema
from rest_framework.test import APIClient

from execution.models import Run, RunStep
from graphs.models import Graph

pytestmark = pytest.mark.django_db


@pytest.fixture
def components(api: APIClient) -> dict[str, Any]:
    response = api.get("/api/schema/?format=json")
    assert response.status_code == 200
    return dict(json_schema(yaml.safe_load(response.content)["components"]))


def check(components: dict[str, Any], name: str, answer: Any) -> None:
    document = {"$ref": f"#/components/schemas/{name}", "components": components}
    jsonschema.Draft7Validator(document).validate(answer)


def test_graph_and_version_answers_carry_every_field_of_their_components(
    api: APIClient, components: dict[str, Any], manifest: dict[str, Any]
) -> None:
    assert (
        api.post("/api/graphs/", {"manifest": manifest, "message": "first"}, format="json").status_code == 201
    )
    name = manifest["metadata"]["name"]
    changed = copy.deepcopy(manifest)
    changed["metadata"]["namespace"] = "elsewhere"
    assert api.post(f"/api/graphs/{name}/versions/", {"manifest": changed}, format="json").status_code == 201

    check(components, "GraphOutput", api.get(f"/api/graphs/{name}/").json())
    check(components, "VersionOutput", api.get(f"/api/graphs/{name}/versions/2/").json())
    check(components, "PaginatedGraphListItemList", api.get("/api/graphs/").json())
    check(components, "PaginatedVersionSummaryList", api.get(f"/api/graphs/{name}/versions/").json())
    stale = api.post(
        f"/api/graphs/{name}/versions/", {"manifest": manifest, "base_version": 1}, format="json"
    )
    assert stale.status_code == 409
    check(components, "Conflict", stale.json())
    imported = api.post(
        f"/api/graphs/import/?graph={name}", yaml.safe_dump(manifest), content_type="application/yaml"
    )
    assert imported.status_code == 201, imported.content
    check(components, "ImportResult", imported.json())


def test_environment_answers_carry_their_lists_and_maps_as_the_schema_says(
    api: APIClient, components: dict[str, Any]
) -> None:
    created = api.post(
        "/api/environments/",
        {
            "name": "staging",
            "service_urls": {"detector": "http://detector.staging.internal/v1/models/d:predict"},
            "propagate_headers": ["^X-Request-Id$"],
            "allow_hosts": ["*.staging.internal"],
            "allow_networks": ["10.0.0.0/8"],
            "secret_headers": ["x-api-key"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    check(components, "EnvironmentOutput", created.json())
    check(components, "PaginatedEnvironmentOutputList", api.get("/api/environments/").json())


def test_run_answers_carry_environment_bodies_headers_and_decisions_as_the_schema_says(
    api: APIClient, components: dict[str, Any], manifest: dict[str, Any], user: Any
) -> None:
    assert api.post("/api/graphs/", {"manifest": manifest}, format="json").status_code == 201
    graph = Graph.objects.get(name=manifest["metadata"]["name"])
    assert graph.latest_version is not None
    run = Run.objects.create(
        graph=graph,
        version=graph.latest_version,
        environment_name="gone",
        request_body='{"instances": [1]}',
        request_headers={"X-Request-Id": "r-1", "Authorization": "***"},
        status=Run.Status.SUCCEEDED,
        response_status=200,
        response_content_type="application/json",
        response_body='{"predictions": [2]}',
        response_size=20,
        seed=7,
        created_by=user,
    )
    view = {"body": "{}", "encoding": "utf-8", "size": 2, "truncated": False}
    RunStep.objects.create(
        run=run,
        call_id="root/0",
        node="root",
        step_index=0,
        kind="http",
        request_headers=[["X-Request-Id", "r-1"], ["Authorization", "***"]],
        request=view,
        response={**view, "body": "AAE=", "encoding": "base64"},
        status_code=200,
        outcome=RunStep.Outcome.OK,
        condition={"condition": "instances", "matches": True},
        route={"router": "Switch", "chosen": 0},
    )
    RunStep.objects.create(run=run, call_id="root/1", node="root", step_index=1, condition="instances")

    check(components, "RunOutput", api.get(f"/api/runs/{run.pk}/").json())
    check(components, "PaginatedRunSummaryList", api.get(f"/api/graphs/{graph.name}/runs/").json())
