"""Single sign-on tests: a real OpenID provider (tests/oidcprovider, django-oidc-provider) in a
subprocess on loopback; the flow helpers are in tests/ssokit.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ssokit import PROVIDER_USERS, STAFF_GROUP, Provider, running_provider


@pytest.fixture(scope="session")
def provider() -> Iterator[Provider]:
    with running_provider(
        users=PROVIDER_USERS,
        redirect_uris=["http://testserver/oidc/callback/"],
        post_logout_redirect_uris=["http://testserver/login/"],
    ) as running:
        yield running


@pytest.fixture
def oidc_settings(settings: Any, provider: Provider) -> Iterator[Provider]:
    """The studio configured for the test provider by discovery, as the environment would."""
    from config.sso import oidc

    settings.STUDIO_OIDC_ENABLED = True
    settings.STUDIO_OIDC_ISSUER = provider.issuer
    settings.STUDIO_OIDC_PROVIDER_NAME = "Test Provider"
    settings.OIDC_RP_CLIENT_ID = provider.client_id
    settings.OIDC_RP_CLIENT_SECRET = provider.client_secret
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.STUDIO_OIDC_STAFF_GROUPS = [STAFF_GROUP]
    oidc.forget_discovery()
    yield provider
    oidc.forget_discovery()
