"""OpenID Connect sign-in against a real provider (django-oidc-provider in a subprocess)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.test import Client
from ssokit import ProviderBrowser, local_path, sign_in, start_sign_in

from graphs.models import AuditEvent, GraphMember

pytestmark = pytest.mark.django_db


def signed_in_user(client: Client) -> Any:
    user_id = client.session.get(SESSION_KEY)
    return get_user_model().objects.get(pk=user_id) if user_id else None


def test_login_page_offers_the_provider_only_when_configured(settings: Any, provider: Any) -> None:
    page = Client().get("/login/").content.decode()
    assert "Sign in with" not in page
    assert Client().get("/oidc/authenticate/").status_code == 404

    settings.STUDIO_OIDC_ENABLED = True
    settings.STUDIO_OIDC_ISSUER = provider.issuer
    settings.STUDIO_OIDC_PROVIDER_NAME = "Acme SSO"
    settings.OIDC_RP_CLIENT_ID = provider.client_id
    page = Client().get("/login/?next=/graphs/x/").content.decode()
    assert "Sign in with Acme SSO" in page
    assert 'href="/oidc/authenticate/?next=%2Fgraphs%2Fx%2F"' in page
    assert 'name="password"' in page  # the password form stays while STUDIO_PASSWORD_LOGIN is on


def test_authorization_request_uses_pkce_state_and_nonce(oidc_settings: Any) -> None:
    client = Client()
    location = start_sign_in(client)
    assert location.startswith(f"{oidc_settings.issuer}/authorize?")
    query = parse_qs(urlsplit(location).query)
    assert query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"]
    assert query["code_challenge"][0] and query["state"][0] and query["nonce"][0]
    assert query["redirect_uri"] == ["http://testserver/oidc/callback/"]
    stored = client.session["oidc_states"][query["state"][0]]
    assert stored["nonce"] == query["nonce"][0] and len(stored["code_verifier"]) >= 43


def test_first_sign_in_creates_a_least_role_user_and_audits_it(oidc_settings: Any) -> None:
    client = Client()
    response = sign_in(client, "peter")
    assert response.status_code == 302 and response["Location"] == "/"
    user = signed_in_user(client)
    assert user is not None and user.username == "peter"
    assert user.email == "peter@example.com"
    assert not user.is_staff and not user.is_superuser
    assert not user.has_usable_password()
    assert not GraphMember.objects.filter(user=user).exists()
    assert client.get("/").status_code == 200
    event = AuditEvent.objects.filter(action="user.signed_in").get()
    assert event.actor == user and event.details["method"] == "oidc"

    # The second sign-in finds the same user.
    again = Client()
    sign_in(again, "peter")
    assert signed_in_user(again) == user
    assert get_user_model().objects.filter(username="peter").count() == 1


def test_the_group_claim_makes_staff_and_its_absence_unmakes_it(oidc_settings: Any, settings: Any) -> None:
    client = Client()
    sign_in(client, "olivia")
    olivia = signed_in_user(client)
    assert olivia.is_staff and not olivia.is_superuser

    settings.STUDIO_OIDC_STAFF_GROUPS = ["another-group"]
    sign_in(Client(), "olivia")
    olivia.refresh_from_db()
    assert not olivia.is_staff


def test_a_state_the_session_never_sent_is_refused(oidc_settings: Any) -> None:
    client = Client()
    back = ProviderBrowser().authorize(start_sign_in(client), "peter")
    query = parse_qs(urlsplit(back).query)
    forged = f"/oidc/callback/?code={query['code'][0]}&state=not-the-state-we-sent"
    response = client.get(forged)
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert signed_in_user(client) is None
    assert not get_user_model().objects.filter(username="peter").exists()
    assert "did not match" in client.get("/login/").content.decode()


def test_a_code_from_another_browser_session_is_refused(oidc_settings: Any) -> None:
    """The callback arrives in a browser that never started this sign-in (login CSRF)."""
    back = ProviderBrowser().authorize(start_sign_in(Client()), "peter")
    victim = Client()
    response = victim.get(local_path(back))
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert signed_in_user(victim) is None


def test_a_wrong_nonce_is_refused(oidc_settings: Any) -> None:
    client = Client()
    back = ProviderBrowser().authorize(start_sign_in(client), "peter")
    state = parse_qs(urlsplit(back).query)["state"][0]
    session = client.session
    session["oidc_states"][state]["nonce"] = "a-nonce-the-provider-never-saw"
    session.save()
    response = client.get(local_path(back))
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert signed_in_user(client) is None
    assert not get_user_model().objects.filter(username="peter").exists()


def test_an_id_token_for_another_client_or_issuer_is_refused(
    oidc_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library checks signature, expiry and nonce; audience and issuer are the studio's checks."""
    from django.core.exceptions import SuspiciousOperation
    from mozilla_django_oidc.auth import OIDCAuthenticationBackend

    from config.sso.oidc import StudioOIDCBackend

    claims: dict[str, Any] = {}
    monkeypatch.setattr(OIDCAuthenticationBackend, "verify_token", lambda self, token, **kw: dict(claims))
    backend = StudioOIDCBackend()
    claims.update(aud=[oidc_settings.client_id, "other"], iss=oidc_settings.issuer)
    assert backend.verify_token("t", nonce="n")["iss"] == oidc_settings.issuer
    claims.update(aud="someone-else")
    with pytest.raises(SuspiciousOperation, match="aud"):
        backend.verify_token("t", nonce="n")
    claims.update(aud=oidc_settings.client_id, iss="http://127.0.0.1:1/evil")
    with pytest.raises(SuspiciousOperation, match="iss"):
        backend.verify_token("t", nonce="n")


