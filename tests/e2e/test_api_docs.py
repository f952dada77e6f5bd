"""The API docs as a person opens them: rendered in the browser, with nothing fetched from elsewhere."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _hosts_requested(page: Page) -> set[str]:
    hosts: set[str] = set()
    # A blob: URL (ReDoc's web worker) is made in the page itself; its host is the page's own.
    page.on(
        "request",
        lambda request: hosts.add(urlsplit(request.url.removeprefix("blob:")).hostname or request.url),
    )
    return hosts


def test_swagger_ui_renders_the_schema_offline(user_page: Page, live_server: Any) -> None:
    hosts = _hosts_requested(user_page)
    user_page.goto(f"{live_server.url}/api/docs/")
    expect(user_page.locator(".swagger-ui .info .title")).to_contain_text("Inference Graph Studio API")
    expect(user_page.locator(".opblock-summary-path").first).to_be_visible()
    assert hosts <= {urlsplit(live_server.url).hostname}, hosts


def test_redoc_renders_the_schema_offline(user_page: Page, live_server: Any) -> None:
    hosts = _hosts_requested(user_page)
    user_page.goto(f"{live_server.url}/api/redoc/")
    expect(user_page.locator("h1").first).to_contain_text("Inference Graph Studio API")
    assert hosts <= {urlsplit(live_server.url).hostname}, hosts
