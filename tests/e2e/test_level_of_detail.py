"""Level of detail (issue 17): zoomed far out, the Nodes view draws header-only cards and the Flow
view plain boxes without arrow labels; zooming back in brings the full detail back. The switch is
canvas/lod.ts (its thresholds have vitest tests); here the browser proves the canvases follow it.

Selectors: ``.canvas[data-detail=low|full]``, ``.router-card[data-detail]``, ``.flow-box[data-detail]``.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from execution import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def wheel_zoom(page: Page, delta: float, times: int = 3) -> None:
    """Turns the mouse wheel over an empty spot of the canvas: positive zooms out."""
    pane = page.locator(".react-flow__pane")
    b = pane.bounding_box()
    assert b is not None
    page.mouse.move(b["x"] + 20, b["y"] + b["height"] / 2)
    for _ in range(times):
        page.mouse.wheel(0, delta)
        page.wait_for_timeout(80)


def arrowheads(page: Page) -> set[str]:
    """The arrowhead each drawn edge ends with (its computed ``marker-end``; "none": no head)."""
    heads = page.locator(".react-flow__edge-path").evaluate_all(
        "ps => ps.map(p => getComputedStyle(p).markerEnd)"
    )
    return {"none" if h == "none" else "head" for h in heads}


def demo_graph(make_graph: Any, name: str) -> None:
    manifest, layout, description, _request = demo.DEMO_GRAPHS[name]
    make_graph(name, manifest["spec"]["nodes"], layout=layout, description=description)


def test_nodes_view_draws_header_only_cards_when_zoomed_out_and_full_cards_again(
    user_page: Page, make_graph: Any, open_editor: Any
) -> None:
    demo_graph(make_graph, "face-recognition")
    page = user_page
    open_editor(page, "face-recognition")
    cards = page.locator(".router-card")
    count = cards.count()
    assert count >= 2
    expect(page.locator('.canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator('.router-card[data-detail="full"]')).to_have_count(count)
    rows = page.locator(".step-row").count()
    assert rows > 0
    heights = cards.evaluate_all("cs => cs.map(c => c.offsetHeight)")

    wheel_zoom(page, 400)
    expect(page.locator('.canvas[data-detail="low"]')).to_be_visible()
    expect(page.locator('.router-card[data-detail="low"]')).to_have_count(count)
    expect(page.locator(".step-row")).to_have_count(0)
    # The header-only card keeps its full-detail height: measured sizes and edge ends stay put.
    assert cards.evaluate_all("cs => cs.map(c => c.offsetHeight)") == heights
    # Every step's edge is still drawn, as a plain line: an arrowhead would be a few pixels wide
    # and is painted on its own, for every edge on every frame of a pan.
    assert page.locator(".react-flow__edge").count() > 0
    assert arrowheads(page) == {"none"}

    wheel_zoom(page, -400)
    expect(page.locator('.canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator('.router-card[data-detail="full"]')).to_have_count(count)
    expect(page.locator(".step-row")).to_have_count(rows)
    assert arrowheads(page) == {"head"}


def test_flow_view_draws_plain_boxes_when_zoomed_out_and_labels_again(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    demo_graph(make_graph, "face-recognition")
    page = flow_page
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    boxes = page.locator(".flow-box")
    expect(boxes.first).to_be_visible()
    count = boxes.count()
    expect(page.locator('.flow-box[data-detail="full"]')).to_have_count(count)
    labels = page.locator(".flow-arrow-label")
    expect(labels.first).to_be_attached()
    assert arrowheads(page) == {"head"}

    wheel_zoom(page, 400)
    expect(page.locator('.flow-canvas[data-detail="low"]')).to_be_visible()
    expect(page.locator('.flow-box[data-detail="low"]')).to_have_count(count)
    expect(page.locator(".flow-title")).to_have_count(0)
    expect(labels).to_have_count(0)
    assert arrowheads(page) == {"none"}
    # A plain box is still a named button.
    expect(page.get_by_role("button", name="detect", exact=False).first).to_be_attached()

    wheel_zoom(page, -400)
    expect(page.locator('.flow-canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator('.flow-box[data-detail="full"]')).to_have_count(count)
    expect(labels.first).to_be_attached()
    assert arrowheads(page) == {"head"}
