"""Issue 14, items 7 and 8 in the run console, against the real stack (worker, Redis, mock models).

Fixtures ``worker``, ``run_settings`` and ``mock_server`` come from the test suite's conftest; the
helpers are test_console.py's.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from canvaskit import card, step_row
from playwright.sync_api import Page, expect
from test_console import console, line, start_run, wait_status

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SEP = "\u203a"

# root calls an Ensemble whose two members both fail (Soft, the default): the Ensemble still
# answers 200 (docs/router-semantics.md, "Ensemble"), so the run succeeds. `spare` is never called.
SOFT_ENSEMBLE = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "match", "nodeName": "match"},
            {"name": "greet", "serviceName": "success-200"},
        ],
    },
    "match": {
        "routerType": "Ensemble",
        "steps": [
            {"name": "db-employees", "serviceName": "always-404"},
            {"name": "db-visitors", "serviceName": "always-404"},
        ],
    },
    "spare": {"routerType": "Sequence", "steps": [{"name": "unused", "serviceName": "echo"}]},
}


def test_soft_failures_are_marked_apart_and_unreached_nodes_greyed(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, shot: Any
) -> None:
    """An Ensemble whose Soft members both failed: the members show "failed, went on (Soft)", the
    Sequence step that called it is flagged rather than plain green, the console explains it, and
    the node the run never reached is greyed."""
    page = user_page
    make_graph("soft-ensemble", SOFT_ENSEMBLE)
    open_editor(page, "soft-ensemble", cards=3)
    start_run(page, {"instances": [1]})
    wait_status(page, "succeeded")

    for call_id in ("match#1/0", "match#1/1"):
        expect(line(page, call_id)).to_have_class(re.compile(r"\bstatus-soft-failed\b"))
        expect(line(page, call_id)).to_contain_text("went on (Soft)")
    expect(line(page, "root/1")).to_have_class(re.compile(r"\bstatus-ok\b"))
    note = console(page).locator(".run-soft-note")
    expect(note).to_contain_text(f"2 calls failed, but the graph went on: match {SEP} db-employees")
    expect(note).to_contain_text("dependency: Hard")

    for i in (0, 1):
        expect(step_row(page, "match", i)).to_have_class(re.compile(r"\brun-soft-failed\b"))
    caller = step_row(page, "root", 0).locator(".run-badge.run-soft-below")
    expect(caller).to_be_visible()
    expect(caller).to_have_attribute("title", re.compile(r"2 calls below failed"))
    expect(step_row(page, "root", 1).locator(".run-soft-below")).to_have_count(0)
    expect(card(page, "spare")).to_have_class(re.compile(r"\brun-not-reached\b"))
    expect(card(page, "root")).not_to_have_class(re.compile(r"\brun-not-reached\b"))
    shot(page, "soft")


def test_run_panel_is_roomy_and_offers_the_demo_sample_and_the_last_payload(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, shot: Any
) -> None:
    """A demo graph opens with its sample payload (and offers it), the side panel resizes and
    keeps its width across a reload, JSON bodies put arrays of numbers on shared lines, step
    names are not cut, and the last payload used is offered again."""
    from execution.devtools import demo

    page = user_page
    manifest, _layout, description, request = demo.DEMO_GRAPHS["face-recognition"]
    make_graph(
        "face-recognition",
        manifest["spec"]["nodes"],
        layout=demo.demo_layout("face-recognition"),
        description=description,
    )
    open_editor(page, "face-recognition", cards=2)
    page.get_by_role("tab", name="Run").click()
    payload = page.get_by_label("Payload (JSON)")
    expect(payload).to_have_value(re.compile(r"lobby-camera-0001\.jpg"))
    assert json.loads(payload.input_value()) == request
    picker = page.get_by_label("Saved payloads")
    expect(picker.locator('optgroup[label="This graph\'s samples"] option')).to_have_text(
        ["Demo request", "Astronaut photo (real models)"]
    )

    # Resize the side panel by dragging its splitter 200 px to the left.
    panel = page.get_by_role("region", name="Panels")
    before = panel.bounding_box()
    grip = page.get_by_role("separator", name="Resize the side panel").bounding_box()
    assert before is not None and grip is not None
    page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + 200)
    page.mouse.down()
    page.mouse.move(grip["x"] - 200, grip["y"] + 200, steps=8)
    page.mouse.up()
    wider = panel.bounding_box()
    assert wider is not None and abs(wider["width"] - (before["width"] + 200)) <= 4

    page.get_by_role("button", name="Run", exact=True).click()
    wait_status(page, "succeeded")
    # The feature extractor answers embeddings: their numbers share lines.
    line(page, "root/1").locator(".console-line-head").click()
    body = line(page, "root/1").locator(".body-text").last
    expect(body).to_contain_text("embedding")
    lines = body.inner_text().splitlines()
    only_number = [x for x in lines if re.fullmatch(r"\s*-?\d+(\.\d+)?,?\s*", x)]
    assert not only_number, only_number[:3]
    # Step names are shown whole.
    for call_id in ("match#1/0", "match#1/1"):
        pos = line(page, call_id).locator(".step-pos")
        expect(pos).to_contain_text("db-employees" if call_id.endswith("0") else "db-visitors")
        assert pos.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    shot(page, "roomy")

    # After a reload: the same width, and the last payload used is offered.
    payload.fill('{"instances": []}')
    # The form is kept as a draft a moment after typing stops; wait for it before reloading.
    page.wait_for_function(
        """() => JSON.parse(localStorage.getItem("inference-graph-studio:run-draft:face-recognition")
            || "{}").payload === '{"instances": []}'"""
    )
    page.reload()
    expect(page.locator(".router-card")).to_have_count(2)
    page.get_by_role("tab", name="Run").click()
    reloaded = panel.bounding_box()
    assert reloaded is not None and abs(reloaded["width"] - wider["width"]) <= 2
    expect(payload).to_have_value('{"instances": []}')
    picker.select_option("last")
    assert json.loads(payload.input_value()) == request


def test_the_runs_dialog_shows_its_run_again_buttons_whole(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, shot: Any
) -> None:
    """The Runs dialog's table fits: every row's "Run again" button lies inside the dialog and
    nothing scrolls sideways."""
    page = user_page
    make_graph(
        "runs-list",
        {"root": {"routerType": "Sequence", "steps": [{"name": "greet", "serviceName": "success-200"}]}},
    )
    open_editor(page, "runs-list", cards=1)
    start_run(page, {"instances": [1]})
    wait_status(page, "succeeded")

    page.get_by_role("button", name="Runs", exact=True).click()
    dialog = page.get_by_role("dialog", name="Runs of runs-list")
    expect(dialog).to_be_visible()
    again = dialog.get_by_role("button", name="Run again")
    expect(again).to_have_count(1)
    body = dialog.locator(".modal-body")
    button_box, body_box = again.bounding_box(), body.bounding_box()
    assert button_box is not None and body_box is not None
    assert button_box["x"] + button_box["width"] <= body_box["x"] + body_box["width"]
    assert body.evaluate("el => el.scrollWidth <= el.clientWidth")
    shot(page, "runs")
