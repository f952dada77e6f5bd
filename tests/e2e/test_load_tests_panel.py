"""Load tests in the editor, in a real browser against the real stack (live server, Redis, a Celery
worker, the mock model server): a 1,000-request load test of face-recognition at concurrency 16
started from the Load tab with its progress bar moving live, its per-step results, a
comparison with a slower load test, a secret header typed in the form sent with the real value
and stored redacted, and the budget warning pinned to the timeout in Properties.

Selectors: the "Load" tab (load tests); its fields "Requests", "Concurrency", "Environment", "Request",
"Payload (JSON)", the "Headers" rows ("Load header N name"/"value", "+ Add header"); the "Start
load test…" and "Cancel load test" buttons; the progress bar "Load test
progress" (``data-testid=load-progress`` carries ``data-completed``); the status
(``data-testid=load-status``); the results table (rows ``data-step``); the history's A/B radios and
"Compare A and B".
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, expect

from execution.devtools import demo
from execution.loadtests.models import LoadTest
from execution.models import Environment

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LOAD_TIMEOUT_MS = 90_000  # 1,000 requests of a 5-call graph on a loaded 2-core machine


@pytest.fixture
def face_graph(stack: Any, studio_user: Any, mock_server: Any) -> Any:
    from graphs import services

    manifest, layout, description, _ = demo.DEMO_GRAPHS["face-recognition"]
    manifest = copy.deepcopy(manifest)
    manifest["spec"]["routerTimeouts"] = {"serverWrite": 1}
    graph = services.graph_create(
        owner=studio_user, name="face-recognition", manifest=manifest, layout=layout, description=description
    )
    for name, latency in (("slow5", 5), ("slow100", 100)):
        Environment.objects.create(
            name=name,
            visibility="shared",
            url_template=mock_server.url + "/v1/models/{name}:predict?latency_ms=" + str(latency),
            allow_loopback=True,
        )
    return graph


def start_load(page: Page, environment: str, requests: int, concurrency: int) -> None:
    page.get_by_label("Requests", exact=True).fill(str(requests))
    page.get_by_label("Concurrency").fill(str(concurrency))
    page.get_by_label("Environment").select_option(environment)
    payload = demo.DEMO_GRAPHS["face-recognition"][3]
    page.get_by_label("Payload (JSON)").fill(json.dumps(payload))
    page.get_by_role("button", name=re.compile(r"^Start load test")).click()


def test_a_load_test_from_the_browser_shows_live_progress_results_and_a_comparison(
    face_graph: Any, user_page: Page, open_editor: Any
) -> None:
    page = user_page
    open_editor(page, "face-recognition")
    open_tab(page, "Load")
    start_load(page, "slow5", 1000, 16)
    progress = page.get_by_test_id("load-progress")
    # Live: the bar is seen part of the way (neither 0 nor all 1,000), before the load test ends.
    page.wait_for_function(
        "() => { const e = document.querySelector('[data-testid=load-progress]');"
        " const n = e ? Number(e.dataset.completed) : 0; return n > 0 && n < 1000; }",
        timeout=LOAD_TIMEOUT_MS,
    )
    expect(page.get_by_role("progressbar", name="Load test progress")).to_be_visible()
    expect(page.get_by_test_id("load-status")).to_have_text("finished", timeout=LOAD_TIMEOUT_MS)
    expect(progress).to_have_attribute("data-completed", "1000")
    table = page.get_by_role("table", name="Latency by step")
    for step in ("root/face-detector", "root/feature-extractor", "match/db-employees", "match/db-visitors"):
        expect(table.locator(f"tr[data-step='{step}']")).to_be_visible()
    expect(page.get_by_test_id("load-totals")).to_contain_text("1000 requests in")

    # A second, slower one, then the two side by side: every model step got slower.
    start_load(page, "slow100", 64, 8)
    expect(page.get_by_test_id("load-status")).to_have_text("finished", timeout=LOAD_TIMEOUT_MS)
    history = page.get_by_role("region", name="Load test history")
    radios_a = history.get_by_role("radio", name=re.compile("^Compare: A is"))
    radios_b = history.get_by_role("radio", name=re.compile("^Compare: B is"))
    expect(radios_a).to_have_count(2)
    radios_a.nth(1).check()  # the older (fast) one
    radios_b.nth(0).check()
    history.get_by_role("button", name="Compare A and B").click()
    compare = page.get_by_role("table", name="p95 latency of load test A against B")
    expect(compare.locator("tr[data-step='root/face-detector']")).to_contain_text("slower")
    expect(history).to_contain_text("Slower in B:")


def test_a_secret_header_typed_in_the_load_form_is_sent_and_stored_redacted(
    face_graph: Any, user_page: Page, open_editor: Any
) -> None:
    page = user_page
    open_editor(page, "face-recognition")
    open_tab(page, "Load")
    expect(page.get_by_role("group", name="Headers")).to_contain_text("stored and shown redacted")
    page.get_by_role("button", name="+ Add header").click()
    page.get_by_label("Load header 1 name").fill("Authorization")
    page.get_by_label("Load header 1 value").fill("Bearer browser-s3cret")
    start_load(page, "slow5", 4, 2)
    expect(page.get_by_test_id("load-status")).to_have_text("finished", timeout=LOAD_TIMEOUT_MS)
    load = LoadTest.objects.get()
    assert load.request_headers == {"Authorization": "Bearer ***"}
    assert load.secret_header_names == ["Authorization"] and load.completed == 4 and load.errors == 0


def test_a_budget_that_the_timeouts_cannot_hold_is_pinned_to_the_field(
    face_graph: Any, user_page: Page, open_editor: Any
) -> None:
    from graphs.models import Graph

    Graph.objects.filter(pk=face_graph.pk).update(latency_budgets={"steps": {"root/face-detector": 2000}})
    page = user_page
    open_editor(page, "face-recognition")
    open_tab(page, "Properties")
    field = page.locator(".field", has=page.get_by_label("serverWrite (s)"))
    expect(field.locator(".field-warning")).to_have_text(
        "serverWrite 1 s leaves no room: the critical path's step budgets add up to 2 s"
    )
