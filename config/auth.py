"""Login with a cap on failed attempts per client address and username."""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


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

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
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
