"""The deploy targets page: create a target with credentials (the password is never shown again),
see a field error where the API puts it, and delete it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_create_edit_and_delete_a_deploy_target(user_page: Any, live_server: Any) -> None:
    page = user_page
    page.goto(f"{live_server.url}/deploy-targets/")
    expect(page.get_by_text("No deploy targets yet.")).to_be_visible()
    page.get_by_role("button", name="New deploy target").click()
    page.get_by_label("Name", exact=True).fill("prod")
    page.get_by_label("Repository URL").fill("ftp://git.example.org/cluster.git")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#target-url-error")).to_contain_text("not a file://")

    page.get_by_label("Repository URL").fill("https://git.example.org/platform/cluster.git")
    page.get_by_label("User name (HTTPS)").fill("studio-bot")
    page.get_by_label("Password or token").fill("tok-never-shown")
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".env-notice")).to_have_text("Created deploy target prod.")
    row = page.get_by_role("row", name="prod")
    expect(row).to_contain_text("main · graphs/{namespace}/{name}.yaml")

    page.get_by_role("button", name="Edit prod").click()
    expect(page.get_by_label("Password or token (set; type a new one to replace it)")).to_have_value("")
    assert "tok-never-shown" not in page.content()
    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Delete prod").click()
    page.get_by_role("dialog", name="Delete deploy target").get_by_role("button", name="Delete").click()
    expect(page.locator(".env-notice")).to_have_text("Deleted deploy target prod.")
