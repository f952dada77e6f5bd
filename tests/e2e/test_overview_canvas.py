"""The overview layer: zoomed out below the low-detail threshold, both views mount no
card, box or edge and draw the whole graph into one <canvas> (frontend/src/canvas/LodLayer.tsx);
it still answers the pointer (hover names a box, a click selects it, a double-click zooms to it)
and the keyboard (an arrow key selects the next box and zooms to it), and the minimap still shows
every node. Zooming back in brings the cards back.

Selectors: ``.lod-layer[data-drawn]`` (the layer's <canvas>, ``data-boxes``: boxes drawn),
``.lod-hover-name`` (the hovered box's name), ``.lod-keys`` (its keyboard target), ``.lod-minimap``.
"""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import card, grid_graph
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Finds a point on screen inside a box drawn in the layer: a block of (2 half + 1) pixels square of
# the colour given (a box's fill), read from the canvas's bitmap and mapped to the page through its
# on-screen rect; the first such point the pointer can reach.
FIND_FILL_JS = """
([r, g, b, half]) => {
  const canvas = document.querySelector(".lod-layer[data-drawn]");
  const { width, height } = canvas;
  const data = canvas.getContext("2d").getImageData(0, 0, width, height).data;
  const is = (x, y) => {
    const i = (y * width + x) * 4;
    return data[i + 3] === 255 && Math.abs(data[i] - r) < 3 && Math.abs(data[i + 1] - g) < 3 && Math.abs(data[i + 2] - b) < 3;
  };
  const rect = canvas.getBoundingClientRect();
  for (let y = half; y < height - half; y++) {
    for (let x = half; x < width - half; x++) {
      let all = true;
      for (let dy = -half; dy <= half && all; dy++) for (let dx = -half; dx <= half && all; dx++) all = is(x + dx, y + dy);
      if (!all) continue;
      const at = { x: rect.left + (x / width) * rect.width, y: rect.top + (y / height) * rect.height };
      // On screen, over the canvas's pane (not under a panel, the minimap or the controls).
      if (document.elementFromPoint(at.x, at.y)?.classList.contains("react-flow__pane")) return at;
    }
  }
  return null;
}
"""

# Whether the layer's bitmap has a pixel of the colour given (the selection's outline).
HAS_COLOUR_JS = """
([r, g, b]) => {
  const canvas = document.querySelector(".lod-layer[data-drawn]");
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] > 200 && Math.abs(data[i] - r) < 8 && Math.abs(data[i + 1] - g) < 8 && Math.abs(data[i + 2] - b) < 8) return true;
  }
  return false;
}
"""
SEQUENCE_FILL = [0xE8, 0xED, 0xFF]  # canvas/nodesScene.ts
STEP_FILL = [0xFF, 0xFF, 0xFF]  # canvas/flowScene.ts
SELECTED = [0x25, 0x63, 0xEB]  # canvas/lodScene.ts


