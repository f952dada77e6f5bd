"""Login with a cap on failed attempts per client address and username."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


def _key(request: HttpRequest) -> str:
    username = (request.POST.get("username") or "").strip().lower()[:150]
    return f"login-failures:{request.META.get('REMOTE_ADDR', '')}:{username}"


class RateLimitedLoginView(auth_views.LoginView):
    """Django's LoginView; after ``LOGIN_MAX_FAILURES`` failures in ``LOGIN_FAILURE_WINDOW`` seconds
    for one address and username, further attempts answer 429 until the window passes."""

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
