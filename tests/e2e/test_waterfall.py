"""The run console's waterfall in a real browser, on the face-recognition demo run by the real
stack (live server, Redis, Celery worker, mock model server with a latency on every call).

Selectors: the console's "Waterfall" tab; ``.waterfall .wf-row`` per node and step call
(``data-call-id``, ``data-critical``), the bar of a step a button (``.wf-bar``) whose label says
how long it took and whether it is on the critical path; ``.wf-picked`` shows the picked step.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 30_000
LATENCY_MS = 120  # every model call: long enough for bars a few dozen pixels wide


def test_the_waterfall_shows_the_ensembles_branches_overlapping_and_marks_the_critical_path(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, mock_server: Any, shot: Any
) -> None:
    from execution.models import Environment

    Environment.objects.create(
        name="slow",
        visibility="shared",
        url_template=f"{mock_server.url}/v1/models/{{name}}:predict?latency_ms={LATENCY_MS}",
        allow_loopback=True,
    )
    manifest, layout, description, _request = demo.DEMO_GRAPHS["face-recognition"]
    make_graph("face-recognition", manifest["spec"]["nodes"], layout=layout, description=description)
    page = user_page
    open_editor(page, "face-recognition", cards=2)
    page.get_by_role("tab", name="Run").click()
    page.get_by_label("Payload (JSON)").fill(json.dumps(demo.demo_request("face-recognition")))
    page.get_by_label("Environment").select_option("slow")
    page.get_by_role("button", name="Run", exact=True).click()
    console = page.get_by_role("region", name="Run console")
    expect(console.locator(".run-status")).to_have_text("succeeded", timeout=RUN_TIMEOUT_MS)

    console.get_by_role("tab", name="Waterfall").click()
    waterfall = console.get_by_role("group", name="Waterfall: each step call on one time axis")
    rows = waterfall.locator(".wf-row.wf-step")
    expect(rows).to_have_count(6)
    # Nested: the Ensemble's node row sits between the nodeName step and its two calls.
    order = [r.get_attribute("data-call-id") for r in waterfall.locator(".wf-rows > .wf-row").all()]
    assert order == ["root", "root/0", "root/1", "root/2", "match#1", "match#1/0", "match#1/1", "root/3"]

    def bar(call_id: str) -> Any:
        return waterfall.locator(f'.wf-row[data-call-id="{call_id}"] .wf-bar')

    # The Ensemble's two calls ran side by side: their bars overlap on the time axis ...
    a, b = bar("match#1/0").bounding_box(), bar("match#1/1").bounding_box()
    assert a is not None and b is not None
    assert a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
    # ... while the Sequence's calls follow one another.
    first, last = bar("root/0").bounding_box(), bar("root/3").bounding_box()
    assert first is not None and last is not None
    assert first["x"] + first["width"] <= last["x"] + 1

    # The critical path: every call of the Sequence, and one branch of the Ensemble (the slower).
    def critical(call_id: str) -> bool:
        return (
            waterfall.locator(f'.wf-row[data-call-id="{call_id}"]').get_attribute("data-critical") == "true"
        )

    assert all(critical(c) for c in ("root/0", "root/1", "root/2", "root/3"))
    assert [critical("match#1/0"), critical("match#1/1")].count(True) == 1
    branch = "match#1/0" if critical("match#1/0") else "match#1/1"
    # Marked in words too, not only by colour: a tag on the row and in the bar's name.
    expect(waterfall.locator(f'.wf-row[data-call-id="{branch}"] .wf-crit-tag')).to_have_text("◆critical")
    expect(bar(branch)).to_have_attribute("aria-label", re.compile(r"on the critical path$"))
    other = "match#1/1" if branch == "match#1/0" else "match#1/0"
    expect(waterfall.locator(f'.wf-row[data-call-id="{other}"] .wf-crit-tag')).to_have_count(0)
    expect(waterfall.locator(".wf-caption")).to_contain_text("Critical path (what the run waited for):")
    shot(page, "waterfall")

    # A click on a bar opens that step's input and output.
    bar("match#1/1").click()
    expect(bar("match#1/1")).to_have_attribute("aria-pressed", "true")
    picked = console.locator(".wf-picked")
    expect(picked).to_contain_text("db-visitors")
    expect(picked).to_contain_text("Request sent")
    expect(picked).to_contain_text("embedding")
    expect(picked).to_contain_text("Response received")
    expect(picked).to_contain_text('"database": "visitors"')
