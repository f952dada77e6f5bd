"""GET /api/services/: the serviceNames the studio knows, for the palette of a user who has no
service map (only the demo's ``local`` environment) and a new graph."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml
from openapischema import json_schema
from rest_framework.test import APIClient

from execution import selectors
from execution.services import environments
from graphs import services

pytestmark = pytest.mark.django_db


def _save(user: Any, name: str, *service_names: str) -> Any:
    """A graph ``name`` whose root Sequence calls ``service_names`` in turn."""
    steps = [{"name": f"s{i}", "serviceName": service} for i, service in enumerate(service_names)]
    manifest = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name},
        "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": steps}}},
    }
    return services.graph_create(owner=user, manifest=manifest)


def _catalog(client: APIClient) -> dict[str, Any]:
    response = client.get("/api/services/")
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_signed_out_is_refused(anon: APIClient) -> None:
    assert anon.get("/api/services/").status_code in (401, 403)


def test_the_latest_versions_services_most_used_first(
    api: APIClient, user: Any, other_user: Any, manifest: dict[str, Any]
) -> None:
    _save(user, "one", "tokenizer", "classifier")
    _save(other_user, "two", "classifier", "ranker")
    changed = _save(user, "three", "retired", "classifier")
    doc = copy.deepcopy(changed.latest_version.manifest)
    doc["spec"]["nodes"]["root"]["steps"][0]["serviceName"] = "tokenizer"
    services.graph_version_create(
        graph=changed, manifest=doc, layout={}, author=user, message="", base_version=None
    )
    archived = _save(user, "gone", "archived-only", "classifier")
    services.graph_archive(graph=archived, actor=user)

    answer = _catalog(api)

    assert answer == {
        "services": [
            {"name": "classifier", "graph_count": 3, "environments": []},
            {"name": "tokenizer", "graph_count": 2, "environments": []},
            {"name": "ranker", "graph_count": 1, "environments": []},
        ],
        "truncated": False,
    }


def test_environment_maps_are_listed_only_for_those_who_may_use_them(
    api: APIClient, bob_api: APIClient, user: Any, other_user: Any
) -> None:
    _save(user, "one", "classifier")
    environments.environment_create(
        owner=user, name="alice-staging", service_urls={"classifier": "http://c", "secret-model": "http://s"}
    )
    environments.environment_create(
        owner=other_user, name="bob-private", service_urls={"bobs-model": "http://b"}
    )

    alice = _catalog(api)["services"]
    bob = _catalog(bob_api)["services"]

    assert alice == [
        {"name": "classifier", "graph_count": 1, "environments": ["alice-staging"]},
        {"name": "secret-model", "graph_count": 0, "environments": ["alice-staging"]},
    ]
    # Another user's private environment is not disclosed; the graphs, readable by all, are.
    assert bob == [
        {"name": "classifier", "graph_count": 1, "environments": []},
        {"name": "bobs-model", "graph_count": 0, "environments": ["bob-private"]},
    ]


def test_a_fixed_number_of_queries_whatever_the_number_of_graphs(
    api: APIClient, user: Any, django_assert_max_num_queries: Any
) -> None:
    _save(user, "first", "a", "b")
    with django_assert_max_num_queries(3) as few:  # the token, the graphs, the environments
        _catalog(api)
    for n in range(30):
        _save(user, f"graph-{n}", f"model-{n}", "shared-model")
        environments.environment_create(owner=user, name=f"env-{n}", service_urls={f"mapped-{n}": "http://m"})
    with django_assert_max_num_queries(len(few.captured_queries)):
        services_ = _catalog(api)["services"]
    assert services_[0] == {"name": "shared-model", "graph_count": 30, "environments": []}
    assert len(services_) == 1 + 2 + 30 + 30


def test_capped_at_the_limit_most_used_kept(user: Any) -> None:
    _save(user, "one", "common", "rare-b")
    _save(user, "two", "common", "rare-a")

    capped = selectors.service_catalog(user=user, limit=2)

    assert [entry.name for entry in capped.services] == ["common", "rare-a"]
    assert capped.truncated
    assert not selectors.service_catalog(user=user, limit=3).truncated


def test_the_answer_matches_its_schema_component(api: APIClient, user: Any) -> None:
    _save(user, "one", "classifier")
    schema = yaml.safe_load(api.get("/api/schema/?format=json").content)
    components = dict(json_schema(schema["components"]))
    document = {"$ref": "#/components/schemas/ServiceCatalogOutput", "components": components}
    jsonschema.Draft7Validator(document).validate(_catalog(api))
    operation = schema["paths"]["/api/services/"]["get"]
    assert operation["operationId"] == "services_list"
    assert "example" in str(operation["responses"]["200"]["content"]["application/json"]).lower()