def test_a_large_graph_opens_fitted_as_one_drawn_canvas_that_selects_opens_and_zooms_back_to_cards(
    user_page: Page, make_graph: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    count = 300
    nodes, layout = grid_graph(count, 20)
    make_graph("overview", nodes=nodes, layout=layout)
    page.goto(f"{live_server.url}/graphs/overview/")
    layer = page.locator(".lod-layer[data-drawn]")
    expect(layer).to_have_attribute("data-boxes", str(count))
    expect(page.locator('.canvas[data-detail="low"]')).to_be_visible()
    # Nothing of React Flow's is mounted for the cards or the edges; the minimap shows every node.
    expect(page.locator(".router-card")).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(0)
    expect(page.locator(".lod-minimap .react-flow__minimap-node")).to_have_count(count)
    shot(page, "fitted")

    spot = page.evaluate(FIND_FILL_JS, [*SEQUENCE_FILL, 2])
    assert spot is not None, "no box drawn in the layer"
    page.mouse.move(spot["x"], spot["y"])
    name = page.locator(".lod-hover-name").inner_text()
    assert name == "root" or name.startswith("n"), name
    assert not page.evaluate(HAS_COLOUR_JS, SELECTED)
    page.mouse.click(spot["x"], spot["y"])
    expect(page.locator(".props-title")).to_contain_text(f"Node {name}")
    # The layer is drawn again with the selection's outline.
    page.wait_for_function(f"({HAS_COLOUR_JS})([{SELECTED[0]}, {SELECTED[1]}, {SELECTED[2]}])")

    # A double-click zooms to the box: the cards are back, the layer is gone.
    page.mouse.dblclick(spot["x"], spot["y"])
    expect(page.locator('.canvas[data-detail="full"]')).to_be_visible()
    expect(card(page, name)).to_be_visible()
    expect(page.locator(".lod-layer")).to_have_count(0)
    expect(page.locator(".react-flow__minimap-node")).to_have_count(count)
    shot(page, "opened")

    # Fit view zooms out to the overview again; an arrow key goes to the box on the right.
    page.locator("button[title^='Fit the graph in view']").click()
    expect(page.locator(".lod-layer[data-drawn]")).to_have_attribute("data-boxes", str(count))
    expect(page.locator(".router-card")).to_have_count(0)
    page.wait_for_timeout(600)  # the end of Fit view's animation
    page.locator(".lod-keys").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator('.canvas[data-detail="full"]')).to_be_visible()
    right = int(name[1:]) + 1 if name != "root" else 1
    expected = f"n{right:04d}"
    expect(page.locator(".props-title")).to_contain_text(f"Node {expected}")
    expect(page.locator(f'.react-flow__node[data-id="{expected}"]')).to_be_focused()


def test_the_flow_view_fitted_draws_its_boxes_in_the_layer_and_a_click_selects_a_step(
    flow_page: Page, make_graph: Any, live_server: Any, shot: Any
) -> None:
    page = flow_page
    steps = [{"name": f"m{i:02d}", "serviceName": f"model-{i:02d}"} for i in range(60)]
    make_graph("long-flow", nodes={"root": {"routerType": "Sequence", "steps": steps}})
    page.goto(f"{live_server.url}/graphs/long-flow/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    expect(page.locator(".flow-box").first).to_be_visible()
    page.locator("button[title^='Fit the graph in view']").click()
    layer = page.locator(".lod-layer[data-drawn]")
    expect(layer).to_be_attached()
    expect(page.locator('.flow-canvas[data-detail="low"]')).to_be_visible()
    expect(page.locator(".flow-box")).to_have_count(0)
    assert int(layer.get_attribute("data-boxes") or 0) >= 60
    page.wait_for_timeout(600)  # the end of Fit view's animation
    shot(page, "fitted")

    spot = page.evaluate(FIND_FILL_JS, [*STEP_FILL, 1])
    assert spot is not None, "no step box drawn in the layer"
    page.mouse.move(spot["x"], spot["y"])
    name = page.locator(".lod-hover-name").inner_text()
    assert name.startswith("m"), name
    page.mouse.click(spot["x"], spot["y"])
    page.wait_for_function(f"({HAS_COLOUR_JS})([{SELECTED[0]}, {SELECTED[1]}, {SELECTED[2]}])")

    # Zoomed back in (a double-click on the box): the boxes are mounted again, that one selected.
    page.mouse.dblclick(spot["x"], spot["y"])
    expect(page.locator('.flow-canvas[data-detail="full"]')).to_be_visible()
    expect(page.locator(".lod-layer")).to_have_count(0)
    selected = page.locator(".flow-box.selected")
    expect(selected).to_have_count(1)
    expect(selected).to_contain_text(name)
    shot(page, "opened")

    # Fitted again, an arrow key selects the next box to the right (perhaps out of view) and
    # zooms to it; its box then has the focus.
    page.locator("button[title^='Fit the graph in view']").click()
    expect(page.locator(".lod-layer[data-drawn]")).to_be_attached()
    page.wait_for_timeout(600)  # the end of Fit view's animation
    page.locator(".lod-keys").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator('.flow-canvas[data-detail="full"]')).to_be_visible()
    selected = page.locator(".flow-box.selected")
    expect(selected).to_have_count(1)
    expect(selected).not_to_contain_text(name)
    expect(selected.locator(".flow-box-body")).to_be_focused()
