"""The environments page: create, a validation error pinned to its field, edit,
delete, the system default that cannot be deleted, and the editor's "Manage environments" link."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = {"root": {"routerType": "Sequence", "steps": [{"name": "one", "serviceName": "echo"}]}}


@pytest.fixture
def local_environment(transactional_db: None) -> Any:
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


def open_environments(page: Page, live_server: Any, query: str = "") -> None:
    page.goto(f"{live_server.url}/environments/{query}")
    expect(page.get_by_role("heading", name="Environments", level=1)).to_be_visible()


def test_create_edit_and_delete_an_environment(
    user_page: Page, live_server: Any, local_environment: Any
) -> None:
    from execution.models import Environment

    page = user_page
    open_environments(page, live_server)
    expect(page.get_by_role("row", name=re.compile(r"^local"))).to_be_visible()

    page.get_by_role("button", name="New environment").click()
    page.get_by_label("Name", exact=True).fill("staging")
    page.get_by_label("Description").fill("the staging cluster")
    page.get_by_role("button", name="Add service").click()
    page.get_by_label("Service name 1", exact=True).fill("echo")
    page.get_by_label("Service URL 1", exact=True).fill("http://127.0.0.1:9010/v1/models/echo:predict")
    page.get_by_role("button", name="Add header pattern").click()
    page.get_by_label("Header pattern 1", exact=True).fill("^X-Request-Id$")
    page.get_by_label("Step timeout (seconds)").fill("5")
    page.get_by_label("Allow loopback (this machine)").check()
    page.get_by_role("button", name="Add allowed network").click()
    page.get_by_label("Allowed network 1", exact=True).fill("10.1.0.0/16")
    page.get_by_role("button", name="Create environment").click()

    expect(page.get_by_role("status").filter(has_text="Created environment staging")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(r"^staging"))).to_be_visible()
    created = Environment.objects.get(name="staging")
    assert created.owner is not None and created.owner.username == "erin"
    assert created.service_urls == {"echo": "http://127.0.0.1:9010/v1/models/echo:predict"}
    assert (created.propagate_headers, created.step_timeout, created.deadline) == (
        ["^X-Request-Id$"],
        5.0,
        60.0,
    )
    assert (created.allow_loopback, created.allow_private, created.allow_networks) == (
        True,
        False,
        ["10.1.0.0/16"],
    )
    assert created.visibility == "private"

    page.get_by_role("button", name="Edit staging").click()
    expect(page.get_by_label("Name", exact=True)).to_have_value("staging")
    page.get_by_label("Deadline (seconds)").fill("90")
    page.get_by_role("button", name="Remove service 1").click()
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved environment staging")).to_be_visible()
    created.refresh_from_db()
    assert (created.deadline, created.service_urls) == (90.0, {})

    page.get_by_role("button", name="Delete staging").click()
    page.get_by_role("dialog", name="Delete environment").get_by_role("button", name="Confirm delete").click()
    expect(page.get_by_role("status").filter(has_text="Deleted environment staging")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(r"^staging"))).to_have_count(0)
    assert not Environment.objects.filter(name="staging").exists()


def test_the_apis_validation_errors_are_shown_next_to_the_field_they_name(
    user_page: Page, live_server: Any, local_environment: Any
) -> None:
    """An empty header pattern (propagate_headers[1]), a network that is not a CIDR and a service
    URL that is not http(s) are refused by the API; each message appears under its own row, and
    nothing is created."""
    from execution.models import Environment

    page = user_page
    open_environments(page, live_server)
    page.get_by_role("button", name="New environment").click()
    page.get_by_label("Name", exact=True).fill("broken")
    for _ in range(2):
        page.get_by_role("button", name="Add header pattern").click()
    page.get_by_label("Header pattern 1", exact=True).fill("^X-Ok$")
    # Header pattern 2 stays empty: an empty pattern would forward every header.
    for _ in range(2):
        page.get_by_role("button", name="Add allowed network").click()
    # Network row 1 stays blank: it is not sent, and the API's index 0 is the form's row 2.
    page.get_by_label("Allowed network 2", exact=True).fill("not-a-network")
    page.get_by_role("button", name="Add service").click()
    page.get_by_label("Service name 1", exact=True).fill("echo")
    page.get_by_label("Service URL 1", exact=True).fill("ftp://models.test/echo")
    page.get_by_role("button", name="Create environment").click()

    expect(page.get_by_role("alert").filter(has_text="Not saved")).to_be_visible()
    pattern = page.get_by_label("Header pattern 2", exact=True)
    expect(pattern).to_have_attribute("aria-invalid", "true")
    expect(pattern).to_have_accessible_description(re.compile("empty pattern matches every header name"))
    expect(page.get_by_label("Header pattern 1", exact=True)).not_to_have_attribute("aria-invalid", "true")
    network = page.get_by_label("Allowed network 2", exact=True)
    expect(network).to_have_accessible_description(re.compile("'not-a-network' is not a network"))
    expect(page.get_by_label("Allowed network 1", exact=True)).not_to_have_attribute("aria-invalid", "true")
    service = page.get_by_label("Service URL 1", exact=True)
    expect(service).to_have_accessible_description(re.compile("is not an http:// or https:// URL"))
    assert not Environment.objects.filter(name="broken").exists()

    # Mended, it saves.
    page.get_by_role("button", name="Remove header pattern 2").click()
    page.get_by_label("Allowed network 2", exact=True).fill("10.0.0.0/8")
    service.fill("http://models.test/echo")
    page.get_by_role("button", name="Create environment").click()
    expect(page.get_by_role("status").filter(has_text="Created environment broken")).to_be_visible()
    assert Environment.objects.get(name="broken").allow_networks == ["10.0.0.0/8"]


def test_the_system_default_is_shown_as_such_and_cannot_be_deleted_or_changed_by_a_user(
    user_page: Page, live_server: Any, local_environment: Any
) -> None:
    page = user_page
    open_environments(page, live_server)
    row = page.get_by_role("row", name=re.compile(r"^local"))
    expect(row.get_by_text("system default")).to_be_visible()
    delete = row.get_by_role("button", name="Delete local")
    expect(delete).to_be_disabled()
    expect(delete).to_have_accessible_description(re.compile("cannot be deleted"))

    row.get_by_role("button", name="View local").click()
    expect(
        page.get_by_text("Read-only: The system's default environment: only staff may change it.")
    ).to_be_visible()
    expect(page.get_by_label("Name", exact=True)).to_be_disabled()
    expect(page.get_by_role("button", name="Save changes")).to_be_disabled()


def test_staff_change_the_system_default_but_not_its_name(
    login: Any, live_server: Any, local_environment: Any
) -> None:
    from django.contrib.auth import get_user_model

    from execution.models import Environment

    admin = get_user_model().objects.create_user("ada", password="x-e2e-pw-2", is_staff=True)
    page = login(admin)
    open_environments(page, live_server, "?edit=local")
    expect(page.get_by_role("heading", name="Edit environment local")).to_be_visible()
    expect(page.get_by_label("Name", exact=True)).to_be_disabled()
    expect(page.get_by_role("radio", name=re.compile("^Private"))).to_be_disabled()
    expect(page.get_by_role("button", name="Delete local")).to_be_disabled()
    page.get_by_label("Step timeout (seconds)").fill("12")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved environment local")).to_be_visible()
    assert Environment.objects.get(name="local").step_timeout == 12.0


def test_sharing_is_disabled_with_its_reason_for_a_user_who_is_not_staff(
    user_page: Page, live_server: Any, local_environment: Any
) -> None:
    page = user_page
    open_environments(page, live_server)
    page.get_by_role("button", name="New environment").click()
    expect(page.get_by_role("radio", name=re.compile("^Private"))).to_be_checked()
    expect(page.get_by_role("radio", name=re.compile("^Shared"))).to_be_disabled()
    expect(page.get_by_text("Only staff may share an environment")).to_be_visible()


def test_the_editors_manage_environments_link_opens_the_page_and_the_picker_follows_its_changes(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any, local_environment: Any
) -> None:
    page = user_page
    make_graph("env-link", nodes=ROOT)
    open_editor(page, "env-link", cards=1)
    page.get_by_role("tab", name="Run").click()
    expect(page.get_by_label("Environment", exact=True)).to_have_value("local")
    with page.context.expect_page() as opened:
        page.get_by_role("link", name=re.compile("^Manage environments")).click()
    environments = opened.value
    expect(environments.get_by_role("heading", name="Environments", level=1)).to_be_visible()
    assert environments.url == f"{live_server.url}/environments/?edit=local"
    expect(environments.get_by_role("heading", name="View environment local")).to_be_visible()

    # An environment made there is offered by the editor's picker once the editor has focus again.
    environments.get_by_role("button", name="New environment").click()
    environments.get_by_label("Name", exact=True).fill("from-the-editor")
    environments.get_by_role("button", name="Create environment").click()
    expect(environments.get_by_role("status").filter(has_text="Created environment")).to_be_visible()
    environments.close()
    page.bring_to_front()
    page.evaluate("window.dispatchEvent(new Event('focus'))")  # headless windows get no focus event
    page.get_by_label("Environment", exact=True).select_option("from-the-editor")
    expect(page.get_by_label("Environment", exact=True)).to_have_value("from-the-editor")


def test_the_header_leads_to_the_environments_page(user_page: Page, live_server: Any) -> None:
    page = user_page
    page.goto(f"{live_server.url}/")
    page.get_by_role("navigation", name="Studio").get_by_role("link", name="Environments").click()
    expect(page.get_by_role("heading", name="Environments", level=1)).to_be_visible()
