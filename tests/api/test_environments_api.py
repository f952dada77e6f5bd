"""The environments API: a user sees and uses the shared environments and their own private ones
(staff all of them); the owner or staff writes; only staff share; the system owns ``local``; every
change is audited."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.models import Environment
from graphs.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_run_settings", "enqueued")]

STAGING_TEMPLATE = "http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict"
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


def test_a_private_environment_is_invisible_to_other_users_and_visible_to_staff(
    api: APIClient, bob_api: APIClient, other_user: Any
) -> None:
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    assert bob_api.get("/api/environments/").json()["count"] == 0
    assert bob_api.get(f"/api/environments/{pk}/").status_code == 404
    assert bob_api.patch(f"/api/environments/{pk}/", {"deadline": 5}, format="json").status_code == 404
    assert bob_api.delete(f"/api/environments/{pk}/").status_code == 404
    assert Environment.objects.get(pk=pk).deadline == 20
    other_user.is_staff = True
    other_user.save()
    assert [e["name"] for e in bob_api.get("/api/environments/").json()["results"]] == ["staging"]
    assert bob_api.patch(f"/api/environments/{pk}/", {"deadline": 5}, format="json").status_code == 200
    assert Environment.objects.get(pk=pk).deadline == 5


def test_only_staff_may_share_and_a_shared_environment_is_read_by_all_but_changed_by_its_owner(
    api: APIClient, bob_api: APIClient, user: Any
) -> None:
    refused = api.post("/api/environments/", {**STAGING, "visibility": "shared"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["issues"][0]["code"] == "environment.share-forbidden"
    assert not Environment.objects.filter(name="staging").exists()
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    assert api.patch(f"/api/environments/{pk}/", {"visibility": "shared"}, format="json").status_code == 403
    assert Environment.objects.get(pk=pk).visibility == "private"
    user.is_staff = True
    user.save()
    shared = api.patch(f"/api/environments/{pk}/", {"visibility": "shared"}, format="json")
    assert shared.status_code == 200 and shared.json()["visibility"] == "shared"
    assert bob_api.get(f"/api/environments/{pk}/").json()["name"] == "staging"
    assert bob_api.patch(f"/api/environments/{pk}/", {"deadline": 5}, format="json").status_code == 403
    assert bob_api.delete(f"/api/environments/{pk}/").status_code == 403
    assert Environment.objects.get(pk=pk).deadline == 20


def test_once_shared_an_environment_is_changed_by_staff_only_not_by_its_owner(
    api: APIClient, bob_api: APIClient, user: Any, other_user: Any
) -> None:
    """Everybody's runs may go to a shared environment: its owner may not repoint it afterwards."""
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    other_user.is_staff = True
    other_user.save()
    assert (
        bob_api.patch(f"/api/environments/{pk}/", {"visibility": "shared"}, format="json").status_code == 200
    )
    evil = {"url_template": "http://collector.example/{name}"}
    assert api.patch(f"/api/environments/{pk}/", evil, format="json").status_code == 403
    assert api.patch(f"/api/environments/{pk}/", {"visibility": "private"}, format="json").status_code == 403
    assert api.delete(f"/api/environments/{pk}/").status_code == 403
    environment = Environment.objects.get(pk=pk)
    assert (environment.visibility, environment.url_template) == ("shared", STAGING_TEMPLATE)


