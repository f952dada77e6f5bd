"""Audit rows for sign-ins and sign-outs: who, and how (``password``, ``oidc`` or ``proxy``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.dispatch import receiver
from django.http import HttpRequest

from graphs.services import audit

# The backend a session was made by -> how the user signed in. Anything else (a test's force_login,
# a backend added later) is recorded by its dotted path.
_METHODS = {
    "django.contrib.auth.backends.ModelBackend": "password",
    "config.sso.oidc.StudioOIDCBackend": "oidc",
    "config.sso.proxy.TrustedProxyBackend": "proxy",
}


def sign_in_method(backend_path: str) -> str:
    return _METHODS.get(backend_path, backend_path)


def _client(request: HttpRequest | None) -> str:
    return str(request.META.get("REMOTE_ADDR", "")) if request is not None else ""


@receiver(user_logged_in, dispatch_uid="studio-sso-audit-login")
def _audit_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    method = sign_in_method(getattr(user, "backend", "") or "")
    audit(user, "user.signed_in", method=method, remote_addr=_client(request))


@receiver(user_logged_out, dispatch_uid="studio-sso-audit-logout")
def _audit_logout(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if user is not None and user.is_authenticated:
        audit(user, "user.signed_out", remote_addr=_client(request))
