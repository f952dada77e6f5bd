"""The KServe release of an environment on the Environments page: chosen when creating, shown in
the list, and an error pinned to the field when the headers do not suit the release; the editor's
live validation against the release of the environment chosen in the Run panel; and the release a
run used, in its console."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import open_tab
from conftest import manifest_of
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def local_environment(transactional_db: None) -> Any:
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


def test_choose_the_kserve_release_of_an_environment(
    user_page: Page, live_server: Any, local_environment: Any
) -> None:
    from execution.models import Environment

    page = user_page
    page.goto(f"{live_server.url}/environments/")
    expect(page.get_by_role("row", name=re.compile(r"^local"))).to_contain_text("KServe master")

    page.get_by_role("button", name="New environment").click()
    page.get_by_label("Name", exact=True).fill("old-cluster")
    release = page.get_by_label("KServe release of the cluster")
    expect(release).to_have_value("master")
    release.select_option("v0.11.2")
    page.get_by_role("button", name="Add header pattern").click()
    page.get_by_label("Header pattern 1", exact=True).fill("^X-Request-Id$")
    page.get_by_role("button", name="Create environment").click()
    # v0.11 compares header names exactly: the pattern is refused on its row.
    expect(page.locator("#env-propagate_headers-0-error")).to_contain_text(
        "KServe v0.11.2 compares header names exactly"
    )
    expect(page.get_by_label("Header pattern 1", exact=True)).to_have_attribute("aria-invalid", "true")
    assert not Environment.objects.filter(name="old-cluster").exists()

    page.get_by_label("Header pattern 1", exact=True).fill("X-Request-Id")
    page.get_by_role("button", name="Create environment").click()
    expect(page.get_by_role("status").filter(has_text="Created environment old-cluster")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(r"^old-cluster"))).to_contain_text("KServe v0.11.2")
    assert Environment.objects.get(name="old-cluster").kserve_version == "v0.11.2"

    page.get_by_role("button", name="Edit old-cluster").click()
    expect(page.get_by_label("KServe release of the cluster")).to_have_value("v0.11.2")
    page.get_by_label("KServe release of the cluster").select_option("v0.16.0")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved environment old-cluster")).to_be_visible()
    assert Environment.objects.get(name="old-cluster").kserve_version == "v0.16.0"


def test_the_editor_checks_the_graph_against_the_release_of_the_run_environment(
    user_page: Page, open_editor: Any, studio_user: Any, local_environment: Any
) -> None:
    from execution.services import environments
    from graphs import services

    environments.environment_create(owner=studio_user, name="old-cluster", kserve_version="v0.15.2")
    manifest = manifest_of(
        "timed", {"root": {"routerType": "Sequence", "steps": [{"name": "one", "serviceName": "echo"}]}}
    )
    manifest["spec"]["routerTimeouts"] = {"serviceClient": 5}
    services.graph_create(
        owner=studio_user, name="timed", description="", manifest=manifest, layout={}, message="Created"
    )
    page = user_page
    open_editor(page, "timed", cards=1)
    open_tab(page, "Run")
    environment = page.get_by_label("Environment", exact=True)
    expect(environment).to_have_value("local")
    open_tab(page, "Problems")
    expect(page.get_by_text("No problems. KServe would accept this graph.")).to_be_visible()

    # KServe v0.15 has no routerTimeouts: running there, the graph has an error naming the release.
    open_tab(page, "Run")
    environment.select_option("old-cluster")
    open_tab(page, "Problems")
    problem = page.get_by_role("list", name="Problems").get_by_role("listitem")
    expect(problem).to_have_count(1)
    expect(problem).to_contain_text(
        "spec.routerTimeouts is not in KServe v0.15.2's InferenceGraph CRD (it arrived in v0.16.0)"
    )

    open_tab(page, "Run")
    environment.select_option("local")
    open_tab(page, "Problems")
    expect(page.get_by_text("No problems. KServe would accept this graph.")).to_be_visible()


def test_the_run_console_shows_the_release_a_run_used(
    stack: Any, mock_server: Any, user_page: Page, make_graph: Any, open_editor: Any
) -> None:
    from execution.models import Environment

    Environment.objects.create(
        name="old-cluster",
        visibility="shared",
        url_template=f"{mock_server.url}/v1/models/{{name}}:predict",
        allow_loopback=True,
        kserve_version="v0.14.1",
    )
    make_graph(
        "echoes",
        nodes={"root": {"routerType": "Sequence", "steps": [{"name": "one", "serviceName": "echo"}]}},
    )
    page = user_page
    open_editor(page, "echoes", cards=1)
    open_tab(page, "Run")
    page.get_by_label("Payload (JSON)").fill('{"instances": [1]}')
    page.get_by_label("Environment", exact=True).select_option("old-cluster")
    page.get_by_role("button", name="Run", exact=True).click()
    console = page.get_by_role("region", name="Run console")
    expect(console.locator(".run-status")).to_have_text("succeeded", timeout=30_000)
    expect(console.locator(".console-title")).to_contain_text("old-cluster · KServe v0.14.1")
    expect(console).to_contain_text("in environment old-cluster, as KServe v0.14.1's router.")
