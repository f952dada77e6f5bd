"""Helpers of the single sign-on tests (tests/sso, tests/e2e/test_sso.py): the users of the test
OpenID provider (tests/oidcprovider) and a client that walks the authorization code flow through it
over HTTP, as a browser would."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import requests
from oidcprovider.harness import Provider, running_provider

__all__ = ["PROVIDER_USERS", "STAFF_GROUP", "Provider", "ProviderBrowser", "running_provider"]

STAFF_GROUP = "studio-admins"
PROVIDER_USERS = [
    {
        "username": "olivia",
        "password": "olivia-op-password",
        "email": "olivia@example.com",
        "groups": [STAFF_GROUP],
    },
    {
        "username": "peter",
        "password": "peter-op-password",
        "email": "peter@example.com",
        "groups": ["readers"],
    },
]
PASSWORDS = {user["username"]: user["password"] for user in PROVIDER_USERS}


class ProviderBrowser:
    """The provider's side of a browser: its own cookie jar, speaking to the provider over HTTP."""

    def __init__(self) -> None:
        self.session = requests.Session()

    def authorize(self, authorize_url: str, username: str | None = None) -> str:
        """Follows ``authorize_url`` (signing in at the provider's form as ``username`` when asked)
        until the provider redirects back to the studio; returns that URL."""
        url = authorize_url
        for _ in range(10):
            response = self.session.get(url, allow_redirects=False, timeout=10)
            if response.status_code == 200 and "csrfmiddlewaretoken" in response.text:
                assert username is not None, "the provider asked for a sign-in"
                response = self.session.post(
                    response.url,
                    data={
                        "username": username,
                        "password": PASSWORDS[username],
                        "csrfmiddlewaretoken": self.session.cookies["op_csrftoken"],
                        "next": parse_qs(urlsplit(response.url).query)["next"][0],
                    },
                    allow_redirects=False,
                    timeout=10,
                )
            assert response.status_code in (301, 302), (response.status_code, response.text[:500])
            url = urljoin(response.url, response.headers["Location"])
            if url.startswith("http://testserver/"):
                return url
        raise AssertionError("the provider never redirected back to the studio")


def local_path(url: str) -> str:
    """``http://testserver/oidc/callback/?code=…`` -> ``/oidc/callback/?code=…`` for the test client."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def start_sign_in(client: Any, next_url: str = "/") -> str:
    """The studio's redirect to the provider's authorization endpoint."""
    response = client.get(f"/oidc/authenticate/?next={next_url}")
    assert response.status_code == 302, response.content[:500]
    return str(response["Location"])


def sign_in(client: Any, username: str, op: ProviderBrowser | None = None) -> Any:
    """The whole code flow for ``username``: studio -> provider (sign-in) -> studio's callback."""
    op = op or ProviderBrowser()
    back = op.authorize(start_sign_in(client), username)
    return client.get(local_path(back))
