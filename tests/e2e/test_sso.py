"""Single sign-on in the browser: the studio's "Sign in with …" through a real OpenID provider
(django-oidc-provider in a subprocess on loopback, tests/oidcprovider) and back, then logout at both."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from ssokit import PROVIDER_USERS, STAFF_GROUP, Provider, running_provider

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def browser_provider(live_server: Any) -> Iterator[Provider]:
    with running_provider(
        users=PROVIDER_USERS,
        redirect_uris=[f"{live_server.url}/oidc/callback/"],
        post_logout_redirect_uris=[f"{live_server.url}/login/"],
    ) as provider:
        yield provider


@pytest.fixture
def studio_with_sso(settings: Any, browser_provider: Provider) -> Iterator[Provider]:
    from config.sso import oidc

    settings.STUDIO_OIDC_ENABLED = True
    settings.STUDIO_OIDC_ISSUER = browser_provider.issuer
    settings.STUDIO_OIDC_PROVIDER_NAME = "Test Provider"
    settings.OIDC_RP_CLIENT_ID = browser_provider.client_id
    settings.OIDC_RP_CLIENT_SECRET = browser_provider.client_secret
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.STUDIO_OIDC_STAFF_GROUPS = [STAFF_GROUP]
    oidc.forget_discovery()
    yield browser_provider
    oidc.forget_discovery()


@pytest.mark.django_db(transaction=True)
def test_sign_in_with_the_provider_and_log_out_of_both(
    new_context: Any, live_server: Any, studio_with_sso: Provider, page_errors: Any
) -> None:
    from django.contrib.auth import get_user_model

    from graphs.models import AuditEvent

    page = page_errors.watch(new_context().new_page())
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/")
    page.get_by_role("link", name="Sign in with Test Provider").click()

    # At the provider: its own sign-in form.
    expect(page).to_have_url(re.compile(re.escape(f"{studio_with_sso.url}/accounts/login/")))
    page.get_by_label("Provider username").fill("olivia")
    page.get_by_label("Provider password").fill("olivia-op-password")
    page.get_by_role("button", name="Continue").click()

    # Back in the studio, signed in as olivia.
    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Inference graphs")).to_be_visible()
    expect(page.locator(".user-name")).to_have_text("olivia")
    olivia = get_user_model().objects.get(username="olivia")
    assert olivia.is_staff and not olivia.is_superuser and not olivia.has_usable_password()
    event = AuditEvent.objects.get(action="user.signed_in")
    assert event.actor == olivia and event.details["method"] == "oidc"

    # Logout ends the provider's session too and comes back to the studio's login page.
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{live_server.url}/login/")
    expect(page.get_by_role("link", name="Sign in with Test Provider")).to_be_visible()
    assert AuditEvent.objects.filter(action="user.signed_out", actor=olivia).count() == 1
    # Signing in again asks the provider for the password again: its session is over.
    page.get_by_role("link", name="Sign in with Test Provider").click()
    expect(page.get_by_label("Provider username")).to_be_visible()
