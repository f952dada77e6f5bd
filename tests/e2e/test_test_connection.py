"""Test connection in the browser: the environments page and the Run panel's environment picker
probe the services (the real mock model server on loopback) and show each one's outcome, errors
in words; the button works from the keyboard."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import open_tab, wait_checked
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def probe_env(studio_user: Any, mock_server: Any, settings: Any) -> Any:
    from execution.models import Environment

    settings.PROBE_TIMEOUT = 1.0
    base = mock_server.url.rstrip("/")
    return Environment.objects.create(
        name="cluster",
        owner=studio_user,
        allow_loopback=True,
        service_urls={
            "classifier": f"{base}/v1/models/cat-dog-classifier:predict",
            "merger": f"{base}/v2/models/result-merger/infer",
            "metadata": "http://169.254.169.254/v1/models/x:predict",
        },
    )


def test_the_environments_page_tests_the_connection_of_each_service(
    user_page: Page, live_server: Any, probe_env: Any
) -> None:
    page = user_page
    page.goto(f"{live_server.url}/environments/")
    button = page.get_by_role("button", name="Test connection of cluster")
    button.focus()
    page.keyboard.press("Enter")
    results = page.get_by_role("list", name="Connection test of cluster")
    expect(results).to_be_visible()
    expect(page.get_by_text("cluster: 2 of 3 services ready")).to_be_visible()
    items = results.get_by_role("listitem")
    expect(items).to_have_count(3)
    expect(items.filter(has_text="classifier")).to_contain_text(re.compile(r"ready\s+v1"))
    merger = items.filter(has_text="merger")
    expect(merger).to_contain_text("v2 · studio-mock")
    expect(merger).to_contain_text("inputs: input-0 BYTES [-1]")
    blocked = items.filter(has_text="169.254.169.254")
    expect(blocked).to_contain_text("blocked by the URL guard")
    expect(blocked).to_contain_text("link-local/metadata address")


def test_the_run_panel_tests_the_chosen_environment_with_the_graphs_services(
    user_page: Page,
    live_server: Any,
    make_graph: Any,
    mock_server: Any,
    settings: Any,
    open_editor: Any,
    studio_user: Any,
) -> None:
    from execution.models import Environment
    from execution.services import environments

    settings.MOCKMODELS_URL = mock_server.url
    environments.ensure_local_environment()
    Environment.objects.create(name="elsewhere", owner=studio_user, url_template="http://{name}.x/predict")
    make_graph(
        "probed",
        {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"serviceName": "echo"},
                    {"serviceName": "sentiment-v1", "data": "$response"},
                    {"serviceName": "no-such-model"},
                ],
            }
        },
    )
    page = user_page
    open_editor(page, "probed")
    open_tab(page, "Run")
    # The serviceNames' protocols are unknown before the probe: no edge-contract warning yet.
    expect(wait_checked(page)).to_have_text("Valid")
    page.get_by_role("button", name="Test connection of local").click()
    results = page.get_by_role("list", name="Connection test of local")
    expect(results.get_by_role("listitem")).to_have_count(3)
    expect(results.get_by_role("listitem").filter(has_text="echo")).to_contain_text("ready")
    expect(results.get_by_role("listitem").filter(has_text="no-such-model")).to_contain_text(
        "not a model server"
    )
    # Now both ends of echo -> sentiment-v1 are known v1 servers: the live validation warns.
    expect(page.locator(".valid-chip")).to_have_text("1 warning")
    open_tab(page, "Problems")
    expect(page.get_by_role("list", name="Problems")).to_contain_text("contract.predictions-to-instances")
    # Another environment may map the services elsewhere: what the probe found no longer applies.
    open_tab(page, "Run")
    page.get_by_label("Environment", exact=True).select_option("elsewhere")
    expect(page.locator(".valid-chip")).to_have_text("Valid")
