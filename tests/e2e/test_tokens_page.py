"""The API tokens page: reached from the header, create a named token, its key shown once with a
copy button and a ready curl line that works, then gone after a reload; revoke it (then 401)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_create_copy_once_and_revoke_a_token(user_page: Page, live_server: Any, studio_user: Any) -> None:
    from graphs.models import ApiToken

    page = user_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="API tokens").click()
    expect(page.get_by_role("heading", name="API tokens", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="API docs").first).to_have_attribute("href", "/api/docs/")
    expect(page.get_by_text("No API tokens yet.")).to_be_visible()

    page.get_by_label("Name").fill("ci-pipeline")
    page.get_by_label("Expires").select_option(label="30 days")
    page.get_by_role("button", name="Create token").click()

    key_box = page.get_by_test_id("token-key")
    expect(key_box).to_have_text(re.compile(r"^igs_[A-Za-z0-9_-]{40,}$"))
    key = key_box.inner_text()
    row = page.get_by_role("row", name=re.compile(r"^ci-pipeline"))
    expect(row).to_be_visible()
    expect(row).to_contain_text(key[:12])
    expect(row).not_to_contain_text(key)

    page.get_by_role("button", name="Copy key").click()
    expect(page.get_by_role("status").filter(has_text="Key copied.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == key

    curl = page.get_by_test_id("token-curl").inner_text()
    assert curl == f"curl -H 'Authorization: Token {key}' '{live_server.url}/api/graphs/'"
    headers = {"Authorization": f"Token {key}"}
    assert httpx.get(f"{live_server.url}/api/graphs/", headers=headers, timeout=10).status_code == 200

    token = ApiToken.objects.get()
    assert token.user == studio_user and token.name == "ci-pipeline" and token.expires_at is not None

    # Shown once: after a reload the key is nowhere on the page.
    page.reload()
    expect(page.get_by_role("row", name=re.compile(r"^ci-pipeline"))).to_be_visible()
    expect(page.get_by_test_id("token-key")).to_have_count(0)
    assert key not in page.content()

    page.get_by_role("button", name="Revoke ci-pipeline").click()
    page.get_by_role("button", name="Confirm revoke").click()
    expect(page.get_by_role("status").filter(has_text="Revoked token ci-pipeline")).to_be_visible()
    expect(page.get_by_text("No API tokens yet.")).to_be_visible()
    assert not ApiToken.objects.exists()
    assert httpx.get(f"{live_server.url}/api/graphs/", headers=headers, timeout=10).status_code == 401
