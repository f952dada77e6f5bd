"""A stored run of 10,000 steps (a graph looping root -> b -> root until its deadline) opens in
the console without freezing the tab: it shows "failed" before any of its events have arrived
(its detail says so), reads its events a page at a time, keeps far fewer than 10,000 rows in the
DOM (only the lines in view), and a click on a line works, at the top and at the bottom of the
list. The run is made by inserting its rows directly (tests/largerun.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, Route, expect
from test_console import console

from tests.largerun import call_id, large_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

STEPS = 10_000
EVENTS_URL = re.compile(r"/api/runs/[0-9a-f-]+/events/")
DETAIL_URL = re.compile(r"/api/runs/[0-9a-f-]+/$")
LOOP = {
    "root": {
        "routerType": "Sequence",
        "steps": [{"name": "step-0", "serviceName": "m"}, {"name": "step-1", "nodeName": "b"}],
    },
    "b": {
        "routerType": "Sequence",
        "steps": [{"name": "step-0", "serviceName": "m"}, {"name": "step-1", "nodeName": "root"}],
    },
}


def test_a_stored_ten_thousand_step_failed_run_opens_at_once_and_stays_responsive(
    make_graph: Any, studio_user: Any, user_page: Page, open_editor: Any
) -> None:
    page = user_page
    graph = make_graph("runaway", LOOP)
    run = large_run(graph, studio_user, STEPS)
    open_editor(page, "runaway", cards=2)

    # Hold every page of stored events: the end of the run must not wait for them.
    held: list[Route] = []
    pages: list[str] = []
    holding = {"events": True, "detail": True}

    def hold(route: Route) -> None:
        pages.append(route.request.url)
        if holding["events"]:
            held.append(route)
        else:
            route.continue_()

    # Hold its detail too at first: before anything is known, the console says it is loading the
    # run, not that the run is running.
    details: list[Route] = []

    def hold_detail(route: Route) -> None:
        if holding["detail"]:
            details.append(route)
        else:
            route.continue_()

    page.route(EVENTS_URL, hold)
    page.route(DETAIL_URL, hold_detail)
    page.get_by_role("button", name="Runs", exact=True).click()
    dialog = page.get_by_role("dialog", name="Runs of runaway")
    dialog.locator(f'tr[data-run-id="{run.pk}"]').get_by_role("button", name="Open").click()
    expect(dialog).to_be_hidden()
    open_tab(page, "Run")
    box = console(page)
    expect(box.get_by_role("progressbar", name="Loading the run")).to_be_visible()
    expect(box.get_by_role("progressbar", name="Run progress")).to_have_count(0)
    expect(box).not_to_contain_text("Running")
    expect(box.get_by_role("button", name="Cancel run")).to_have_count(0)
    expect(box.get_by_role("button", name="Run again")).to_have_count(0)
    holding["detail"] = False
    for route in details:
        route.continue_()
    expect(box.locator(".run-status")).to_have_text("failed")
    expect(box.locator(".run-outcome")).to_contain_text("10,000 steps")
    expect(box.locator(".run-error")).to_contain_text("deadline")
    expect(box.get_by_role("button", name="Cancel run")).to_have_count(0)
    expect(box.get_by_role("button", name="Run again")).to_be_visible()
    expect(box.get_by_role("progressbar", name="Loading the run")).to_be_visible()
    assert held, "the console asked for the stored events"

    # Let the pages through: a page at a time, each bounded.
    holding["events"] = False
    for route in held:
        route.continue_()
    first = box.locator(f'.console-step[data-call-id="{call_id(0)}"]')
    expect(first).to_be_visible(timeout=30_000)
    first.locator(".console-line-head").click()  # while later pages may still be loading
    expect(first.locator(".console-line-head")).to_have_attribute("aria-expanded", "true")
    expect(first).to_contain_text("Request sent")

    expect(box.get_by_role("progressbar", name="Loading the run")).to_have_count(0, timeout=120_000)
    lines = box.get_by_role("list", name="Steps")
    expect(lines).to_have_attribute("data-lines", str(STEPS + 2))  # and the two notes: queued, started
    rendered = box.locator(".console-step").count()
    assert 0 < rendered < 300, rendered
    expect(box.locator(".run-status")).to_have_text("failed")
    expect(box.locator(".run-outcome")).to_contain_text("10000 steps ran")

    # The bottom of the list: the last (failed) call is there and opens on a click.
    lines.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    last = box.locator(f'.console-step[data-call-id="{call_id(STEPS - 1)}"]')
    expect(last).to_be_visible()
    last.locator(".console-line-head").click()
    expect(last.locator(".console-line-head")).to_have_attribute("aria-expanded", "true")
    expect(last).to_contain_text("HTTP 500")
    assert box.locator(".console-step").count() < 300
    assert all("format=json" in url for url in pages), pages
