"""Validation and export for a KServe release, on the API."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from graphs import services as graph_services

pytestmark = pytest.mark.django_db

TIMED: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "timed"},
    "spec": {
        "routerTimeouts": {"serviceClient": 5},
        "nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceUrl": "http://a/"}]}},
    },
}


def test_validate_for_a_release_adds_its_errors_and_warnings(api: APIClient) -> None:
    newest = api.post("/api/validate/", {"manifest": TIMED}, format="json").json()
    assert newest["valid"] is True
    old = api.post("/api/validate/", {"manifest": TIMED, "kserve_version": "v0.15.1"}, format="json").json()
    assert old["valid"] is False
    assert [(i["code"], i["path"]) for i in old["issues"] if i["severity"] == "error"] == [
        ("release.unknown-field", "spec.routerTimeouts")
    ]
    bad = api.post("/api/validate/", {"manifest": TIMED, "kserve_version": "v9"}, format="json")
    assert bad.status_code == 400 and bad.json()["issues"][0]["path"] == "kserve_version"


def test_export_for_a_release_refuses_what_it_lacks_and_names_the_release(api: APIClient, user: Any) -> None:
    graph_services.graph_create(owner=user, manifest=TIMED)
    url = "/api/graphs/timed/versions/1/export/"
    assert "routerTimeouts" in yaml.safe_load(api.get(url).content)["spec"]
    refused = api.get(url, {"kserve_version": "v0.13.1"})
    assert refused.status_code == 422
    assert "KServe v0.13.1 does not have" in refused.json()["detail"]
    plain = copy.deepcopy(TIMED)
    del plain["spec"]["routerTimeouts"]
    plain["metadata"]["name"] = "plain"
    graph_services.graph_create(owner=user, manifest=plain)
    text = api.get("/api/graphs/plain/versions/1/export/", {"kserve_version": "v0.13.0"}).content.decode()
    assert "# For KServe v0.13.1 (also v0.13.0)." in text
