"""The API docs as a person opens them: rendered in the browser, with nothing fetched from elsewhere."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class RequestLog:
    """The hosts a page sent requests to. A request the page's Content-Security-Policy blocked never
    left the browser, so it does not count."""

    def __init__(self, page: Page) -> None:
        self._sent: Counter[str] = Counter()
        page.on("request", lambda request: self._sent.update([self._host(request)]))
        page.on("requestfailed", self._failed)

    @staticmethod
    def _host(request: Request) -> str:
        # A blob: URL (ReDoc's web worker) is made in the page itself; its host is the page's own.
        return urlsplit(request.url.removeprefix("blob:")).hostname or request.url

    def _failed(self, request: Request) -> None:
        if "csp" in (request.failure or "").lower():
            self._sent.subtract([self._host(request)])

    def hosts(self) -> set[str]:
        return {host for host, count in self._sent.items() if count > 0}


def test_swagger_ui_renders_the_schema_offline(user_page: Page, live_server: Any) -> None:
    log = RequestLog(user_page)
    user_page.goto(f"{live_server.url}/api/docs/")
    expect(user_page.locator(".swagger-ui .info .title")).to_contain_text("Inference Graph Studio API")
    expect(user_page.locator(".opblock-summary-path").first).to_be_visible()
    assert log.hosts() <= {urlsplit(live_server.url).hostname}, log.hosts()


def test_redoc_renders_the_schema_offline(user_page: Page, live_server: Any) -> None:
    log = RequestLog(user_page)
    user_page.goto(f"{live_server.url}/api/redoc/")
    expect(user_page.locator("h1").first).to_contain_text("Inference Graph Studio API")
    expect(user_page.get_by_text("Start a test run of a version").first).to_be_attached()
    assert log.hosts() <= {urlsplit(live_server.url).hostname}, log.hosts()


def test_the_header_links_to_swagger_grouped_by_topic_with_summaries(
    user_page: Page, live_server: Any
) -> None:
    user_page.goto(f"{live_server.url}/")
    user_page.get_by_role("navigation", name="Studio").get_by_role("link", name="API docs").click()
    expect(user_page).to_have_url(f"{live_server.url}/api/docs/")
    for tag in ("Graphs", "Versions", "Runs", "API tokens"):
        expect(user_page.locator(f'.opblock-tag[data-tag="{tag}"]')).to_be_visible()
    expect(
        user_page.locator(".opblock-summary-description", has_text="Save a new version").first
    ).to_be_visible()
