"""The upgrade report of a version between two KServe releases (the rules), and suite runs of one
version under two releases side by side (what the rules do not tell)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from execution.models import Run
from execution.services import environments
from execution.tasks.runs import run_graph_task
from graphs import services as graph_services
from tests.conftest import client_for
from tests.stepserver import Reply, StepServer

pytestmark = pytest.mark.django_db

GATED: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "gated"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "detect", "serviceName": "detect"},
                    {"name": "classify", "serviceName": "classify", "condition": 'label=="dog"'},
                ],
            },
            "split": {
                "routerType": "Splitter",
                "steps": [
                    {"name": "a", "serviceName": "detect", "weight": 50},
                    {"name": "b", "serviceName": "detect", "weight": 50},
                ],
            },
        }
    },
}
CASES = """\
kind: InferenceGraphTest
graph: gated
cases:
- name: a cat stops after detect
  request: {payload: {image: 1}}
  expectations:
  - status: 200
  - {path: label, equals: cat}
"""


@pytest.fixture
def owner_api(user: Any) -> APIClient:
    graph_services.graph_create(owner=user, manifest=GATED)
    return client_for(user)


def test_the_report_names_each_change_for_this_version(owner_api: APIClient) -> None:
    report = owner_api.get(
        "/api/graphs/gated/versions/1/upgrade-report/", {"from": "v0.12.0", "to": "v0.19.0"}
    )
    assert report.status_code == 200, report.json()
    body = report.json()
    assert (body["from"]["name"], body["to"]["name"], body["same_router"]) == ("v0.12.1", "master", False)
    assert body["releases"] == ["v0.13.1", "v0.14.1", "v0.15.2", "v0.16.0", "master"]
    by_code = {c["code"]: c for c in body["changes"]}
    assert by_code["unmet-condition-status"]["release"] == "v0.15.1"
    assert by_code["unmet-condition-status"]["step_name"] == "classify"
    assert by_code["unmet-condition-status"]["message"].startswith(
        'step classify of Sequence "root": when its condition is not met the Sequence answers 200 instead of 500'
    )
    assert by_code["readyz"]["release"] == "v0.15.0"
    # v0.12 -> master: this Splitter never drops; in between it did (v0.13 to v0.18).
    middle = owner_api.get(
        "/api/graphs/gated/versions/latest/upgrade-report/", {"from": "v0.12.1", "to": "v0.17.0"}
    )
    split = next(c for c in middle.json()["changes"] if c["code"] == "splitter-no-route")
    assert "drops about 1 in 101 requests on v0.13 to v0.18" in split["message"] and split["node"] == "split"
    assert [i["code"] for i in middle.json()["issues"]["v0.16.0"]] == ["release.splitter-drops"]
    same = owner_api.get("/api/graphs/gated/versions/1/upgrade-report/", {"from": "v0.17.1", "to": "v0.18.0"})
    assert same.json()["same_router"] is True and same.json()["changes"] == []


def test_the_report_refuses_an_unknown_or_missing_release(owner_api: APIClient) -> None:
    missing = owner_api.get("/api/graphs/gated/versions/1/upgrade-report/")
    assert missing.status_code == 400 and missing.json()["issues"][0]["path"] == "from"
    unknown = owner_api.get("/api/graphs/gated/versions/1/upgrade-report/", {"from": "v0.9"})
    assert unknown.status_code == 400 and unknown.json()["issues"][0]["path"] == "kserve_version"


@pytest.mark.django_db(transaction=True)
def test_one_version_under_two_releases_side_by_side(user: Any, enqueued: list[dict[str, Any]]) -> None:
    with StepServer() as steps:
        steps.route("/detect", Reply(json={"label": "cat"}))
        steps.route("/classify", Reply(json={"breed": "?"}))
        graph_services.graph_create(owner=user, manifest=GATED)
        api = client_for(user)
        environments.environment_create(
            owner=user,
            name="steps",
            service_urls={"detect": steps.url("/detect"), "classify": steps.url("/classify")},
            allow_loopback=True,
        )
        imported = api.post("/api/graphs/gated/tests/import/", CASES, content_type="application/yaml")
        assert imported.status_code == 201, imported.json()
        started = api.post(
            "/api/graphs/gated/suite-runs/compare/",
            {
                "a": 1,
                "b": 1,
                "environment": "steps",
                "kserve_version_a": "v0.14.0",
                "kserve_version_b": "master",
            },
            format="json",
        )
        assert started.status_code == 202, started.json()
        for item in list(enqueued):
            run_graph_task.apply(args=item["args"])
        compared = api.get(started.json()["compare_url"])
        assert compared.status_code == 200, compared.json()
    body = compared.json()
    assert (body["a"]["kserve_version"], body["b"]["kserve_version"]) == ("v0.14.1", "master")
    assert (body["a"]["status"], body["b"]["status"]) == ("failed", "passed")
    assert {run.config["kserve_version"] for run in Run.objects.all()} == {"v0.14.1", "master"}
    bad = api.post(
        "/api/graphs/gated/suite-runs/compare/", {"a": 1, "b": 1, "kserve_version_b": "v1"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["issues"][0]["path"] == "kserve_version_b"
    assert yaml.safe_load(CASES)["graph"] == "gated"
