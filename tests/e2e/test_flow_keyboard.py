"""The Flow view's edits, each undone to the exact manifest it started from, a moved box kept by
the saved version, and the keyboard path: Tab reaches every box (and brings it into
view), Enter opens its properties, Alt+arrow moves it along its chain, Delete removes it, Ctrl+Z
undoes.

Selectors as in test_flow_view.py.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from canvaskit import open_tab, save
from playwright.sync_api import Page, expect
from test_flow_palette import nodes_of
from test_flow_view import box, box_body, centre, demo_graph, drag, in_canvas, open_flow, view_button

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SELECTED = re.compile(r"\bselected\b")


@pytest.fixture
def face_flow(flow_page: Page, make_graph: Any, live_server: Any) -> Page:
    demo_graph(make_graph, "face-recognition")
    open_flow(flow_page, f"{live_server.url}/graphs/face-recognition/")
    return flow_page


def undo(page: Page) -> None:
    """Ctrl+Z with the focus on the canvas (not in a text field)."""
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")


def test_delete_reorder_insert_and_parallel_are_undone_to_the_exact_manifest(face_flow: Page) -> None:
    page = face_flow
    original = nodes_of(page)
    steps = original["root"]["steps"]

    # Delete (the key, on the selected box).
    box_body(page, "root/1").click()
    expect(box(page, "root/1")).to_have_class(SELECTED)
    page.keyboard.press("Delete")
    # The step that calls match is now second: its group takes the place.
    expect(page.locator('.flow-group[data-group="root/1>match"]')).to_be_visible()
    expect(box(page, "root/1")).to_have_count(0)
    expected = copy.deepcopy(original)
    del expected["root"]["steps"][1]
    assert nodes_of(page) == expected
    undo(page)
    expect(box(page, "root/1")).to_contain_text("feature-extractor")
    assert nodes_of(page) == original

    # Reorder: face-detector one place later along the chain.
    box_body(page, "root/0").focus()
    page.keyboard.press("Alt+ArrowRight")
    expect(box(page, "root/1")).to_contain_text("face-detector")
    expected = copy.deepcopy(original)
    expected["root"]["steps"] = [steps[1], steps[0], *steps[2:]]
    assert nodes_of(page) == expected
    undo(page)
    expect(box(page, "root/0")).to_contain_text("face-detector")
    assert nodes_of(page) == original

    # Insert on an arrow.
    page.get_by_role("button", name="Insert a model between face-detector and feature-extractor").click()
    page.get_by_role("menuitem", name="Blank model (fill in later)").click()
    expect(box(page, "root/1")).to_have_class(SELECTED)
    expected = copy.deepcopy(original)
    expected["root"]["steps"].insert(1, {"name": "model", "serviceName": "", "data": "$response"})
    assert nodes_of(page) == expected
    # Live validation pins the blank box: it calls no service yet.
    expect(box(page, "root/1").locator(".issue-count.issue-error")).to_be_visible()
    undo(page)
    expect(box(page, "root/1")).to_contain_text("feature-extractor")
    assert nodes_of(page) == original

    # A parallel branch beside a model of the Ensemble: one more step of the Ensemble.
    box_body(page, "root/2>match/0").click()
    box(page, "root/2>match/0").get_by_role("button", name="‖ parallel").click()
    expect(box(page, "root/2>match/1")).to_have_class(SELECTED)
    expected = copy.deepcopy(original)
    expected["match"]["steps"].insert(1, {"name": "model", "serviceName": ""})
    assert nodes_of(page) == expected
    undo(page)
    expect(box(page, "root/2>match/1")).to_contain_text("db-visitors")
    assert nodes_of(page) == original


def test_tab_reaches_every_box_in_view_and_the_keys_edit_it(face_flow: Page) -> None:
    page = face_flow
    original = nodes_of(page)
    open_tab(page, "Properties")
    view_button(page, "Nodes").focus()
    wanted = {"root/0", "root/1", "root/2>match/0", "root/2>match/1", "root/3"}
    reached: list[str] = []
    for _ in range(40):
        page.keyboard.press("Tab")
        focused = focused_box(page)
        if focused is None:
            continue
        # The box the focus is on is brought into view (the canvas pans to it).
        page.wait_for_timeout(350)
        assert in_canvas(page, box(page, focused)), focused
        reached.append(focused)
        if wanted <= set(reached):
            break
    assert wanted <= set(reached), reached
    assert reached.index("root/0") < reached.index("root/1") < reached.index("root/3")

    # On the last box reached (result-merger, right of the first view): Enter opens its properties,
    # Delete removes it, Ctrl+Z brings it back.
    box_body(page, "root/3").focus()
    page.keyboard.press("Enter")
    expect(box(page, "root/3")).to_have_class(SELECTED)
    expect(page.locator(".props-title")).to_contain_text("result-merger")
    page.keyboard.press("Delete")
    expect(box(page, "root/3")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(box(page, "root/3")).to_contain_text("result-merger")
    assert nodes_of(page) == original


def test_a_moved_box_stays_where_it_was_dropped_in_the_saved_version(face_flow: Page) -> None:
    page = face_flow
    start = centre(box_body(page, "root/1"))
    drag(page, start, (start[0], start[1] + 150))
    expect(page.get_by_text("Unsaved changes")).to_be_visible()
    save(page, "Feature extractor moved down")
    page.reload()
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    # Measured against its neighbour, which did not move: the first view may sit elsewhere.
    (_, moved_y), (_, still_y) = centre(box(page, "root/1")), centre(box(page, "root/0"))
    assert moved_y - still_y > 100, (moved_y, still_y)


def focused_box(page: Page) -> Any:
    return page.evaluate(
        "() => document.activeElement?.classList.contains('flow-box-body') ? "
        "document.activeElement.closest('.flow-box').dataset.box : null"
    )


def test_arrow_keys_walk_the_boxes_along_the_picture(face_flow: Page) -> None:
    """From a box, → goes to the next box along the flow, ↓ and ↑ between parallel boxes; the box
    reached is brought into view; Enter selects it."""
    page = face_flow
    box_body(page, "root/0").focus()
    for key, expected in [
        ("ArrowRight", "root/1"),
        ("ArrowRight", "root/2>match/0"),
        ("ArrowDown", "root/2>match/1"),
        ("ArrowUp", "root/2>match/0"),
        ("ArrowRight", "root/2>match:merge"),
        ("ArrowRight", "root/3"),
    ]:
        page.keyboard.press(key)
        page.wait_for_function(
            "id => document.activeElement?.closest('.flow-box')?.dataset.box === id", arg=expected
        )
    page.wait_for_timeout(350)
    assert in_canvas(page, box(page, "root/3"))
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "() => document.activeElement?.closest('.flow-box')?.dataset.box === 'root/2>match:merge'"
    )
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    expect(box(page, "root/3")).to_have_class(SELECTED)
    assert focused_box(page) == "root/3"
