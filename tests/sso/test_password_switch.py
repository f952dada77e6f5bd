"""STUDIO_PASSWORD_LOGIN=0: no password form, no password accepted anywhere; API tokens still work."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client

pytestmark = pytest.mark.django_db


def test_password_sign_in_works_by_default(user: Any) -> None:
    client = Client()
    assert 'name="password"' in client.get("/login/").content.decode()
    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 302 and client.session.get(SESSION_KEY)


def test_switched_off_the_form_is_gone_and_a_posted_password_is_refused(settings: Any, user: Any) -> None:
    settings.STUDIO_PASSWORD_LOGIN = False
    client = Client()
    page = client.get("/login/").content.decode()
    assert 'name="password"' not in page
    assert "Password sign-in is switched off" in page
    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 403
    assert SESSION_KEY not in client.session


def test_switched_off_the_admin_refuses_passwords_too(settings: Any, user: Any) -> None:
    user.is_staff = user.is_superuser = True
    user.save()
    settings.STUDIO_PASSWORD_LOGIN = False
    client = Client()
    client.post("/admin/login/", {"username": "alice", "password": "alice-password-1", "next": "/admin/"})
    assert SESSION_KEY not in client.session


def test_switched_off_api_tokens_keep_working(settings: Any, api: Any) -> None:
    settings.STUDIO_PASSWORD_LOGIN = False
    assert api.get("/api/graphs/").status_code == 200


def test_a_session_made_before_the_switch_stays_valid(settings: Any, user: Any) -> None:
    """The switch refuses new passwords; it does not sign out who is already in."""
    client = Client()
    client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    settings.STUDIO_PASSWORD_LOGIN = False
    assert client.get("/").status_code == 200


def test_switched_off_the_admin_sends_people_to_the_studio_sign_in(settings: Any) -> None:
    """The admin's own password form would only fail: its login leads to the studio's page, where
    single sign-on is offered."""
    settings.STUDIO_PASSWORD_LOGIN = False
    response = Client().get("/admin/login/?next=/admin/graphs/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/admin/graphs/"
    settings.STUDIO_PASSWORD_LOGIN = True
    assert Client().get("/admin/login/").status_code == 200
