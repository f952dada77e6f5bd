"""Sign-in by an authenticating proxy's identity header, believed only from the proxy's addresses."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from graphs.models import AuditEvent, GraphMember

pytestmark = pytest.mark.django_db

HEADER = "HTTP_X_AUTH_REQUEST_EMAIL"
UNTRUSTED = "203.0.113.9"


@pytest.fixture
def proxy_settings(settings: Any) -> Any:
    # The test client's REMOTE_ADDR is 127.0.0.1: the "proxy".
    settings.STUDIO_PROXY_USER_HEADER = "X-Auth-Request-Email"
    settings.STUDIO_PROXY_TRUSTED_NETWORKS = ["127.0.0.0/8", "fd00::/8"]
    return settings


def user_of(client: Client) -> Any:
    user_id = client.session.get(SESSION_KEY)
    return get_user_model().objects.get(pk=user_id) if user_id else None


def test_the_header_from_the_proxy_signs_in_a_least_role_user(proxy_settings: Any) -> None:
    client = Client()
    response = client.get("/", **{HEADER: "carol@example.com"})
    assert response.status_code == 200
    carol = user_of(client)
    assert carol.username == "carol@example.com"
    assert not carol.is_staff and not carol.is_superuser and not carol.has_usable_password()
    assert not GraphMember.objects.filter(user=carol).exists()
    event = AuditEvent.objects.get(action="user.signed_in")
    assert event.actor == carol and event.details == {"method": "proxy", "remote_addr": "127.0.0.1"}
    # The API answers the same browser session.
    assert client.get("/api/graphs/", **{HEADER: "carol@example.com"}).status_code == 200
    assert AuditEvent.objects.filter(action="user.signed_in").count() == 1  # one sign-in, not one per request


def test_the_header_from_anyone_else_is_ignored_and_audited(
    proxy_settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client(REMOTE_ADDR=UNTRUSTED)
    with caplog.at_level(logging.WARNING, logger="config.sso.proxy"):
        response = client.get("/", **{HEADER: "admin@example.com"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert user_of(client) is None
    assert not get_user_model().objects.filter(username="admin@example.com").exists()
    assert "not in STUDIO_PROXY_TRUSTED_NETWORKS" in caplog.text and UNTRUSTED in caplog.text
    refused = AuditEvent.objects.get(action="user.sign_in_refused")
    assert refused.actor is None
    assert (
        refused.details["remote_addr"] == UNTRUSTED and refused.details["claimed_user"] == "admin@example.com"
    )
    # Repeating it is logged but not audited again (the audit log is not a flood target).
    client.get("/api/graphs/", **{HEADER: "admin@example.com"})
    assert AuditEvent.objects.filter(action="user.sign_in_refused").count() == 1
    assert client.get("/api/graphs/", **{HEADER: "admin@example.com"}).status_code in (401, 403)


def test_x_forwarded_for_does_not_make_an_address_trusted(proxy_settings: Any) -> None:
    client = Client(REMOTE_ADDR=UNTRUSTED)
    client.get("/", **{HEADER: "admin@example.com", "HTTP_X_FORWARDED_FOR": "127.0.0.1"})
    assert user_of(client) is None


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "fd00::5"])
def test_trusted_ipv6_peers(proxy_settings: Any, address: str) -> None:
    client = Client(REMOTE_ADDR=address)
    client.get("/", **{HEADER: "dana@example.com"})
    assert user_of(client).username == "dana@example.com"


def test_a_proxy_session_ends_without_the_proxy(proxy_settings: Any) -> None:
    """A session cookie the proxy's header made is no good on its own: not without the header, and
    not from an address that is not the proxy's (a copied cookie sent straight to the studio)."""
    client = Client()
    client.get("/", **{HEADER: "carol@example.com"})
    assert user_of(client) is not None
    cookie = client.cookies["sessionid"].value

    direct = Client(REMOTE_ADDR=UNTRUSTED)
    direct.cookies["sessionid"] = cookie
    assert direct.get("/").status_code == 302
    assert user_of(client) is None  # the session was flushed

    client.get("/", **{HEADER: "carol@example.com"})
    assert client.get("/").status_code == 302  # the header is gone: so is the session


def test_a_different_user_in_the_header_replaces_the_session_user(proxy_settings: Any) -> None:
    client = Client()
    client.get("/", **{HEADER: "carol@example.com"})
    client.get("/", **{HEADER: "dave@example.com"})
    assert user_of(client).username == "dave@example.com"


def test_csrf_still_applies_to_proxy_sessions(proxy_settings: Any, manifest: dict[str, Any]) -> None:
    client = Client(enforce_csrf_checks=True)
    client.get("/", **{HEADER: "carol@example.com"})
    response = client.post(
        "/api/graphs/",
        {"manifest": manifest, "layout": {}, "message": "x"},
        content_type="application/json",
        **{HEADER: "carol@example.com"},
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_no_header_is_believed_while_the_setting_is_empty(settings: Any) -> None:
    settings.STUDIO_PROXY_USER_HEADER = ""
    settings.STUDIO_PROXY_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    client = Client()
    assert client.get("/", **{HEADER: "carol@example.com"}).status_code == 302
    assert user_of(client) is None
    assert not get_user_model().objects.exists()


def test_an_empty_or_overlong_header_signs_in_nobody(proxy_settings: Any) -> None:
    for value in ["", "   ", "x" * 151]:
        client = Client()
        client.get("/", **{HEADER: value})
        assert user_of(client) is None
    assert not get_user_model().objects.exists()


def test_a_malformed_network_is_a_configuration_error(settings: Any) -> None:
    from config.sso.proxy import is_trusted

    settings.STUDIO_PROXY_TRUSTED_NETWORKS = ["10.0.0.0/33"]
    with pytest.raises(ImproperlyConfigured, match=r"10\.0\.0\.0/33"):
        is_trusted("10.0.0.1")


def test_api_tokens_keep_working_beside_the_proxy(proxy_settings: Any, api: Any) -> None:
    assert api.get("/api/graphs/", REMOTE_ADDR=UNTRUSTED).status_code == 200
