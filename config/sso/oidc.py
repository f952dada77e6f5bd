"""OpenID Connect sign-in on mozilla-django-oidc: authorization code flow with PKCE (S256), nonce
and state, the provider's endpoints from its discovery document (or set one by one), users created
on first sign-in with the least role, staff from a group claim, RP-initiated logout and a periodic
re-check of the provider's session (:class:`StudioSessionRefresh`).

The library reads its endpoints in its classes' ``__init__``; here they are properties that
resolve on first use, so neither the start of a process nor a request that never signs in fetches
the discovery document, and a provider that is down fails one sign-in, not every page.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.functional import cached_property
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.middleware import SessionRefresh
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

logger = logging.getLogger(__name__)

BACKEND_PATH = "config.sso.oidc.StudioOIDCBackend"

# Studio setting (explicit endpoint) -> key of the discovery document.
_ENDPOINTS = {
    "authorization": "authorization_endpoint",
    "token": "token_endpoint",
    "userinfo": "userinfo_endpoint",
    "jwks": "jwks_uri",
    "end_session": "end_session_endpoint",
}


class ProviderUnavailable(Exception):
    """The discovery document could not be read, or lacks a required endpoint."""


_discovery_lock = threading.Lock()
_discovery: dict[str, Any] = {"issuer": None, "document": None, "at": 0.0}


def enabled() -> bool:
    return bool(settings.STUDIO_OIDC_ENABLED)


def _discovery_document() -> dict[str, Any]:
    """``{issuer}/.well-known/openid-configuration``, kept ``STUDIO_OIDC_DISCOVERY_TTL`` seconds."""
    issuer = settings.STUDIO_OIDC_ISSUER
    if not issuer:
        return {}
    with _discovery_lock:
        fresh = time.monotonic() - _discovery["at"] < settings.STUDIO_OIDC_DISCOVERY_TTL
        if _discovery["issuer"] == issuer and _discovery["document"] is not None and fresh:
            return dict(_discovery["document"])
        url = f"{issuer}/.well-known/openid-configuration"
        try:
            response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise ProviderUnavailable(f"could not read {url}: {exc}") from exc
        if not isinstance(document, dict):
            raise ProviderUnavailable(f"{url} is not a JSON object")
        # OpenID Connect Discovery 1.0, section 4.3: the document's issuer must be the one asked for.
        if str(document.get("issuer", "")).rstrip("/") != issuer:
            raise ProviderUnavailable(f"{url} names issuer {document.get('issuer')!r}, not {issuer!r}")
        _discovery.update(issuer=issuer, document=document, at=time.monotonic())
        return dict(document)


def forget_discovery() -> None:
    """Drop the cached discovery document (tests, and a provider that moved its endpoints)."""
    with _discovery_lock:
        _discovery.update(issuer=None, document=None, at=0.0)


def endpoint(name: str, *, required: bool = True) -> str:
    """The provider's ``name`` endpoint: the explicit setting, else the discovery document's."""
    explicit: str = settings.STUDIO_OIDC_ENDPOINTS.get(name, "")
    if explicit:
        return explicit
    value = str(_discovery_document().get(_ENDPOINTS[name]) or "")
    if not value and required:
        raise ProviderUnavailable(
            f"the provider has no {_ENDPOINTS[name]}: set STUDIO_OIDC_ISSUER or STUDIO_OIDC_{name.upper()}_ENDPOINT"
        )
    return value


def _endpoint_property(name: str) -> property:
    # A property with a setter that ignores the library's assignment in its __init__.
    return property(lambda self: endpoint(name), lambda self, value: None)


def claim_values(claims: dict[str, Any], name: str) -> list[str]:
    """A claim as a list of strings: a list as is, a single string as one item (some providers send a
    lone group as a string), a dotted name looked up in nested objects (Keycloak's
    ``realm_access.roles``)."""
    value: Any = claims
    for part in name.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, str | int)]
    return []


class StudioOIDCBackend(OIDCAuthenticationBackend):
    """Users by the configured username claim; created on first sign-in with the least role (no
    password, not staff unless the group claim says so, no graph rights); ``is_staff`` follows the
    group claim at every sign-in when staff groups are configured. The ID token's audience and issuer
    are checked too (the library checks signature, expiry and nonce only)."""

    OIDC_OP_TOKEN_ENDPOINT = _endpoint_property("token")
    OIDC_OP_USER_ENDPOINT = _endpoint_property("userinfo")
    OIDC_OP_JWKS_ENDPOINT = _endpoint_property("jwks")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The library's __init__ without its endpoint reads: Django builds a backend on every
        # request that has a session, and that must not fetch the discovery document.
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        # Only the callback view passes a nonce: a password form posted with ?code=&state= in its
        # URL must not start a token exchange.
        if not enabled() or request is None or "nonce" not in kwargs or "password" in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> Any:
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token is not for this client (aud).")
        issuer = settings.STUDIO_OIDC_ISSUER
        if issuer and str(payload.get("iss", "")).rstrip("/") != issuer:
            raise SuspiciousOperation("The ID token is from another issuer (iss).")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The ID token's claims with the userinfo endpoint's on top (groups may be in either)."""
        claims = dict(payload)
        if settings.STUDIO_OIDC_ENDPOINTS.get("userinfo") or endpoint("userinfo", required=False):
            userinfo = super().get_userinfo(access_token, id_token, payload)
            # OpenID Connect Core 5.3.2: userinfo's sub must be the ID token's.
            if userinfo.get("sub") != payload.get("sub"):
                raise SuspiciousOperation("The userinfo response is for another subject (sub).")
            claims.update(userinfo)
        return claims

    def _username(self, claims: dict[str, Any]) -> str:
        values = claim_values(claims, settings.STUDIO_OIDC_USERNAME_CLAIM)
        return values[0].strip() if values else ""

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        username = self._username(claims)
        field = self.UserModel._meta.get_field(self.UserModel.USERNAME_FIELD)
        return bool(username) and len(username) <= (getattr(field, "max_length", None) or 150)

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(**{self.UserModel.USERNAME_FIELD: self._username(claims)})

    def _is_staff(self, claims: dict[str, Any]) -> bool:
        staff_groups = set(settings.STUDIO_OIDC_STAFF_GROUPS)
        return bool(staff_groups & set(claim_values(claims, settings.STUDIO_OIDC_GROUPS_CLAIM)))

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel(**{self.UserModel.USERNAME_FIELD: self._username(claims)})
        user.email = str(claims.get("email") or "")
        user.is_staff = self._is_staff(claims)
        user.is_superuser = False
        user.set_unusable_password()
        user.save()
        logger.info("created user %s at their first OpenID Connect sign-in", user.get_username())
        return user

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        changed = []
        if settings.STUDIO_OIDC_STAFF_GROUPS and user.is_staff != self._is_staff(claims):
            user.is_staff = self._is_staff(claims)
            changed.append("is_staff")
        email = str(claims.get("email") or "")
        if email and user.email != email:
            user.email = email
            changed.append("email")
        if changed:
            user.save(update_fields=changed)
        return user


