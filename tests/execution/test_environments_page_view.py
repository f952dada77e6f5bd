"""The environments page (``/environments/``): the app shell of the ``environments`` bundle, for
signed-in users only, telling the page whether the user is staff."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def studio_config(html: str) -> dict[str, object]:
    found = re.search(r'<script id="studio-config" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None, "the page has no studio-config"
    return dict(json.loads(found.group(1)))


def test_signed_out_the_page_leads_to_the_login_page() -> None:
    response = Client().get("/environments/")
    assert (response.status_code, response["Location"]) == (302, "/login/?next=/environments/")


@pytest.mark.parametrize("is_staff", [False, True])
def test_the_page_mounts_the_environments_bundle_and_says_whether_the_user_is_staff(is_staff: bool) -> None:
    client = Client()
    client.force_login(get_user_model().objects.create_user("erin", password="x-pw-1", is_staff=is_staff))
    response = client.get("/environments/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "assets/environments.js" in html and "assets/environments.css" in html
    config = studio_config(html)
    assert (config["user"], config["isStaff"]) == ("erin", is_staff)
