"""Level of detail: zoomed far out, both views mount none of their cards, boxes or
edges and draw the graph into one <canvas> instead (the overview layer, canvas/LodLayer.tsx);
zooming back in brings the full detail back. The switch is canvas/lod.ts (its thresholds have
vitest tests); here the browser proves the canvases follow it. What the overview answers (hover,
click, double-click, keys) is tests/e2e/test_overview_canvas.py.

Selectors: ``.canvas[data-detail=low|full]``, ``.router-card[data-detail]``, ``.flow-box[data-detail]``,
``.lod-layer[data-drawn]`` (the overview's <canvas>; ``data-boxes``: how many boxes it drew).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from execution.devtools import demo

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


def test_nodes_view_draws_the_overview_when_zoomed_out_and_full_cards_again(
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
    assert arrowheads(page) == {"head"}
    expect(page.locator(".lod-layer")).to_have_count(0)

    wheel_zoom(page, 400)
    expect(page.locator('.canvas[data-detail="low"]')).to_be_visible()
    # No card or edge is mounted: every card is a box of the overview's one bitmap.
    expect(page.locator(".lod-layer[data-drawn]")).to_have_attribute("data-boxes", str(count))
    expect(cards).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(0)

    wheel_zoom(page, -400)
    expect(page.locator('.canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator('.router-card[data-detail="full"]')).to_have_count(count)
    expect(page.locator(".step-row")).to_have_count(rows)
    expect(page.locator(".lod-layer")).to_have_count(0)
    assert arrowheads(page) == {"head"}


def test_flow_view_draws_the_overview_when_zoomed_out_and_labels_again(
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
    layer = page.locator(".lod-layer[data-drawn]")
    expect(layer).to_be_attached()
    # Every box (join points and group frames too) is drawn; none is mounted.
    assert int(layer.get_attribute("data-boxes") or 0) >= count
    expect(boxes).to_have_count(0)
    expect(labels).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(0)

    wheel_zoom(page, -400)
    expect(page.locator('.flow-canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator('.flow-box[data-detail="full"]')).to_have_count(count)
    expect(labels.first).to_be_attached()
    assert arrowheads(page) == {"head"}