def _refuse(request: HttpRequest, reason: str) -> HttpResponse:
    messages.error(request, f"Sign-in with {settings.STUDIO_OIDC_PROVIDER_NAME} failed: {reason}")
    return HttpResponseRedirect(reverse("login"))


class StudioOIDCAuthenticationRequestView(OIDCAuthenticationRequestView):
    """Sends the browser to the provider (state, nonce and a PKCE S256 challenge kept in the session)."""

    OIDC_OP_AUTH_ENDPOINT = _endpoint_property("authorization")

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("OpenID Connect is not configured.")
        try:
            return super().get(request)
        except ProviderUnavailable as exc:
            logger.warning("OpenID Connect sign-in could not start: %s", exc)
            return _refuse(request, "the provider cannot be reached.")


class StudioOIDCCallbackView(OIDCAuthenticationCallbackView):
    """The provider's redirect back. An unknown state, a wrong nonce, a failed token exchange or a
    refused user end on the login page with a message (never a 500), and the session stays signed
    out."""

    @property
    def failure_url(self) -> str:
        return reverse("login")

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("OpenID Connect is not configured.")
        if "error" in request.GET and request.GET.get("state") not in request.session.get("oidc_states", {}):
            # The library signs out whoever is signed in on any error answer; one that answers no
            # sign-in this browser started is a link anyone could send (logout CSRF): ignored.
            return _refuse(request, "the answer did not match this browser's sign-in.")
        try:
            response: HttpResponse = super().get(request)
        except (SuspiciousOperation, jwt.PyJWTError) as exc:
            # PyJWTError: an expired or not-yet-valid ID token, which the library does not catch.
            logger.warning(
                "OpenID Connect callback refused from %s: %s", request.META.get("REMOTE_ADDR"), exc
            )
            return _refuse(request, "the answer did not match this browser's sign-in.")
        except (requests.RequestException, ProviderUnavailable) as exc:
            logger.warning("OpenID Connect callback failed: %s", exc)
            return _refuse(request, "the provider could not be reached.")
        if not request.user.is_authenticated and request.GET.get("error") != "login_required":
            error = request.GET.get("error")
            return _refuse(
                request, f"the provider answered {error}." if error else "it could not be completed."
            )
        return response


