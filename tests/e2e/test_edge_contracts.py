"""Edge contracts in the editor: a v1 step fed the previous v1 answer (``data: $response``) is
warned on its Flow box and in Problems, and the one-click fix sets ``mapPredictionsToInstances``
(an ordinary edit: undo brings the warning back)."""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import open_tab, panel_tab
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

V1 = "http://{0}.default.svc/v1/models/{0}:predict"
CHAIN = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "detect", "serviceUrl": V1.format("detector")},
            {"name": "classify", "serviceUrl": V1.format("classifier"), "data": "$response"},
        ],
    }
}


def test_the_predictions_to_instances_warning_shows_and_is_fixed_in_one_click(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    page = flow_page
    make_graph("chain", nodes=CHAIN)
    page.goto(f"{live_server.url}/graphs/chain/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    pin = page.locator('.flow-box[data-box="root/1"] .issue-count.issue-warning')
    expect(pin).to_be_visible()
    expect(page.locator('.flow-box[data-box="root/0"] .issue-count')).to_have_count(0)

    open_tab(page, "Problems")
    problem = page.get_by_role("list", name="Problems").get_by_role("listitem")
    expect(problem).to_have_count(1)
    expect(problem).to_contain_text("contract.predictions-to-instances")
    fix = problem.get_by_role("button", name="Set mapPredictionsToInstances")
    fix.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("No problems. KServe would accept this graph.")).to_be_visible()
    expect(pin).to_have_count(0)
    expect(panel_tab(page, "Problems").locator(".tab-count")).to_have_count(0)

    page.keyboard.press("Control+z")
    expect(page.get_by_role("list", name="Problems").get_by_role("listitem")).to_have_count(1)