@pytest.mark.parametrize("name", ["local", "LOCAL", "Local"])
def test_nobody_may_take_the_system_default_name(api: APIClient, user: Any, name: str) -> None:
    user.is_staff = True  # not even staff: the name belongs to the system
    user.save()
    response = api.post("/api/environments/", {**STAGING, "name": name}, format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["code"] == "environment.name-reserved"
    assert not Environment.objects.exists()
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    renamed = api.patch(f"/api/environments/{pk}/", {"name": name}, format="json")
    assert renamed.status_code == 400 and renamed.json()["issues"][0]["code"] == "environment.name-reserved"
    assert Environment.objects.get(pk=pk).name == "staging"


def test_the_system_default_belongs_to_no_user_and_only_staff_may_change_it(
    api: APIClient, bob_api: APIClient, other_user: Any, local_env: Environment
) -> None:
    body = bob_api.get(f"/api/environments/{local_env.pk}/").json()
    assert (body["owner"], body["system"], body["visibility"]) == (None, True, "shared")
    url = f"/api/environments/{local_env.pk}/"
    assert bob_api.patch(url, {"deadline": 1}, format="json").status_code == 403
    assert bob_api.delete(url).status_code == 403
    other_user.is_staff = True
    other_user.save()
    assert bob_api.patch(url, {"deadline": 7}, format="json").status_code == 200
    assert bob_api.patch(url, {"name": "mine"}, format="json").status_code == 400
    assert bob_api.patch(url, {"visibility": "private"}, format="json").status_code == 400
    assert bob_api.delete(url).status_code == 403
    local_env.refresh_from_db()
    assert (local_env.name, local_env.deadline, local_env.visibility) == ("local", 7, "shared")


def test_every_environment_change_is_audited(api: APIClient, user: Any) -> None:
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    api.patch(f"/api/environments/{pk}/", {"deadline": 30, "step_timeout": 5}, format="json")
    api.patch(f"/api/environments/{pk}/", {"deadline": 30}, format="json")  # no change, no event
    api.delete(f"/api/environments/{pk}/")
    events = list(AuditEvent.objects.filter(action__startswith="environment.").order_by("id"))
    assert [(e.action, e.actor) for e in events] == [
        ("environment.create", user),
        ("environment.update", user),
        ("environment.delete", user),
    ]
    assert all(e.details["environment"] == pk and e.details["environment_name"] == "staging" for e in events)
    assert events[0].details["values"]["allow_networks"] == ["10.0.0.0/8"]
    assert events[1].details["changes"] == {"deadline": [20.0, 30]}
    assert events[2].details["values"]["deadline"] == 30


def test_refused_changes_are_not_audited(api: APIClient, bob_api: APIClient) -> None:
    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    assert bob_api.delete(f"/api/environments/{pk}/").status_code == 404
    assert api.post("/api/environments/", {**STAGING, "name": "local"}, format="json").status_code == 400
    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["environment.create"]


def test_an_environment_id_too_large_for_the_database_is_a_404(api: APIClient) -> None:
    for pk in ("9" * 25, str(2**63)):
        assert api.get(f"/api/environments/{pk}/").status_code == 404
        assert api.patch(f"/api/environments/{pk}/", {"deadline": 1}, format="json").status_code == 404


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


def test_changes_made_in_the_admin_are_audited_too(api: APIClient, user: Any) -> None:
    from django.test import Client

    pk = api.post("/api/environments/", STAGING, format="json").json()["id"]
    user.is_staff = user.is_superuser = True
    user.save()
    admin = Client()
    admin.force_login(user)
    form = {
        "name": "staging",
        "description": "",
        "service_urls": "{}",
        "url_template": "http://{name}.example/v1/models/{name}:predict",
        "namespace": "",
        "propagate_headers": "[]",
        "step_timeout": "5",
        "deadline": "25",
        "kserve_version": "master",
        "allow_hosts": "[]",
        "allow_networks": "[]",
        "visibility": "private",
        "owner": str(user.pk),
    }
    changed = admin.post(f"/admin/execution/environment/{pk}/change/", form)
    assert changed.status_code == 302, changed.content[:500]
    assert Environment.objects.get(pk=pk).deadline == 25
    deleted = admin.post(f"/admin/execution/environment/{pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 302 and not Environment.objects.filter(pk=pk).exists()
    events = list(AuditEvent.objects.filter(details__via="admin").order_by("id"))
    assert [(e.action, e.actor, e.details["environment"]) for e in events] == [
        ("environment.update", user, pk),
        ("environment.delete", user, pk),
    ]
    assert "deadline" in events[0].details["fields"]


def test_the_system_environment_follows_the_mock_server_when_it_moves(settings: Any) -> None:
    """`make run` on another MOCK_PORT: a seeded template is mended (audited), a custom one is kept."""
    from execution.services import environments

    settings.MOCKMODELS_URL = "http://127.0.0.1:9010"
    local, _ = environments.ensure_local_environment()
    settings.MOCKMODELS_URL = "http://127.0.0.1:9310"
    assert environments.ensure_local_environment()[0].url_template == (
        "http://127.0.0.1:9310/v1/models/{name}:predict"
    )
    local.refresh_from_db()
    assert local.url_template == "http://127.0.0.1:9310/v1/models/{name}:predict"
    assert AuditEvent.objects.filter(action="environment.update", actor=None).exists()
    Environment.objects.filter(pk=local.pk).update(url_template="http://models.internal/{name}")
    settings.MOCKMODELS_URL = "http://127.0.0.1:9999"
    assert environments.ensure_local_environment()[0].url_template == "http://models.internal/{name}"


def test_the_system_environment_follows_the_real_models_and_keeps_a_map_someone_set(settings: Any) -> None:
    """`make run` with the real models on MODELS_PORT, then on another port, then with MODELS=0: the
    seeded service map follows each time (audited); a map someone changed is theirs and stays."""
    from execution.services import environments

    settings.LOCAL_MODELS_URL = ""
    local, _ = environments.ensure_local_environment()
    assert local.service_urls == {}
    settings.LOCAL_MODELS_URL = "http://127.0.0.1:9020"
    local, _ = environments.ensure_local_environment()
    assert local.service_urls["face-detector"] == "http://127.0.0.1:9020/v1/models/face-detector:predict"
    assert set(local.service_urls) == set(environments.REAL_MODEL_SERVICES)
    assert "KServe's model server" in local.description
    settings.LOCAL_MODELS_URL = "http://127.0.0.1:9320"
    local, _ = environments.ensure_local_environment()
    assert local.service_urls["result-merger"] == "http://127.0.0.1:9320/v1/models/result-merger:predict"
    settings.LOCAL_MODELS_URL = ""
    local, _ = environments.ensure_local_environment()
    assert local.service_urls == {} and "mock model server" in local.description
    changes = [
        event.details["changes"]["service_urls"]
        for event in AuditEvent.objects.filter(action="environment.update", actor=None).order_by("pk")
    ]
    assert [len(before) for before, _after in changes] == [0, 6, 6]
    mine = {"face-detector": "http://detector.internal/v1/models/face-detector:predict"}
    Environment.objects.filter(pk=local.pk).update(service_urls=mine)
    settings.LOCAL_MODELS_URL = "http://127.0.0.1:9020"
    assert environments.ensure_local_environment()[0].service_urls == mine


def test_the_system_environment_may_call_the_model_servers_compose_names(
    settings: Any, monkeypatch: Any
) -> None:
    """docker-compose.yml: the mock and the real models are services on the compose network, whose
    names resolve to private addresses. The `local` environment calls them (the operator named
    them in MOCKMODELS_URL and LOCAL_MODELS_URL) and no other private address."""
    import socket

    from execution.engine.transport.urlguard import BlockedUrl
    from execution.services import environments

    network = {"mockmodels": "172.18.0.4", "models": "172.18.0.5", "db": "172.18.0.2"}
    real_getaddrinfo = socket.getaddrinfo

    def compose_dns(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in network:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (network[host], int(port)))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", compose_dns)
    settings.MOCKMODELS_URL = "http://mockmodels:9010"
    settings.LOCAL_MODELS_URL = "http://models:9020"
    local, _ = environments.ensure_local_environment()
    guard = environments.guard_from_config(environments.environment_config(local))
    guard.check(local.url_template.format(name="sentiment-v1"))
    guard.check(local.service_urls["face-detector"])
    guard.check("http://127.0.0.1:9010/v1/models/echo:predict")  # make run's loopback, as before
    with pytest.raises(BlockedUrl, match="private address"):
        guard.check("http://db:5432/")


def test_the_system_environment_on_loopback_allows_no_host_by_name(settings: Any) -> None:
    """`make run`: loopback addresses are allowed as a class; no host name is added."""
    from execution.services import environments

    settings.MOCKMODELS_URL = "http://127.0.0.1:9010"
    settings.LOCAL_MODELS_URL = "http://localhost:9020"
    local, _ = environments.ensure_local_environment()
    assert local.allow_hosts == []


def test_a_local_made_before_its_hosts_were_allowed_gets_the_ones_it_calls(settings: Any) -> None:
    """A compose volume from an earlier release: `local` calls mockmodels with no host allowed."""
    from execution.services import environments

    settings.MOCKMODELS_URL = "http://mockmodels:9010"
    settings.LOCAL_MODELS_URL = ""
    local, _ = environments.ensure_local_environment()
    Environment.objects.filter(pk=local.pk).update(allow_hosts=[])
    local, _ = environments.ensure_local_environment()
    assert local.allow_hosts == ["mockmodels"]
    settings.LOCAL_MODELS_URL = "http://models:9020"
    Environment.objects.filter(pk=local.pk).update(allow_hosts=["*.staging.internal"])
    local, _ = environments.ensure_local_environment()
    # The service map follows only from a seeded loopback one; this one was empty, so it follows.
    assert local.service_urls["face-detector"] == "http://models:9020/v1/models/face-detector:predict"
    assert local.allow_hosts == ["*.staging.internal", "mockmodels", "models"]
    assert (
        AuditEvent.objects.filter(
            action="environment.update", details__changes__allow_hosts__isnull=False
        ).count()
        == 2
    )
    # Pointed elsewhere by someone: no host of the model servers is added.
    Environment.objects.filter(pk=local.pk).update(
        url_template="http://models.internal/{name}", service_urls={}, allow_hosts=[]
    )
    settings.LOCAL_MODELS_URL = ""
    assert environments.ensure_local_environment()[0].allow_hosts == []
