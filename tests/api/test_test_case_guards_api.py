"""Test cases through the REST API: a costly ``matches`` regex is refused at save (400 pinned to
the expectation, naming the setting)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from execution.models import GraphCase
from graphs.models import Graph

pytestmark = pytest.mark.django_db

PETS = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "pets"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Switch",
                "steps": [
                    {"name": "cat", "serviceName": "cat", "condition": '[@this].#(animal=="cat")'},
                    {"name": "dog", "serviceName": "dog", "condition": '[@this].#(animal=="dog")'},
                ],
            }
        }
    },
}
CASE: dict[str, Any] = {
    "name": "cat",
    "request": {"payload": {"animal": "cat"}},
    "expectations": [{"status": 200}, {"path": "says", "matches": "^m"}],
}
URL = "/api/graphs/pets/tests/"
PATHOLOGICAL = "([ab]{1,100})" * 269 + "!"


@pytest.fixture
def graph(api: APIClient) -> Graph:
    response = api.post("/api/graphs/", {"manifest": PETS}, format="json")
    assert response.status_code == 201, response.data
    return Graph.objects.get(name="pets")


def with_pattern(pattern: str) -> dict[str, Any]:
    case = copy.deepcopy(CASE)
    case["expectations"][1]["matches"] = pattern
    return case


def test_a_costly_regex_is_refused_at_save_pinned_to_its_expectation(api: APIClient, graph: Graph) -> None:
    response = api.post(URL, with_pattern(PATHOLOGICAL), format="json")
    assert response.status_code == 400, response.data
    body = response.json()
    assert set(body) >= {"detail", "issues"}
    (issue,) = body["issues"]
    assert issue["code"] == "expectation.regex-cost"
    assert issue["expectation"] == 1
    assert issue["path"] == "expectations[1].matches"
    assert "GRAPH_TEST_REGEX_MAX_PROGRAM" in issue["message"]
    assert not GraphCase.objects.exists()


def test_a_normal_regex_is_saved(api: APIClient, graph: Graph) -> None:
    assert api.post(URL, CASE, format="json").status_code == 201


def test_the_bound_is_the_setting(api: APIClient, graph: Graph) -> None:
    with override_settings(GRAPH_TEST_REGEX_MAX_PROGRAM=3):
        response = api.post(URL, CASE, format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["code"] == "expectation.regex-cost"


def test_a_costly_regex_is_refused_on_update_and_import(api: APIClient, graph: Graph) -> None:
    created = api.post(URL, CASE, format="json").json()
    response = api.put(f"{URL}{created['id']}/", with_pattern(PATHOLOGICAL), format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["code"] == "expectation.regex-cost"
    text = (
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n  expectations:\n"
        f"  - {{path: says, matches: '{PATHOLOGICAL}'}}\n"
    )
    response = api.post(f"{URL}import/", text, content_type="application/yaml")
    assert response.status_code == 400, response.content
    issue = response.json()["issues"][0]
    assert issue["code"] == "expectation.regex-cost"
    assert issue["line"] == 6


# --- ETag and If-Match: a stale edit does not overwrite another editor's change ------------------


def test_get_put_and_post_carry_the_revision_as_etag(api: APIClient, graph: Graph) -> None:
    created = api.post(URL, CASE, format="json")
    assert created["ETag"] == '"r1"'
    assert created.json()["revision"] == 1
    url = f"{URL}{created.json()['id']}/"
    assert api.get(url)["ETag"] == '"r1"'
    updated = api.put(url, {**CASE, "description": "x"}, format="json", HTTP_IF_MATCH='"r1"')
    assert updated.status_code == 200, updated.data
    assert updated["ETag"] == '"r2"'
    assert api.get(url)["ETag"] == '"r2"'


def test_a_stale_put_is_refused_with_409_and_loses_nothing(api: APIClient, graph: Graph) -> None:
    url = f"{URL}{api.post(URL, CASE, format='json').json()['id']}/"
    theirs = {**CASE, "description": "theirs"}
    assert api.put(url, theirs, format="json", HTTP_IF_MATCH='"r1"').status_code == 200
    mine = {**CASE, "description": "mine"}
    response = api.put(url, mine, format="json", HTTP_IF_MATCH='"r1"')
    assert response.status_code == 409, response.data
    body = response.json()
    assert body["issues"][0]["code"] == "test_case.stale"
    assert (body["base_revision"], body["revision"]) == (1, 2)
    assert body["current"]["description"] == "theirs"
    assert body["current"]["document"]["description"] == "theirs"
    assert api.get(url).json()["description"] == "theirs"
    # saving again on top of their revision is accepted
    again = api.put(url, mine, format="json", HTTP_IF_MATCH=f'"r{body["revision"]}"')
    assert again.status_code == 200
    assert again.json()["description"] == "mine"


def test_a_put_without_if_match_still_overwrites_and_counts(api: APIClient, graph: Graph) -> None:
    url = f"{URL}{api.post(URL, CASE, format='json').json()['id']}/"
    assert api.put(url, CASE, format="json")["ETag"] == '"r2"'
    assert api.put(url, CASE, format="json", HTTP_IF_MATCH="*")["ETag"] == '"r3"'


def test_a_malformed_if_match_is_400(api: APIClient, graph: Graph) -> None:
    url = f"{URL}{api.post(URL, CASE, format='json').json()['id']}/"
    response = api.put(url, CASE, format="json", HTTP_IF_MATCH='"v1"')
    assert response.status_code == 400
    assert "r3" in response.json()["detail"]


def test_an_import_that_changes_a_case_makes_an_open_edit_stale(api: APIClient, graph: Graph) -> None:
    url = f"{URL}{api.post(URL, CASE, format='json').json()['id']}/"
    text = "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: cat\n  description: imported\n  expectations:\n  - status: 200\n"
    assert api.post(f"{URL}import/", text, content_type="application/yaml").status_code == 201
    assert api.get(url)["ETag"] == '"r2"'
    assert api.put(url, CASE, format="json", HTTP_IF_MATCH='"r1"').status_code == 409


# --- secret headers: an environment's secret header names apply to cases as to runs -------------


def secret_env(user: Any, name: str = "vault") -> Any:
    from execution.models import Environment

    return Environment.objects.create(name=name, owner=user, secret_headers=["x-request-id"])


def with_headers(headers: dict[str, str], **extra: Any) -> dict[str, Any]:
    case = copy.deepcopy(CASE)
    case["request"]["headers"] = headers
    case.update(extra)
    return case


def test_a_header_an_environment_marks_secret_is_stored_and_shown_redacted(
    api: APIClient, graph: Graph, user: Any
) -> None:
    secret_env(user)
    response = api.post(URL, with_headers({"X-Request-Id": "tenant-42", "Accept": "a/b"}), format="json")
    assert response.status_code == 201, response.data
    stored = GraphCase.objects.get().document["request"]["headers"]
    assert stored == {"X-Request-Id": "***", "Accept": "a/b"}
    assert "tenant-42" not in response.content.decode()
    export = api.get(f"{URL}export/")
    assert "tenant-42" not in export.content.decode()


def test_a_header_marked_secret_after_the_case_was_saved_is_never_shown_or_exported_in_clear(
    api: APIClient, graph: Graph, user: Any
) -> None:
    created = api.post(URL, with_headers({"X-Request-Id": "tenant-42"}), format="json").json()
    assert created["document"]["request"]["headers"] == {"X-Request-Id": "tenant-42"}  # harmless so far
    secret_env(user)
    assert "tenant-42" not in api.get(f"{URL}export/").content.decode()
    assert "tenant-42" not in api.get(f"{URL}{created['id']}/").content.decode()
    assert "tenant-42" not in api.get(URL).content.decode()


def test_an_import_redacts_what_an_environment_marks_secret(api: APIClient, graph: Graph, user: Any) -> None:
    secret_env(user)
    text = (
        "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: c\n"
        "  request: {payload: {}, headers: {X-Request-Id: tenant-42, Authorization: Bearer s3cret}}\n"
        "  expectations:\n  - status: 200\n"
    )
    assert api.post(f"{URL}import/", text, content_type="application/yaml").status_code == 201
    stored = GraphCase.objects.get().document["request"]["headers"]
    assert stored == {"X-Request-Id": "***", "Authorization": "Bearer ***"}
