"""Personal API tokens: created from the API (the key shown once, stored hashed), used with
``Authorization: Token <key>``, revoked (then 401), expired (401 saying so), private to their user,
audited; DRF authtoken keys keep working beside them."""

from __future__ import annotations

import datetime
from typing import Any

import httpx
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from graphs import tokens
from graphs.models import ApiToken, AuditEvent

pytestmark = pytest.mark.django_db


def _create(client: APIClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/tokens/", {"name": "ci", **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _with_key(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_created_key_authenticates_and_is_never_shown_again(api: APIClient, user: Any) -> None:
    response = api.post("/api/tokens/", {"name": "laptop"}, format="json")
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    created = response.json()
    key = created["key"]
    assert key.startswith("igs_") and len(key) > 40
    assert created["prefix"] == key[:12] and created["name"] == "laptop"
    assert created["expires_at"] is None and created["last_used_at"] is None

    # Stored hashed: the key is in no column of the row.
    row = ApiToken.objects.get(pk=created["id"])
    assert key not in {row.key_hash, row.prefix, row.name} and row.key_hash == tokens.hash_key(key)

    listed = api.get("/api/tokens/").json()
    assert listed["count"] == 1
    assert "key" not in listed["results"][0] and key not in str(listed)

    answer = _with_key(key).get("/api/graphs/")
    assert answer.status_code == 200
    row.refresh_from_db()
    assert row.last_used_at is not None
    assert _with_key(key).get("/api/tokens/").json()["results"][0]["last_used_at"] is not None


def test_a_user_may_hold_several_tokens_each_working(api: APIClient) -> None:
    keys = [_create(api, name=f"t{i}")["key"] for i in range(3)]
    assert len(set(keys)) == 3
    assert [_with_key(k).get("/api/tokens/").status_code for k in keys] == [200, 200, 200]
    assert api.get("/api/tokens/").json()["count"] == 3


def test_a_revoked_token_is_401_on_its_next_request(api: APIClient, user: Any) -> None:
    created = _create(api)
    client = _with_key(created["key"])
    assert client.get("/api/graphs/").status_code == 200

    assert api.delete(f"/api/tokens/{created['id']}/").status_code == 204

    refused = client.get("/api/graphs/")
    assert refused.status_code == 401
    assert "invalid token" in refused.json()["detail"].lower()
    assert not ApiToken.objects.exists()
    assert api.delete(f"/api/tokens/{created['id']}/").status_code == 404


def test_an_expired_token_is_401_saying_it_expired(api: APIClient, user: Any) -> None:
    created = _create(api, expires_at=(timezone.now() + datetime.timedelta(hours=1)).isoformat())
    assert created["expires_at"] is not None
    client = _with_key(created["key"])
    assert client.get("/api/graphs/").status_code == 200

    ApiToken.objects.filter(pk=created["id"]).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    refused = client.get("/api/graphs/")
    assert refused.status_code == 401
    assert "expired" in refused.json()["detail"]
    assert "ci" in refused.json()["detail"]


def test_an_expiry_in_the_past_is_refused(api: APIClient) -> None:
    past = (timezone.now() - datetime.timedelta(minutes=1)).isoformat()
    response = api.post("/api/tokens/", {"name": "old", "expires_at": past}, format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["path"] == "expires_at"
    assert not ApiToken.objects.exists()


def test_a_token_needs_a_name(api: APIClient) -> None:
    response = api.post("/api/tokens/", {"name": ""}, format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["path"] == "name"
    assert not ApiToken.objects.exists()


def test_another_users_tokens_are_neither_listed_nor_revocable(
    api: APIClient, bob_api: APIClient, other_user: Any
) -> None:
    mine = _create(api, name="alice-token")
    _create(bob_api, name="bob-token")

    assert [t["name"] for t in bob_api.get("/api/tokens/").json()["results"]] == ["bob-token"]
    assert bob_api.delete(f"/api/tokens/{mine['id']}/").status_code == 404
    assert ApiToken.objects.filter(pk=mine["id"]).exists()
    assert _with_key(mine["key"]).get("/api/tokens/").status_code == 200


def test_anonymous_requests_are_refused(anon: APIClient, api: APIClient) -> None:
    mine = _create(api)
    assert anon.get("/api/tokens/").status_code in (401, 403)
    assert anon.post("/api/tokens/", {"name": "x"}, format="json").status_code in (401, 403)
    assert anon.delete(f"/api/tokens/{mine['id']}/").status_code in (401, 403)
    assert ApiToken.objects.count() == 1


def test_an_unknown_personal_key_is_401(anon: APIClient) -> None:
    response = _with_key("igs_" + "x" * 43).get("/api/graphs/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token: it was revoked, or never existed."}


def test_drf_authtoken_keys_keep_working(api: APIClient) -> None:
    """The ``api`` fixture authenticates with ``drf_create_token``'s kind of key."""
    assert api.get("/api/tokens/").status_code == 200


def test_a_token_of_an_inactive_user_is_refused(api: APIClient, user: Any) -> None:
    key = _create(api)["key"]
    user.is_active = False
    user.save()
    assert _with_key(key).get("/api/graphs/").status_code == 401


def test_creating_and_revoking_are_audited(api: APIClient, user: Any) -> None:
    created = _create(api, name="deploy-bot")
    api.delete(f"/api/tokens/{created['id']}/")
    events = list(AuditEvent.objects.order_by("id").values_list("action", "actor", "details"))
    assert [(a, actor) for a, actor, _ in events] == [("token.create", user.pk), ("token.revoke", user.pk)]
    for _, _, details in events:
        assert details["name"] == "deploy-bot" and details["token_id"] == created["id"]
        assert created["key"] not in str(details)


def test_the_number_of_tokens_per_user_is_capped(api: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "MAX_TOKENS_PER_USER", 2)
    _create(api)
    _create(api)
    response = api.post("/api/tokens/", {"name": "third"}, format="json")
    assert response.status_code == 400
    assert "revoke" in response.json()["detail"]
    assert ApiToken.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_lifecycle_over_real_http(live_server: Any, user: Any) -> None:
    """create → use → revoke → 401, through a real HTTP client against the live server."""
    from tests.conftest import client_for

    created = _create(client_for(user), name="over-http")
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        headers = {"Authorization": f"Token {created['key']}"}
        assert http.get("/api/graphs/", headers=headers).status_code == 200
        assert http.delete(f"/api/tokens/{created['id']}/", headers=headers).status_code == 204
        refused = http.get("/api/graphs/", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == "Token"
