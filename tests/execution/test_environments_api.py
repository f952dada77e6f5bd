"""The environments API: any logged-in user reads; the owner or staff writes."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.models import Environment

pytestmark = pytest.mark.django_db

STAGING = {
    "name": "staging",
    "service_urls": {"sklearn-iris": "http://10.0.0.5/v1/models/sklearn-iris:predict"},
    "propagate_headers": ["^X-Request-Id$"],
    "step_timeout": 5,
    "deadline": 20,
    "allow_networks": ["10.0.0.0/8"],
}


def test_anonymous_requests_are_refused(anon: APIClient, local_env: Environment) -> None:
    for method, url in [
        ("get", "/api/environments/"),
        ("post", "/api/environments/"),
        ("get", f"/api/environments/{local_env.pk}/"),
        ("patch", f"/api/environments/{local_env.pk}/"),
        ("delete", f"/api/environments/{local_env.pk}/"),
    ]:
        assert getattr(anon, method)(url, {}, format="json").status_code in (401, 403), (method, url)
    assert Environment.objects.count() == 1


def test_create_uses_kserve_defaults_and_records_the_owner(api: APIClient) -> None:
    response = api.post("/api/environments/", STAGING, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["owner"] == "alice"
    assert body["url_template"] == "http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict"
    assert body["allow_networks"] == ["10.0.0.0/8"] and body["allow_loopback"] is False
    assert {
        "id",
        "created_at",
        "updated_at",
        "service_urls",
        "propagate_headers",
        "step_timeout",
        "deadline",
        "allow_hosts",
        "allow_private",
    } <= set(body)


def test_a_taken_name_and_bad_fields_are_refused_with_issues(api: APIClient) -> None:
    assert api.post("/api/environments/", STAGING, format="json").status_code == 201
    again = api.post("/api/environments/", STAGING, format="json")
    assert again.status_code == 400 and again.json()["issues"][0]["code"] == "environment.name-taken"
    bad = api.post(
        "/api/environments/",
        {
            "name": "bad",
            "propagate_headers": ["("],
            "allow_networks": ["not-a-cidr"],
            "service_urls": {"a": "ftp://x"},
            "deadline": 100000,
        },
        format="json",
    )
    assert bad.status_code == 400
    paths = {issue["path"] for issue in bad.json()["issues"]}
    assert {"propagate_headers[0]", "allow_networks[0]", "service_urls.a", "deadline"} <= paths
    assert not Environment.objects.filter(name="bad").exists()


def test_secret_headers_are_header_names(api: APIClient) -> None:
    """An environment may mark more headers secret; each must be a header name (lower-cased)."""
    good = api.post(
        "/api/environments/", {**STAGING, "secret_headers": ["X-Tenant", "x-request-id"]}, format="json"
    )
    assert good.status_code == 201, good.json()
    assert good.json()["secret_headers"] == ["x-tenant", "x-request-id"]
    bad = api.post(
        "/api/environments/", {**STAGING, "name": "bad", "secret_headers": ["ok", "no spaces"]}, format="json"
    )
    assert bad.status_code == 400
    assert {issue["path"] for issue in bad.json()["issues"]} == {"secret_headers[1]"}
    assert not Environment.objects.filter(name="bad").exists()


def test_everyone_reads_but_only_the_owner_or_staff_writes(
    api: APIClient, bob_api: APIClient, other_user: Any
) -> None:
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    assert bob_api.get("/api/environments/").json()["count"] == 1
    assert bob_api.get(f"/api/environments/{pk}/").json()["name"] == "staging"
    assert bob_api.patch(f"/api/environments/{pk}/", {"deadline": 5}, format="json").status_code == 403
    assert bob_api.delete(f"/api/environments/{pk}/").status_code == 403
    assert Environment.objects.get(pk=pk).deadline == 20
    other_user.is_staff = True
    other_user.save()
    assert bob_api.patch(f"/api/environments/{pk}/", {"deadline": 5}, format="json").status_code == 200
    assert Environment.objects.get(pk=pk).deadline == 5


def test_owner_updates_and_deletes(api: APIClient) -> None:
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    response = api.patch(
        f"/api/environments/{pk}/", {"allow_loopback": True, "propagate_headers": ["^X-"]}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["allow_loopback"] is True and response.json()["step_timeout"] == 5
    assert api.patch(f"/api/environments/{pk}/", {"allow_hosts": "x"}, format="json").status_code == 400
    assert api.delete(f"/api/environments/{pk}/").status_code == 204
    assert api.get(f"/api/environments/{pk}/").status_code == 404


def test_the_local_environment_points_at_the_mock_server(
    api: APIClient, local_env: Environment, settings: Any
) -> None:
    body = api.get(f"/api/environments/{local_env.pk}/").json()
    assert body["name"] == "local" and body["allow_loopback"] is True
    assert body["url_template"] == settings.MOCKMODELS_URL + "/v1/models/{name}:predict"
    # An environment without an owner is the system's: only staff may change it.
    assert api.patch(f"/api/environments/{local_env.pk}/", {"deadline": 1}, format="json").status_code == 403
