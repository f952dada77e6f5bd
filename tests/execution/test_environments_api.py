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


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("", "an empty pattern matches every header name"),
        ("X{1,3}", "contains a comma"),
        ("(?!X)Abc", "not a valid Go regular expression: error parsing regexp: invalid or unsupported Perl"),
        ("\\C", "not a valid Go regular expression: error parsing regexp: invalid escape sequence"),
    ],
    ids=["empty", "comma", "lookahead", "backslash-C"],
)
def test_header_patterns_go_would_refuse_or_misread_are_refused(
    api: APIClient, pattern: str, message: str
) -> None:
    """Patterns are checked as KServe reads them: Go regexps, joined and split on commas."""
    response = api.post(
        "/api/environments/", {"name": "pat", "propagate_headers": ["^X-A$", pattern]}, format="json"
    )
    assert response.status_code == 400
    issues = response.json()["issues"]
    assert [issue["path"] for issue in issues] == ["propagate_headers[1]"]
    assert message in issues[0]["message"]
    assert not Environment.objects.filter(name="pat").exists()


def test_go_regexp_syntax_python_lacks_is_accepted(api: APIClient) -> None:
    patterns = ["^\\pL+-Id\\z", "[[:alpha:]]+-[[:digit:]]", "\\QX-Request\\E", "(?U)X-.+"]
    response = api.post(
        "/api/environments/", {"name": "go-syntax", "propagate_headers": patterns}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert Environment.objects.get(name="go-syntax").propagate_headers == patterns
