"""The KServe upgrade report in the History tab: a version's changes between two releases."""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GATED = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "detect", "serviceName": "detect"},
            {"name": "classify", "serviceName": "classify", "condition": 'label=="dog"'},
        ],
    },
    "split": {
        "routerType": "Splitter",
        "steps": [
            {"name": "a", "serviceName": "detect", "weight": 50},
            {"name": "b", "serviceName": "detect", "weight": 50},
        ],
    },
}


def test_the_history_tab_shows_what_an_upgrade_changes(
    user_page: Any, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    make_graph("gated", nodes=GATED)
    page = user_page
    open_editor(page, "gated", cards=2)
    open_tab(page, "History")
    report = page.get_by_role("region", name="KServe upgrade report")
    report.get_by_label("Upgrade from KServe release").select_option("v0.12.1")
    report.get_by_label("Upgrade to KServe release").select_option("v0.16.0")
    report.get_by_role("button", name="Show upgrade report").click()
    changes = report.get_by_role("list", name="Changes for this graph")
    expect(changes).to_contain_text(
        'step classify of Sequence "root": when its condition is not met the Sequence answers 200 instead of 500 (v0.15.1)'
    )
    expect(changes).to_contain_text("this Splitter drops about 1 in 101 requests on v0.13 to v0.18")
    expect(report.get_by_role("list", name="What KServe v0.16.0 makes of this version")).to_contain_text(
        "about 1 in 101 requests gets no answer"
    )
    shot(page, "upgrade-report")

    report.get_by_label("Upgrade from KServe release").select_option("v0.16.0")
    report.get_by_label("Upgrade to KServe release").select_option("v0.16.0")
    report.get_by_role("button", name="Show upgrade report").click()
    expect(report.get_by_role("status")).to_contain_text("the same router, nothing changes")