def provider_logout_url(request: HttpRequest) -> str | None:
    """RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the provider's
    ``end_session_endpoint`` with the ID token as hint and the studio's login page to come back to;
    None when the session was not made by OpenID Connect or the provider advertises no such endpoint."""
    if not enabled() or request.session.get(BACKEND_SESSION_KEY) != BACKEND_PATH:
        return None
    try:
        end_session = endpoint("end_session", required=False)
    except ProviderUnavailable as exc:
        logger.warning("signing out of the studio only: %s", exc)
        return None
    if not end_session:
        return None
    params = {
        "client_id": settings.OIDC_RP_CLIENT_ID,
        "post_logout_redirect_uri": request.build_absolute_uri(str(settings.LOGOUT_REDIRECT_URL)),
    }
    id_token = request.session.get("oidc_id_token")
    if id_token:
        params["id_token_hint"] = id_token
    return f"{end_session}{'&' if '?' in end_session else '?'}{urlencode(params)}"


class StudioSessionRefresh(SessionRefresh):
    """Every ``STUDIO_OIDC_RECHECK_SECONDS`` a signed-in page load goes through the provider again
    with ``prompt=none``: a session the provider ended (logout elsewhere, user disabled) ends here
    then. API requests are not sent to the provider (a fetch cannot follow that redirect); they keep
    the session until the next page load re-checks it."""

    OIDC_OP_AUTHORIZATION_ENDPOINT = _endpoint_property("authorization")

    @cached_property
    def exempt_urls(self) -> set[str]:
        # The library's list names its own logout view, which the studio does not route.
        names = [url for url in settings.OIDC_EXEMPT_URLS if isinstance(url, str)]
        names += ["oidc_authentication_init", "oidc_authentication_callback"]
        return {url if url.startswith("/") else reverse(url) for url in names}

    def is_refreshable_url(self, request: HttpRequest) -> bool:
        return (
            enabled()
            and request.session.get(BACKEND_SESSION_KEY) == BACKEND_PATH
            and super().is_refreshable_url(request)
        )

    def process_request(self, request: HttpRequest) -> Any:
        try:
            return super().process_request(request)
        except ProviderUnavailable as exc:
            # The provider cannot be asked: keep the session rather than lock everyone out.
            logger.warning("OpenID Connect session re-check skipped: %s", exc)
            return None
