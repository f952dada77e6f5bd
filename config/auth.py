"""Login with a cap on failed attempts per client address and username, the single sign-on button
(config/sso), the switch that turns the password form off, logout that ends the provider's
session too, and the API's token authentication (personal API tokens and DRF authtoken keys)."""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import urlencode
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from config.sso import oidc


def normalise_username(raw: str) -> str:
    """The one spelling of every name an attacker could use for the same account.

    Django's login form applies NFKC to the username (``UsernameField.to_python``) and strips it;
    casefold on top makes ``ALICE``, ``Alice`` and fullwidth ``alice`` one name. NFKC again after casefold,
    because casefolding can produce characters NFKC would still change.
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", raw).strip().casefold())


def _key(request: HttpRequest) -> str:
    # Hashed: the name is attacker-chosen text, and cache backends such as memcached refuse keys
    # with spaces or control characters.
    name = hashlib.sha256(normalise_username(request.POST.get("username") or "").encode()).hexdigest()
    return f"login-failures:{request.META.get('REMOTE_ADDR', '')}:{name}"


class RateLimitedLoginView(auth_views.LoginView):
    """Django's LoginView; after ``LOGIN_MAX_FAILURES`` failures in ``LOGIN_FAILURE_WINDOW`` seconds
    for one client address and username (any spelling of it, see :func:`normalise_username`),
    further attempts answer 429 until the window passes."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["password_login"] = settings.STUDIO_PASSWORD_LOGIN
        if oidc.enabled():
            next_url = context.get("next") or ""
            query = f"?{urlencode({'next': next_url})}" if next_url else ""
            context["oidc_login_url"] = reverse("oidc_authentication_init") + query
            context["oidc_provider_name"] = settings.STUDIO_OIDC_PROVIDER_NAME
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.STUDIO_PASSWORD_LOGIN:
            # The form is hidden; a password posted anyway is refused here (and by
            # config.sso.backends.PasswordLoginSwitch for every other form).
            response = self.render_to_response(self.get_context_data(password_refused=True))
            response.status_code = 403
            return response
        key = _key(request)
        if cache.get(key, 0) >= settings.LOGIN_MAX_FAILURES:
            form = self.get_form()
            form.add_error(None, "Too many failed sign-in attempts. Wait a few minutes and try again.")
            response = self.render_to_response(self.get_context_data(form=form))
            response.status_code = 429
            return response
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: the password was wrong
            cache.add(key, 0, settings.LOGIN_FAILURE_WINDOW)
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, settings.LOGIN_FAILURE_WINDOW)
        else:
            cache.delete(key)
        return response


class StudioLogoutView(auth_views.LogoutView):
    """Django's LogoutView (POST only); a session made by OpenID Connect is then sent to the
    provider's ``end_session_endpoint`` to end the provider's session as well, when it has one."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        provider_logout = oidc.provider_logout_url(request)
        response = super().post(request, *args, **kwargs)
        if provider_logout:
            return HttpResponseRedirect(provider_logout)
        return response


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's login page; with password sign-in off, the studio's (which offers single sign-on)
    instead of a password form that could only fail."""
    if not settings.STUDIO_PASSWORD_LOGIN:
        return auth_views.redirect_to_login(request.GET.get("next") or reverse("admin:index"))
    return admin.site.login(request)


class PersonalTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` for both kinds of key: a personal API token (``igs_…``,
    stored hashed, graphs/tokens.py) or a DRF authtoken key (``drf_create_token``). A revoked
    key is 401 "Invalid token."; an expired one is 401 saying when it expired."""

    def authenticate_credentials(self, key: str) -> tuple[Any, None]:
        from graphs import tokens  # the app's models: not importable while settings load

        if not tokens.is_personal_key(key):
            return super().authenticate_credentials(key)  # type: ignore[no-any-return]
        try:
            return tokens.api_token_authenticate(key), None
        except tokens.TokenRejected as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from exc
