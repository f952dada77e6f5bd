"""A run opens on the version it ran: "Open run" on a suite's failed case of an older version
shows that version read-only (header, banner and Run button say so) with the way back to the
working copy; a run of the working copy's version opens on the working copy. "Copy as curl" on a
run and on export gives commands that, pasted into a shell with a token, do the same."""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any

import pytest
from canvaskit import base_badge, open_tab
from playwright.sync_api import Page, expect
from test_accessibility import serious_violations
from test_graph_tests_editor import RUN_TIMEOUT_MS, add_case, console, switch_graph

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

__all__ = ["switch_graph"]  # the fixture, shared with the Tests tab's browser tests


def test_a_suite_run_on_an_older_version_opens_its_run_on_that_version(
    stack: Any,
    switch_graph: Any,
    studio_user: Any,
    add_version: Any,
    user_page: Page,
    open_editor: Any,
    shot: Any,
) -> None:
    nodes = copy.deepcopy(demo.DEMO_GRAPHS["animal-switch"][0]["spec"]["nodes"])
    nodes["root"]["steps"].append(
        {"name": "bird", "serviceName": "bird-classifier", "condition": 'instances.#(animal=="bird")'}
    )
    add_version(switch_graph, nodes, message="Birds too")
    add_case(switch_graph, studio_user, "says a dog", [{"path": "predictions.0", "equals": "a dog breed"}])

    page = user_page
    open_editor(page, "animal-switch")
    expect(base_badge(page)).to_have_text("v2")
    expect(page.locator('.router-card[data-node="root"] .step-row')).to_have_count(3)
    open_tab(page, "Tests")
    suite = page.get_by_role("region", name="Suite")
    suite.get_by_label("Version").select_option("1")
    suite.get_by_label("Environment").select_option("local")
    suite.get_by_role("button", name="Run suite").click()
    expect(suite.get_by_role("status")).to_have_text("failed", timeout=RUN_TIMEOUT_MS)

    suite.get_by_role("button", name="Open the run of says a dog").click()
    expect(console(page).locator(".run-status")).to_have_text("succeeded")
    # The canvas, the header and the Run button all name version 1, read-only.
    expect(page.locator(".badge-readonly")).to_have_text("v1 · read-only")
    banner = page.locator(".view-banner")
    expect(banner).to_contain_text("Viewing version 1")
    expect(page.locator('.router-card[data-node="root"] .step-row')).to_have_count(2)
    expect(page.get_by_role("button", name="Run", exact=True)).to_have_attribute(
        "title", "Run version 1 (Ctrl+Enter)"
    )
    failures = page.get_by_role("region", name="Failed expectations")
    expect(failures.locator("pre.diff-unified del.diff-expected")).to_have_text('- "a dog breed"')
    shot(page, "run-on-its-version")
    assert serious_violations(page) == []

    # The way back: the working copy on the latest version, editable again.
    banner.get_by_role("button", name="Back to editing v2").click()
    expect(base_badge(page)).to_have_text("v2")
    expect(page.locator(".badge-readonly")).to_have_count(0)
    expect(page.locator('.router-card[data-node="root"] .step-row')).to_have_count(3)

    # A run of the version the working copy is on opens on the working copy.
    open_tab(page, "Tests")
    suite.get_by_label("Version").select_option("2")
    suite.get_by_role("button", name="Run suite").click()
    expect(suite.get_by_role("progressbar", name="Suite progress")).to_have_attribute(
        "aria-valuetext", "1/1 · 0 passed · 1 failed · 0 errors", timeout=RUN_TIMEOUT_MS
    )
    suite.get_by_role("button", name="Open the run of says a dog").click()
    expect(console(page).locator(".run-status")).to_have_text("succeeded")
    expect(base_badge(page)).to_have_text("v2")
    expect(page.locator(".badge-readonly")).to_have_count(0)


def run_command(command: str, token: str, cwd: Any) -> str:
    """Runs a copied command as a person would paste it: a shell with STUDIO_TOKEN set."""
    proc = subprocess.run(
        ["bash", "-c", command],
        env={"STUDIO_TOKEN": token, "PATH": "/usr/bin:/bin"},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_copy_as_curl_on_a_run_and_on_export_gives_commands_that_work(
    stack: Any,
    switch_graph: Any,
    studio_user: Any,
    user_page: Page,
    open_editor: Any,
    live_server: Any,
    tmp_path: Any,
) -> None:
    from execution.models import Run
    from graphs import tokens

    key = tokens.api_token_create(user=studio_user, name="curl", expires_at=None).key
    page = user_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    open_editor(page, "animal-switch")
    open_tab(page, "Run")
    page.get_by_label("Payload (JSON)").fill(
        json.dumps({"instances": [{"animal": "cat", "image": "it's.jpg"}]})
    )
    page.get_by_role("button", name="Run", exact=True).click()
    expect(console(page).locator(".run-status")).to_have_text("succeeded", timeout=RUN_TIMEOUT_MS)
    first = Run.objects.get()

    console(page).get_by_role("button", name="Copy as curl").click()
    expect(console(page).get_by_role("status").filter(has_text="Copied")).to_contain_text("$STUDIO_TOKEN")
    command = page.evaluate("navigator.clipboard.readText()")
    assert key not in command
    started = json.loads(run_command(command, key, tmp_path))
    again = Run.objects.get(pk=started["id"])
    assert (again.version.number, again.seed, again.environment_name) == (
        1,
        first.seed,
        first.environment_name,
    )
    assert json.loads(again.request_body) == {"instances": [{"animal": "cat", "image": "it's.jpg"}]}

    page.get_by_role("button", name="Export").click()
    page.get_by_role("menu", name="Export format").get_by_role("menuitem", name="Copy as curl").click()
    expect(page.locator(".toast")).to_contain_text("Copied a curl command that downloads version 1 as YAML")
    command = page.evaluate("navigator.clipboard.readText()")
    run_command(command, key, tmp_path)
    exported = (tmp_path / "animal-switch-v1.yaml").read_text()
    assert (
        exported
        == page.request.get(
            f"{live_server.url}/api/graphs/animal-switch/versions/1/export/?format=yaml"
        ).text()
    )
    assert "kind: InferenceGraph" in exported
