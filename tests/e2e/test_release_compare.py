"""One version's suite under two KServe releases side by side, in the Tests panel's comparison."""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 30_000  # two suite runs on a loaded 2-core machine

# echo answers the request; classify runs only when it says "dog": here the condition is unmet.
GATED = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "detect", "serviceName": "echo"},
            {"name": "classify", "serviceName": "echo", "condition": 'label=="dog"'},
        ],
    }
}


def test_a_version_compared_with_itself_under_two_releases(
    stack: Any, make_graph: Any, studio_user: Any, user_page: Page, open_editor: Any
) -> None:
    from execution.cases import services

    graph = make_graph("gated", nodes=GATED)
    services.test_case_create(
        graph=graph,
        user=studio_user,
        document={
            "name": "an unmet condition",
            "request": {"payload": {"label": "cat"}},
            "expectations": [{"status": 200}],
        },
    )
    page = user_page
    open_editor(page, "gated", cards=1)
    open_tab(page, "Tests")
    section = page.get_by_role("region", name="Compare versions")
    section.get_by_label("Version A (before)").select_option("1")
    section.get_by_label("Version B (after)").select_option("1")
    section.get_by_label("Environment").select_option("local")
    run = section.get_by_role("button", name="Run both and compare")
    expect(run).to_be_disabled()  # the same version and the same release: nothing to compare
    section.get_by_label("KServe release A").select_option("v0.14.1")
    section.get_by_label("KServe release B").select_option("master")
    run.click()
    expect(section.get_by_role("status")).to_contain_text(
        "v1 on KServe v0.14.1 (failed) → v1 on KServe master (passed): 1 of 1 case changed.",
        timeout=RUN_TIMEOUT_MS,
    )
    cases = section.get_by_role("list", name="Cases compared").get_by_role("listitem")
    expect(cases.first).to_contain_text("an unmet condition")
    cases.first.get_by_role("button").press("Enter")
    expect(section).to_contain_text("Final status 500 → 200")
