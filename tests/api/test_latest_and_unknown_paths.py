"""``latest`` stands for the newest version number in every URL that takes one (detail, export,
rollback), and in the diff's ``from``/``to``; every path under ``/api/`` that no route matches
answers the API's JSON error shape with 404, with DEBUG on as well as off."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from graphs.models import GraphVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_versions(api: APIClient, manifest: dict[str, Any]) -> dict[str, Any]:
    assert api.post("/api/graphs/", {"manifest": manifest}, format="json").status_code == 201
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].append({"name": "third", "serviceUrl": "http://m/3"})
    saved = api.post("/api/graphs/model-chainer/versions/", {"manifest": changed}, format="json")
    assert saved.status_code == 201 and saved.json()["number"] == 2
    return changed


def test_latest_is_the_newest_version_in_the_version_url(api: APIClient, two_versions: Any) -> None:
    response = api.get("/api/graphs/model-chainer/versions/latest/")
    assert response.status_code == 200
    assert response.json()["number"] == 2
    assert response.json()["manifest"] == two_versions


def test_latest_exports(api: APIClient, two_versions: Any) -> None:
    response = api.get("/api/graphs/model-chainer/versions/latest/export/?format=yaml")
    assert response.status_code == 200, response.content
    assert "third" in response.content.decode()
    assert 'filename="model-chainer-v2.yaml"' in response["Content-Disposition"]
    posted = api.post("/api/graphs/model-chainer/versions/latest/export/", {"format": "json"}, format="json")
    assert posted.status_code == 200 and posted.json()["spec"] == two_versions["spec"]


def test_rollback_to_latest_is_an_unchanged_save(api: APIClient, two_versions: Any) -> None:
    response = api.post("/api/graphs/model-chainer/versions/latest/rollback/")
    assert response.status_code == 200  # the same manifest and layout: the existing latest version
    assert response.json()["number"] == 2
    assert GraphVersion.objects.count() == 2


def test_the_diff_takes_latest(api: APIClient, two_versions: Any) -> None:
    response = api.get("/api/graphs/model-chainer/diff/?from=1&to=latest")
    assert response.status_code == 200, response.content
    assert (response.json()["from"], response.json()["to"]) == (1, 2)


def test_latest_of_an_unknown_graph_is_404(api: APIClient) -> None:
    response = api.get("/api/graphs/nope/versions/latest/")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]


def test_other_words_are_not_version_numbers(api: APIClient, two_versions: Any) -> None:
    for word in ("newest", "LATEST", "latest2", "-1"):
        response = api.get(f"/api/graphs/model-chainer/versions/{word}/")
        assert response.status_code == 404, word
        assert "detail" in response.json()


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    "path",
    [
        "/api/nothing-here/",
        "/api/graphs/model-chainer/versions/2/nothing/",
        "/api/graphs/model-chainer/versions/newest/export/",
        "/api/tokens/abc/",
        "/api/",
    ],
)
def test_an_unmatched_api_path_is_a_json_404(api: APIClient, path: str, debug: bool) -> None:
    with override_settings(DEBUG=debug):
        for method in ("get", "post", "delete"):
            response = getattr(api, method)(path)
            assert response.status_code == 404, (method, path)
            assert response["Content-Type"].startswith("application/json"), (method, path)
            assert path in response.json()["detail"]


@pytest.mark.parametrize("debug", [False, True])
def test_a_known_path_without_its_slash_still_redirects_a_read(api: APIClient, debug: bool) -> None:
    with override_settings(DEBUG=debug):
        response = api.get("/api/graphs?search=x")
        assert response.status_code == 301
        assert response["Location"] == "/api/graphs/?search=x"
        posted = api.post("/api/graphs", {}, format="json")
        assert posted.status_code == 404
        assert "/api/graphs/" in posted.json()["detail"]  # says where it would have gone


@pytest.mark.usefixtures("quick_run_settings", "enqueued", "local_env")
def test_a_run_of_latest_runs_the_newest_version(api: APIClient, two_versions: Any) -> None:
    response = api.post(
        "/api/graphs/model-chainer/runs/", {"version": "latest", "payload": {}}, format="json"
    )
    assert response.status_code == 202, response.content
    assert response.json()["version"] == 2
    refused = api.post("/api/graphs/model-chainer/runs/", {"version": "newest", "payload": {}}, format="json")
    assert refused.status_code == 400
    assert refused.json()["issues"][0]["path"] == "version"


@pytest.mark.usefixtures("quick_run_settings", "enqueued", "local_env")
def test_a_suite_run_takes_latest(api: APIClient, two_versions: Any) -> None:
    # The graph has no test cases: "latest" passes the version check and meets the cases' 409.
    response = api.post("/api/graphs/model-chainer/suite-runs/", {"version": "latest"}, format="json")
    assert response.status_code == 409, response.content
    refused = api.post("/api/graphs/model-chainer/suite-runs/", {"version": "newest"}, format="json")
    assert refused.status_code == 400
