"""The password switch: with ``STUDIO_PASSWORD_LOGIN`` off no password authenticates anywhere
(the studio's login form, the admin's, anything else that calls ``authenticate``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest


class PasswordLoginSwitch:
    """First in ``AUTHENTICATION_BACKENDS``: refuses every password while password sign-in is off.

    ``PermissionDenied`` from a backend stops ``authenticate`` before Django's ModelBackend is asked.
    It authenticates nobody and has no ``get_user``: it never appears in a session, and sessions made
    by ModelBackend stay valid when the switch is flipped back. API tokens are not passwords (DRF's
    TokenAuthentication never calls ``authenticate``) and keep working."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if password is not None and not settings.STUDIO_PASSWORD_LOGIN:
            raise PermissionDenied("Password sign-in is switched off (STUDIO_PASSWORD_LOGIN=0).")
        return None