def test_logout_ends_the_provider_session_too(oidc_settings: Any) -> None:
    client = Client()
    op = ProviderBrowser()
    sign_in(client, "peter", op)
    response = client.post("/logout/")
    assert signed_in_user(client) is None
    location = response["Location"]
    assert location.startswith(f"{oidc_settings.issuer}/end-session?")
    query = parse_qs(urlsplit(location).query)
    assert query["post_logout_redirect_uri"] == ["http://testserver/login/"]
    assert query["id_token_hint"][0].count(".") == 2
    assert AuditEvent.objects.filter(action="user.signed_out").count() == 1

    # At the provider: back to the studio's login page, and the provider's session is over (the
    # next authorization asks for the password again).
    ended = op.session.get(location, allow_redirects=False, timeout=10)
    assert ended.status_code == 302 and ended.headers["Location"] == "http://testserver/login/"
    again = op.session.get(start_sign_in(Client()), allow_redirects=False, timeout=10)
    assert "/accounts/login/" in again.headers["Location"]


def test_a_password_session_logs_out_locally_only(oidc_settings: Any) -> None:
    get_user_model().objects.create_user("alice", password="alice-password-1")
    client = Client()
    client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert signed_in_user(client) is not None
    assert client.post("/logout/")["Location"] == "/login/"
    event = AuditEvent.objects.filter(action="user.signed_in").get()
    assert event.details["method"] == "password"


def test_the_session_is_rechecked_at_the_provider_and_ends_with_it(oidc_settings: Any) -> None:
    client = Client()
    op = ProviderBrowser()
    sign_in(client, "peter", op)

    def expire() -> None:
        session = client.session
        session["oidc_id_token_expiration"] = 0
        session.save()

    # The page load past the re-check time goes to the provider silently (prompt=none).
    expire()
    assert client.get("/api/graphs/").status_code == 200  # API calls are not redirected
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith(f"{oidc_settings.issuer}/authorize?")
    assert parse_qs(urlsplit(response["Location"]).query)["prompt"] == ["none"]
    # The provider still knows the user: the session goes on.
    back = op.authorize(response["Location"])
    client.get(local_path(back))
    assert signed_in_user(client).username == "peter"
    assert client.get("/").status_code == 200

    # The provider's session ended (here: a browser without its cookie): the studio's ends too.
    expire()
    response = client.get("/")
    back = ProviderBrowser().authorize(response["Location"])
    assert "error=login_required" in back
    client.get(local_path(back))
    assert signed_in_user(client) is None


def test_a_provider_that_cannot_be_reached_fails_the_sign_in_not_the_page(settings: Any) -> None:
    from config.sso import oidc

    settings.STUDIO_OIDC_ENABLED = True
    settings.STUDIO_OIDC_ISSUER = "http://127.0.0.1:9/openid"  # discard port: nothing listens
    settings.OIDC_RP_CLIENT_ID = "studio"
    settings.OIDC_TIMEOUT = 2
    oidc.forget_discovery()
    client = Client()
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert "cannot be reached" in client.get("/login/").content.decode()
    oidc.forget_discovery()


def test_an_error_answer_for_a_sign_in_never_started_does_not_sign_anyone_out(oidc_settings: Any) -> None:
    """``/oidc/callback/?error=…`` in a link must not end the session of whoever follows it."""
    get_user_model().objects.create_user("alice", password="alice-password-1")
    client = Client()
    client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    client.get("/oidc/callback/?error=access_denied&state=made-up")
    client.get("/oidc/callback/?error=access_denied")
    assert signed_in_user(client) is not None and signed_in_user(client).username == "alice"


def test_an_expired_id_token_is_refused_not_a_server_error(
    oidc_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyJWT's expiry and not-yet-valid errors are not DecodeErrors, which the library catches."""
    import jwt
    from mozilla_django_oidc.auth import OIDCAuthenticationBackend

    def expired(self: Any, token: str, key: Any) -> Any:
        raise jwt.ExpiredSignatureError("Signature has expired")

    monkeypatch.setattr(OIDCAuthenticationBackend, "get_payload_data", expired)
    client = Client()
    response = sign_in(client, "peter")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert signed_in_user(client) is None


def test_explicit_endpoints_without_discovery(oidc_settings: Any, settings: Any) -> None:
    """A provider without a discovery document: every endpoint set on its own."""
    base = oidc_settings.issuer
    settings.STUDIO_OIDC_ISSUER = ""
    settings.STUDIO_OIDC_ENDPOINTS = {
        "authorization": f"{base}/authorize",
        "token": f"{base}/token",
        "userinfo": f"{base}/userinfo",
        "jwks": f"{base}/jwks",
        "end_session": "",
    }
    client = Client()
    sign_in(client, "peter")
    assert signed_in_user(client).username == "peter"
    # No end_session_endpoint: logout ends the studio's session only.
    assert client.post("/logout/")["Location"] == "/login/"
    assert signed_in_user(client) is None


@pytest.mark.parametrize(
    ("claims", "name", "values"),
    [
        ({"groups": ["a", "b"]}, "groups", ["a", "b"]),
        ({"groups": "a"}, "groups", ["a"]),
        ({"realm_access": {"roles": ["studio-admins"]}}, "realm_access.roles", ["studio-admins"]),
        ({"groups": {"not": "a list"}}, "groups", []),
        ({}, "groups", []),
    ],
)
def test_claim_values(claims: dict[str, Any], name: str, values: list[str]) -> None:
    from config.sso.oidc import claim_values

    assert claim_values(claims, name) == values
