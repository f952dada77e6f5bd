"""The studio's icon: where browsers look for it (``/favicon.ico``), signed in or not, and linked
from the studio's pages."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_the_icon_answers_at_favicon_ico_signed_out() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg") and b"</svg>" in response.content
    assert "max-age" in response["Cache-Control"]
    assert Client().post("/favicon.ico").status_code == 405


@pytest.mark.django_db
def test_the_pages_link_the_icon() -> None:
    page = Client().get("/login/")
    assert page.status_code == 200
    assert b'<link rel="icon" type="image/svg+xml" href="/favicon.ico">' in page.content
