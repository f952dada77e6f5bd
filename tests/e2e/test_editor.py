"""The editor page in a real browser: edit, save, reload, YAML both ways, validation, undo/redo."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import (
    base_badge,
    card,
    clear_selection,
    draw_connection,
    drop_node,
    drop_step,
    field,
    grid_graph,
    open_tab,
    pan,
    panel_tab,
    save,
    select_node,
    select_step,
    set_field,
    step_row,
    wait_checked,
)
from conftest import api_get
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHAIN = {
    "root": {
        "routerType": "Sequence",
        "steps": [{"name": "classifier", "serviceName": "classifier"}],
    }
}

MATCHER = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "detect", "serviceName": "face-detector"},
            {"name": "match", "nodeName": "match", "data": "$response"},
        ],
    },
    "match": {
        "routerType": "Ensemble",
        "steps": [
            {"name": "db-employees", "serviceName": "db-employees"},
            {"name": "db-visitors", "serviceName": "db-visitors"},
        ],
    },
}


def card_boxes(page: Any) -> dict[str, tuple[float, float]]:
    """Where each card sits on screen (rounded), keyed by node name."""
    boxes = {}
    for handle in page.locator(".router-card").all():
        name = handle.get_attribute("data-node")
        box = handle.bounding_box()
        boxes[name] = (round(box["x"]), round(box["y"]))
    return boxes


def step_texts(page: Any) -> list[str]:
    return [t.strip() for t in page.locator(".router-card .step-row").all_inner_texts()]


def test_edit_save_and_reload_shows_the_same_graph(
    user_page: Any, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """Dragging a Switch in, adding a conditional step, drawing a new connection from the root's
    card handle and moving a card, then Ctrl+S: after a reload the canvas and the stored version
    are exactly what was drawn."""
    page = user_page
    make_graph("intent-router", nodes=CHAIN)
    open_editor(page, "intent-router", cards=1)

    drop_node(page, "Switch", 0.6, 0.2)
    expect(card(page, "switch")).to_be_visible()
    drop_step(page, "Service step", "switch")
    set_field(page, "name", "buyer")
    set_field(page, "serviceName", "buyer-model")
    set_field(page, "condition", 'instances.#(intent=="buy")')
    # The row shows the condition itself, not an "if" badge.
    expect(step_row(page, "switch", 0).locator(".step-cond-text")).to_have_text('instances.#(intent=="buy")')

    # The card's bottom handle drawn to another card adds a step that calls it.
    draw_connection(page, card(page, "root").locator(".handle-new"), "switch")
    expect(step_row(page, "root", 1).locator(".chip-node")).to_contain_text("switch")
    expect(page.locator(".react-flow__edge")).to_have_count(1)

    # Move the Switch card by its header.
    head = card(page, "switch").locator(".card-head").bounding_box()
    page.mouse.move(head["x"] + 40, head["y"] + 10)
    page.mouse.down()
    page.mouse.move(head["x"] + 80, head["y"] + 90, steps=8)
    page.mouse.up()
    expect(page.locator(".unsaved")).to_be_visible()

    number = save(page, "Route buyers", shortcut=True)
    assert number == 2
    shot(page, "saved")
    before_boxes = card_boxes(page)
    before_steps = step_texts(page)

    detail = api_get(page, live_server.url, "/api/graphs/intent-router/")
    latest = detail["latest_version"]
    assert latest["number"] == 2
    assert latest["message"] == "Route buyers"
    assert latest["manifest"]["spec"]["nodes"] == {
        "root": {
            "routerType": "Sequence",
            "steps": [{"name": "classifier", "serviceName": "classifier"}, {"nodeName": "switch"}],
        },
        "switch": {
            "routerType": "Switch",
            "steps": [
                {"name": "buyer", "serviceName": "buyer-model", "condition": 'instances.#(intent=="buy")'}
            ],
        },
    }
    assert set(latest["layout"]["nodes"]) == {"root", "switch"}

    page.reload()
    expect(page.locator(".router-card")).to_have_count(2)
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    expect(base_badge(page)).to_have_text("v2")
    expect(page.locator(".unsaved")).to_have_count(0)
    assert step_texts(page) == before_steps
    after_boxes = card_boxes(page)
    for name, (x, y) in before_boxes.items():
        assert abs(after_boxes[name][0] - x) <= 2 and abs(after_boxes[name][1] - y) <= 2, (
            name,
            before_boxes,
            after_boxes,
        )
    shot(page, "reloaded")
    # Opening the editor saved nothing.
    again = api_get(page, live_server.url, "/api/graphs/intent-router/")["latest_version"]
    assert again["number"] == 2
    assert again["manifest"] == latest["manifest"]
    assert again["layout"] == latest["layout"]


def test_yaml_view_edits_drive_the_canvas(
    user_page: Any, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """Typing a manifest into the YAML view redraws the canvas; broken YAML is marked at its line
    and the canvas keeps the last good document; the saved version is the typed manifest."""
    page = user_page
    make_graph("yaml-driven", nodes=CHAIN)
    open_editor(page, "yaml-driven", cards=1)
    open_tab(page, "YAML")
    editor = page.get_by_label("YAML manifest")
    expect(editor).to_contain_text("serviceName: classifier")

    text = (
        "apiVersion: serving.kserve.io/v1alpha1\n"
        "kind: InferenceGraph\n"
        "metadata:\n"
        "  name: yaml-driven\n"
        "  namespace: default\n"
        "spec:\n"
        "  nodes:\n"
        "    root:\n"
        "      routerType: Sequence\n"
        "      steps:\n"
        "        - name: classifier\n"
        "          serviceName: classifier-v2\n"
        "        - name: split\n"
        "          nodeName: canary\n"
        "    canary:\n"
        "      routerType: Splitter\n"
        "      steps:\n"
        "        - serviceName: stable\n"
        "          weight: 90\n"
        "        - serviceName: candidate\n"
        "          weight: 10\n"
    )
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    expect(card(page, "canary")).to_be_visible()
    expect(step_row(page, "root", 0).locator(".chip-svc")).to_contain_text("classifier-v2")
    expect(step_row(page, "canary", 1).locator(".badge-weight")).to_have_text("10%")
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    expect(wait_checked(page)).to_have_text("Valid")
    shot(page, "yaml-applied")

    # Broken YAML: marked, and the canvas keeps the last good document.
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n  bad: [unclosed\n")
    expect(page.locator(".yaml-status")).to_contain_text(re.compile(r"Line \d+"))
    expect(page.locator(".router-card")).to_have_count(2)
    shot(page, "yaml-broken")
    page.keyboard.press("Control+z")
    expect(page.locator(".yaml-status")).not_to_contain_text("Line")

    number = save(page, "Typed in YAML")
    assert number == 2
    nodes = api_get(page, live_server.url, f"/api/graphs/yaml-driven/versions/{number}/")["manifest"]["spec"][
        "nodes"
    ]
    assert nodes["root"]["steps"][0] == {"name": "classifier", "serviceName": "classifier-v2"}
    assert nodes["canary"] == {
        "routerType": "Splitter",
        "steps": [{"serviceName": "stable", "weight": 90}, {"serviceName": "candidate", "weight": 10}],
    }

    # And the other way round: a canvas edit rewrites the text.
    select_step(page, "canary", 0)
    open_tab(page, "Properties")
    set_field(page, "serviceName", "stable-v3")
    open_tab(page, "YAML")
    expect(editor).to_contain_text("serviceName: stable-v3")


def test_live_validation_marks_the_card_and_problems_select_it(
    user_page: Any, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    """Clearing a step's target shows KServe's error on that card and step only; activating the
    problem in the Problems list selects the step on the canvas."""
    page = user_page
    make_graph("face-matcher", nodes=MATCHER)
    open_editor(page, "face-matcher", cards=2)
    expect(wait_checked(page)).to_have_text("Valid")

    select_step(page, "match", 1)
    field(page, "serviceName").fill("")
    chip = wait_checked(page)
    expect(chip).to_have_text("1 error")
    expect(card(page, "match")).to_have_class(re.compile(r"\bhas-error\b"))
    expect(card(page, "match").locator(".issue-count.issue-error")).to_contain_text("1")
    expect(step_row(page, "match", 1)).to_have_class(re.compile(r"\bhas-error\b"))
    expect(step_row(page, "match", 0)).not_to_have_class(re.compile(r"\bhas-error\b"))
    expect(card(page, "root").locator(".issue-count")).to_have_count(0)
    expect(panel_tab(page, "Problems").locator(".tab-count")).to_have_text("1")
    shot(page, "error-badge")

    clear_selection(page)
    expect(step_row(page, "match", 1)).not_to_have_class(re.compile(r"\bselected\b"))
    open_tab(page, "Problems")
    problem = page.get_by_role("list", name="Problems").get_by_role("listitem")
    expect(problem).to_have_count(1)
    expect(problem).to_contain_text("does not specify an inference target")
    # U+203A is the separator the list shows between node and step.
    expect(problem).to_contain_text("match \u203a step 1 (db-visitors)")
    problem.click()
    expect(step_row(page, "match", 1)).to_have_class(re.compile(r"\bselected\b"))
    open_tab(page, "Properties")
    expect(page.locator(".props-title")).to_contain_text("db-visitors")
    shot(page, "problem-selected")

    # Mending it clears the badge.
    set_field(page, "serviceName", "db-visitors")
    expect(wait_checked(page)).to_have_text("Valid")
    expect(card(page, "match").locator(".issue-count")).to_have_count(0)


def test_undo_and_redo_by_keyboard_and_toolbar(user_page: Any, make_graph: Any, open_editor: Any) -> None:
    """Ctrl+Z walks back a rename and a dropped node; Ctrl+Shift+Z and the Redo button replay them;
    undoing everything back to the saved version clears the unsaved marker."""
    page = user_page
    make_graph("undo-demo", nodes=CHAIN)
    open_editor(page, "undo-demo", cards=1)
    undo = page.get_by_role("button", name="Undo")
    redo = page.get_by_role("button", name="Redo")
    expect(undo).to_be_disabled()

    drop_node(page, "Splitter", 0.6, 0.3)
    name = page.locator("#node-name")
    name.fill("canary")
    name.press("Enter")
    expect(card(page, "canary")).to_be_visible()
    expect(page.locator(".unsaved")).to_be_visible()

    clear_selection(page)  # the keys act on the canvas, not on a text field
    page.keyboard.press("Control+z")
    expect(card(page, "splitter")).to_be_visible()
    expect(card(page, "canary")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(page.locator(".router-card")).to_have_count(1)
    expect(undo).to_be_disabled()
    expect(page.locator(".unsaved")).to_have_count(0)

    page.keyboard.press("Control+Shift+z")
    expect(card(page, "splitter")).to_be_visible()
    redo.click()
    expect(card(page, "canary")).to_be_visible()
    expect(redo).to_be_disabled()
    undo.click()
    expect(card(page, "splitter")).to_be_visible()
    page.keyboard.press("Control+y")
    expect(card(page, "canary")).to_be_visible()

    # Undo also covers property edits.
    select_node(page, "root")
    select_step(page, "root", 0)
    set_field(page, "serviceName", "classifier-v9")
    expect(step_row(page, "root", 0).locator(".chip-svc")).to_contain_text("classifier-v9")
    clear_selection(page)
    page.keyboard.press("Control+z")
    expect(step_row(page, "root", 0).locator(".chip-svc")).to_have_text(re.compile(r"classifier$"))


def test_keyboard_help_dialog(user_page: Any, make_graph: Any, open_editor: Any, shot: Any) -> None:
    """The "?" key opens the keyboard shortcuts dialog, Escape closes it; the toolbar button opens it too."""
    page = user_page
    make_graph("help-demo", nodes=CHAIN)
    open_editor(page, "help-demo", cards=1)
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_hidden()

    page.locator("body").press("?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("row", name="Ctrl+S Save a new version")).to_be_visible()
    expect(dialog).to_contain_text("Drag from a step's handle")
    shot(page, "help")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.get_by_role("button", name="Keyboard shortcuts").click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close dialog").click()
    expect(dialog).to_be_hidden()


def test_big_graph_draws_the_cards_in_view_and_the_rest_when_panned_to(
    user_page: Any, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    """A 250-node graph (over the editor's threshold for drawing only the cards in view) opens
    with the cards in view, the minimap still shows every node, and panning brings the next
    cards in."""
    page = user_page
    count = 250
    nodes, layout = grid_graph(count, 20)
    layout["viewport"] = {"x": 40, "y": 40, "zoom": 1}
    make_graph("big-chain", nodes=nodes, layout=layout)
    open_editor(page, "big-chain")
    expect(card(page, "root")).to_be_visible()
    expect(page.locator(".react-flow__minimap-node")).to_have_count(count)
    drawn = page.locator(".router-card").count()
    assert 0 < drawn < count, drawn
    expect(card(page, "n0006")).to_have_count(0)  # 2,160 px to the right: out of view
    shot(page, "opened")

    pan(page, -700, 0)
    pan(page, -700, 0)
    expect(card(page, "n0006")).to_be_visible()
    expect(card(page, "root")).to_have_count(0)
    # The edge into the card that just came into view is drawn too.
    expect(page.locator('.react-flow__edge[data-id^="n0005:"]')).to_have_count(1)
    shot(page, "panned")
    expect(wait_checked(page)).to_have_text("Valid")
