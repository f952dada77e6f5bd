"""The deploy targets API: fields checked with the place of each problem, credentials write-only
(never answered, redacted in the audit log), owner and visibility as environments have."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from config import secretbox
from graphs.models import AuditEvent

pytestmark = pytest.mark.django_db

TARGET = {
    "name": "prod",
    "url": "https://git.example.org/platform/cluster-config.git",
    "credentials": {"username": "studio-bot", "password": "tok-very-secret"},
}


def test_credentials_are_never_answered_and_redacted_in_the_audit_log(api: Any) -> None:
    created = api.post("/api/deploy-targets/", TARGET, format="json")

    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["has_credentials"] is True and body["username"] == "studio-bot"
    assert body["branch"] == "main" and body["path"] == "graphs/{namespace}/{name}.yaml"
    assert body["mode"] == "commit" and body["visibility"] == "private" and body["owner"] == "alice"
    changed = api.patch(
        f"/api/deploy-targets/{body['id']}/",
        {"credentials": {"username": "studio-bot", "password": "tok-rotated"}, "mode": "review"},
        format="json",
    )
    assert changed.status_code == 200 and changed.json()["mode"] == "review"
    texts = [created.content, changed.content, api.get(f"/api/deploy-targets/{body['id']}/").content]
    texts.append(api.get("/api/deploy-targets/").content)
    audit = list(AuditEvent.objects.filter(action__startswith="deploy_target.").values("action", "details"))
    assert [a["action"] for a in audit] == ["deploy_target.update", "deploy_target.create"]
    assert audit[0]["details"]["changes"]["credentials"] == ["***", "*** (changed)"]
    assert audit[0]["details"]["changes"]["mode"] == ["commit", "review"]
    everything = b"".join(texts).decode() + json.dumps(audit)
    assert "tok-very-secret" not in everything and "tok-rotated" not in everything
    assert api.delete(f"/api/deploy-targets/{body['id']}/").status_code == 204
    assert AuditEvent.objects.filter(action="deploy_target.delete").count() == 1


def stored_secret(pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM deploys_deploytarget WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


def test_the_database_never_holds_the_password_in_clear(api: Any) -> None:
    pk = api.post("/api/deploy-targets/", TARGET, format="json").json()["id"]

    created = stored_secret(pk)
    assert created.startswith("fernet:") and "tok-very-secret" not in created
    assert secretbox.decrypt(created) == "tok-very-secret"

    changed = api.patch(
        f"/api/deploy-targets/{pk}/", {"credentials": {"password": "tok-rotated"}}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["has_credentials"] is True
    updated = stored_secret(pk)
    assert updated.startswith("fernet:") and "tok-rotated" not in updated
    assert secretbox.decrypt(updated) == "tok-rotated"

    untouched = api.patch(f"/api/deploy-targets/{pk}/", {"description": "prod"}, format="json")
    assert untouched.status_code == 200 and stored_secret(pk) == updated
    cleared = api.patch(f"/api/deploy-targets/{pk}/", {"credentials": {"password": ""}}, format="json")
    assert cleared.json()["has_credentials"] is False and stored_secret(pk) == ""


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("url", "ftp://example.org/repo.git", "not a file://"),
        ("url", "https://bot:pw@example.org/repo.git", "credentials, not in the URL"),
        ("branch", "main..evil", "not a branch name"),
        ("path", "../outside/{name}.yaml", "relative file path"),
        ("path", "graphs/{team}/{name}.yaml", "unknown placeholder {team}"),
        ("author_email", "a>b", "without <, >"),
    ],
)
def test_bad_fields_are_refused_with_where(api: Any, field: str, value: str, words: str) -> None:
    response = api.post("/api/deploy-targets/", {**TARGET, field: value}, format="json")

    assert response.status_code == 400, response.json()
    issue = response.json()["issues"][0]
    assert issue["path"] == field and words in issue["message"]


def test_private_targets_are_their_owners_and_only_staff_share(api: Any, bob_api: Any, user: Any) -> None:
    pk = api.post("/api/deploy-targets/", TARGET, format="json").json()["id"]
    assert bob_api.get(f"/api/deploy-targets/{pk}/").status_code == 404
    assert bob_api.patch(f"/api/deploy-targets/{pk}/", {"mode": "review"}, format="json").status_code == 404
    assert bob_api.get("/api/deploy-targets/").json()["count"] == 0
    refused = api.patch(f"/api/deploy-targets/{pk}/", {"visibility": "shared"}, format="json")
    assert refused.status_code == 403
    taken = api.post("/api/deploy-targets/", TARGET, format="json")
    assert taken.status_code == 400 and taken.json()["issues"][0]["code"] == "deploy_target.name-taken"
    user.is_staff = True
    user.save()
    assert api.patch(f"/api/deploy-targets/{pk}/", {"visibility": "shared"}, format="json").status_code == 200
    assert bob_api.get(f"/api/deploy-targets/{pk}/").status_code == 200
    assert bob_api.patch(f"/api/deploy-targets/{pk}/", {"mode": "review"}, format="json").status_code == 403


def test_signed_out_requests_are_refused(anon: Any) -> None:
    assert anon.get("/api/deploy-targets/").status_code in (401, 403)
    assert anon.post("/api/graphs/g/versions/1/deploy/", {"target": "x"}, format="json").status_code in (
        401,
        403,
    )


def test_the_page_mounts_its_bundle(user: Any, client: Any) -> None:
    client.force_login(user)
    response = client.get("/deploy-targets/")
    assert response.status_code == 200 and b"deploytargets" in response.content
