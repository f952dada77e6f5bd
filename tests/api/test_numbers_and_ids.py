"""Numbers and ids in paths, query strings and headers that the database cannot hold, or that are
not numbers at all, are answered 404 (paths) or 400 (parameters), never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from graphs.models import GraphVersion

pytestmark = pytest.mark.django_db

HUGE = "9" * 25  # beyond a signed 64-bit column: OverflowError in the database driver
TOO_BIG = str(2**63)
SUPERSCRIPT = "\u00b2"  # "²": str.isdigit() is True, int() raises ValueError


@pytest.fixture
def graph(api: APIClient, manifest: dict[str, Any]) -> None:
    assert api.post("/api/graphs/", {"manifest": manifest}, format="json").status_code == 201


@pytest.fixture
def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_editor_page_of_a_graph_that_does_not_exist_is_a_404(browser: Client) -> None:
    response = browser.get("/graphs/no-such-graph/")
    assert response.status_code == 404


@pytest.mark.parametrize("version", [HUGE, SUPERSCRIPT, "-1", "abc", "2"])
def test_the_editor_page_ignores_a_version_that_is_not_a_version_number(
    browser: Client, graph: None, version: str
) -> None:
    response = browser.get("/graphs/model-chainer/", {"version": version})
    assert response.status_code == 200
    expected = '"version": 2' if version == "2" else '"version": null'
    assert expected in response.content.decode()


@pytest.mark.parametrize("number", [HUGE, TOO_BIG])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/graphs/model-chainer/versions/{n}/"),
        ("post", "/api/graphs/model-chainer/versions/{n}/rollback/"),
        ("get", "/api/graphs/model-chainer/versions/{n}/export/"),
        ("get", "/api/environments/{n}/"),
        ("patch", "/api/environments/{n}/"),
        ("delete", "/api/environments/{n}/"),
    ],
)
def test_a_path_number_too_large_for_the_database_is_a_404(
    api: APIClient, graph: None, method: str, path: str, number: str
) -> None:
    response = getattr(api, method)(path.format(n=number), {}, format="json")
    assert response.status_code == 404
    assert GraphVersion.objects.count() == 1


@pytest.mark.parametrize("run_id", ["not-a-uuid", "1" * 40, "00000000-0000-0000-0000-00000000000g"])
@pytest.mark.parametrize("suffix", ["", "rerun/", "cancel/", "events/"])
def test_a_run_id_that_is_not_a_uuid_is_a_404(api: APIClient, run_id: str, suffix: str) -> None:
    method = api.get if suffix in ("", "events/") else api.post
    assert method(f"/api/runs/{run_id}/{suffix}").status_code == 404


@pytest.mark.parametrize(
    "query",
    [f"from={HUGE}&to=1", f"from=1&to={TOO_BIG}", f"from={SUPERSCRIPT}&to=1", "from=-1&to=1"],
)
def test_diff_version_numbers_that_are_not_numbers_are_a_400(api: APIClient, graph: None, query: str) -> None:
    response = api.get(f"/api/graphs/model-chainer/diff/?{query}")
    assert response.status_code == 400
    assert response.json()["issues"][0]["code"] == "request.invalid-number"


@pytest.mark.parametrize("query", [f"version={HUGE}", f"version={SUPERSCRIPT}", f"environment={HUGE}"])
def test_run_filters_that_are_not_numbers_are_a_400(api: APIClient, graph: None, query: str) -> None:
    response = api.get(f"/api/graphs/model-chainer/runs/?{query}")
    assert response.status_code == 400


@pytest.mark.parametrize("if_match", [f'"v{HUGE}"', f'"v{SUPERSCRIPT}"'])
def test_a_save_precondition_the_database_cannot_hold_is_a_400(
    api: APIClient, graph: None, manifest: dict[str, Any], if_match: str
) -> None:
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    url = "/api/graphs/model-chainer/versions/"
    assert api.post(url, {"manifest": manifest}, format="json", HTTP_IF_MATCH=if_match).status_code == 400
    body = {"manifest": manifest, "base_version": int(HUGE)}
    assert api.post(url, body, format="json").status_code == 400
    assert GraphVersion.objects.count() == 1


@pytest.mark.parametrize("page", [HUGE, SUPERSCRIPT])
@pytest.mark.parametrize(
    "path",
    [
        "/api/graphs/",
        "/api/graphs/model-chainer/versions/",
        "/api/graphs/model-chainer/runs/",
        "/api/graphs/model-chainer/audit/",
        "/api/environments/",
    ],
)
def test_a_page_number_that_is_not_a_page_is_a_404(api: APIClient, graph: None, path: str, page: str) -> None:
    assert api.get(path, {"page": page}).status_code == 404
