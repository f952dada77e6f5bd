"""axe-core (frontend devDependency, pinned) on the list, editor and console pages: no serious
or critical violations (issue 14, Tests). axe runs inside the page, loaded from node_modules: no
request leaves the machine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parents[2] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"

SWITCH = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "greet", "serviceName": "success-200"},
            {"name": "route", "nodeName": "pick"},
        ],
    },
    "pick": {
        "routerType": "Switch",
        "steps": [{"name": "cats", "serviceName": "echo", "condition": "instances"}],
    },
}


def serious_violations(page: Page) -> list[str]:
    """axe's serious and critical violations on the page, one line each (rule: first targets)."""
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `cd frontend && npm ci` (axe-core is a devDependency).")
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ["violations"] })).violations
            .filter(v => v.impact === "serious" || v.impact === "critical")
            .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")}`)"""
    )
    return [str(x) for x in found]


def test_list_and_editor_pages_have_no_serious_accessibility_violations(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any
) -> None:
    page = user_page
    make_graph("a11y", nodes=SWITCH)
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("link", name="a11y")).to_be_visible()
    assert serious_violations(page) == []

    open_editor(page, "a11y", cards=2)
    assert serious_violations(page) == []
    page.get_by_role("tab", name="YAML").click()
    expect(page.locator(".cm-content")).to_be_visible()
    assert serious_violations(page) == []


def test_flow_view_has_no_serious_accessibility_violations(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    """The editor's default view, its boxes, group frame, arrow labels and a selected box's actions."""
    page = flow_page
    make_graph("a11y-flow", nodes=SWITCH)
    page.goto(f"{live_server.url}/graphs/a11y-flow/")
    expect(page.locator(".flow-canvas[data-laid-out] .flow-group")).to_be_visible()
    assert serious_violations(page) == []
    page.locator('.flow-box[data-box="root/0"] .flow-box-body').click()
    expect(page.get_by_role("toolbar", name="Actions for greet")).to_be_visible()
    assert serious_violations(page) == []


def test_console_page_has_no_serious_accessibility_violations(
    stack: Any, user_page: Page, make_graph: Any, open_editor: Any
) -> None:
    page = user_page
    make_graph("a11y-run", nodes=SWITCH)
    open_editor(page, "a11y-run", cards=2)
    page.get_by_role("tab", name="Run").click()
    page.get_by_label("Payload (JSON)").fill('{"instances": [1]}')
    page.get_by_role("button", name="Run", exact=True).click()
    console = page.get_by_role("region", name="Run console")
    expect(console.locator(".run-status")).to_have_text("succeeded", timeout=30_000)
    console.locator(".console-step .console-line-head").first.click()
    assert serious_violations(page) == []


def test_environments_page_has_no_serious_accessibility_violations(
    user_page: Page, live_server: Any, transactional_db: None
) -> None:
    """The list, the system default shown read-only, and a new environment's form with the API's
    errors pinned to its fields."""
    from execution.services import environments

    environments.ensure_local_environment()
    page = user_page
    page.goto(f"{live_server.url}/environments/")
    expect(page.get_by_role("row", name=re.compile(r"^local"))).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_role("button", name="View local").click()
    expect(page.get_by_role("heading", name="View environment local")).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="New environment").click()
    page.get_by_label("Name", exact=True).fill("a11y-env")
    page.get_by_role("button", name="Add header pattern").click()
    page.get_by_role("button", name="Create environment").click()
    expect(page.get_by_label("Header pattern 1", exact=True)).to_have_attribute("aria-invalid", "true")
    assert serious_violations(page) == []


def test_tokens_page_has_no_serious_accessibility_violations(
    user_page: Page, live_server: Any, transactional_db: None
) -> None:
    """The empty list, then a new token's key shown once with its copy buttons, and the revoke dialog."""
    page = user_page
    page.goto(f"{live_server.url}/tokens/")
    expect(page.get_by_text("No API tokens yet.")).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_label("Name").fill("a11y-token")
    page.get_by_role("button", name="Create token").click()
    expect(page.get_by_test_id("token-key")).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_role("button", name="Revoke a11y-token").click()
    expect(page.get_by_role("button", name="Confirm revoke")).to_be_visible()
    assert serious_violations(page) == []


def test_deploy_targets_page_has_no_serious_accessibility_violations(
    user_page: Page, live_server: Any, transactional_db: None
) -> None:
    """The empty list, then a new target's form with the API's error pinned to its field."""
    page = user_page
    page.goto(f"{live_server.url}/deploy-targets/")
    expect(page.get_by_text("No deploy targets yet.")).to_be_visible()
    assert serious_violations(page) == []

    page.get_by_role("button", name="New deploy target").click()
    page.get_by_label("Name", exact=True).fill("a11y-target")
    page.get_by_label("Repository URL").fill("ftp://nowhere")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_label("Repository URL")).to_have_attribute("aria-invalid", "true")
    assert serious_violations(page) == []
