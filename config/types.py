"""Typing helpers for the Django side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.request import Request

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    class AuthedRequest(Request):
        """A request that passed ``IsAuthenticated`` (the default permission): its user is real."""

        @property
        def user(self) -> User: ...

        @user.setter
        def user(self, value: User) -> None: ...

else:
    AuthedRequest = Request
