"""What a person does on the editor page, as small functions over Playwright's sync API.

Selectors are the ones the frontend renders: ``.router-card[data-node=NAME]`` (a node's card),
``.step-row[data-step=i]`` inside it, the step's ``.handle-step`` (draw it to a card: the step then
calls that node), the card's ``.handle-in`` and ``.handle-new``, and CodeMirror's ``.cm-content``.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Locator, Page, expect


def card(page: Page, node: str) -> Locator:
    return page.locator(f'.router-card[data-node="{node}"]')


def step_row(page: Page, node: str, index: int) -> Locator:
    return card(page, node).locator(f'.step-row[data-step="{index}"]')


def base_badge(page: Page) -> Locator:
    """The header badge naming the version the working copy is based on ("v3")."""
    return page.locator(".app-header .badge-base")


def palette(page: Page) -> Locator:
    return page.get_by_role("complementary", name="Palette")


def panel_tab(page: Page, name: str) -> Locator:
    return page.get_by_role("tab", name=re.compile(rf"^{re.escape(name)}\b"))


def open_tab(page: Page, name: str) -> None:
    tab = panel_tab(page, name)
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true")


def canvas_point(page: Page, fx: float, fy: float) -> dict[str, float]:
    """A point inside the canvas element, as fractions of its width and height."""
    box = page.locator(".canvas").bounding_box()
    assert box is not None
    return {"x": box["width"] * fx, "y": box["height"] * fy}


def drop_node(page: Page, router_type: str, fx: float, fy: float) -> None:
    """Drags a router type from the palette onto the canvas (HTML5 drag and drop)."""
    before = page.locator(".router-card").count()
    palette(page).get_by_role("button", name=router_type, exact=True).drag_to(
        page.locator(".canvas"), target_position=canvas_point(page, fx, fy)
    )
    expect(page.locator(".router-card")).to_have_count(before + 1)


def drop_step(page: Page, label: str, node: str) -> int:
    """Drags a step kind ("Service step", "URL step", "Node step") into ``node``'s card; returns its index."""
    rows = card(page, node).locator(".step-row")
    before = rows.count()
    palette(page).get_by_role("button", name=label, exact=True).drag_to(
        card(page, node).locator(".card-head")
    )
    expect(rows).to_have_count(before + 1)
    # The new step is selected: its properties are on the right.
    expect(page.locator(".props-title")).to_contain_text(f"Step {before}")
    return before


def draw_connection(page: Page, source: Locator, node: str) -> None:
    """Presses on a handle and drags it onto ``node``'s card, in small moves like a hand would."""
    source.scroll_into_view_if_needed()
    start = source.bounding_box()
    end = card(page, node).locator(".card-type-line").bounding_box()
    assert start is not None and end is not None
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(start["x"] + 30, start["y"] + 10, steps=5)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=10)
    page.mouse.up()


def connect_step(page: Page, node: str, index: int, target: str) -> None:
    """Draws step ``index`` of ``node`` to ``target``'s card: the step becomes ``nodeName: target``."""
    draw_connection(page, step_row(page, node, index).locator(".handle-step"), target)
    expect(step_row(page, node, index).locator(".chip-node")).to_contain_text(target)


def field(page: Page, label: str) -> Locator:
    """A field of the Properties panel by its exact label."""
    return page.get_by_role("tabpanel").get_by_label(label, exact=True)


def set_field(page: Page, label: str, value: str) -> None:
    box = field(page, label)
    box.fill(value)
    expect(box).to_have_value(value)


def select_step(page: Page, node: str, index: int) -> None:
    step_row(page, node, index).locator(".step-name").click()
    expect(step_row(page, node, index)).to_have_class(re.compile(r"\bselected\b"))


def select_node(page: Page, node: str) -> None:
    card(page, node).locator(".card-name").click()
    expect(page.locator(".props-title")).to_contain_text(f"Node {node}")


def empty_canvas_spot(page: Page) -> dict[str, float]:
    """A point of the canvas with nothing on it (pressing there pans instead of dragging a card)."""
    spot = page.evaluate(
        """() => {
          const r = document.querySelector(".react-flow__pane").getBoundingClientRect();
          for (let y = r.top + r.height * 0.3; y < r.bottom - 120; y += 7) {
            for (let x = r.left + r.width * 0.4; x < r.right - 60; x += 7) {
              const el = document.elementFromPoint(x, y);
              if (el && el.classList.contains("react-flow__pane")) return { x, y };
            }
          }
          return null;
        }"""
    )
    assert spot is not None, "no empty spot on the canvas"
    return spot


def pan(page: Page, dx: float, dy: float) -> None:
    """Drags the canvas background by (dx, dy) screen pixels."""
    start = empty_canvas_spot(page)
    page.mouse.move(start["x"], start["y"])
    page.mouse.down()
    page.mouse.move(start["x"] + dx, start["y"] + dy, steps=12)
    page.mouse.up()


def clear_selection(page: Page) -> None:
    """Clicks an empty spot of the canvas (top-left corner of the pane)."""
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})


def wait_checked(page: Page) -> Locator:
    """Waits for the live validation to settle; returns the status chip."""
    chip = page.locator(".valid-chip")
    expect(chip).not_to_have_class(re.compile(r"\bchecking\b"))
    return chip


def save(page: Page, message: str, *, shortcut: bool = False) -> int:
    """Types a version message and saves (button or Ctrl+S); returns the new version number."""
    page.get_by_label("Version message").fill(message)
    if shortcut:
        page.get_by_label("Version message").press("Control+s")
    else:
        page.get_by_role("button", name="Save", exact=True).click()
    toast = page.locator(".toast").filter(has_text=re.compile(r"Saved version \d+"))
    expect(toast).to_be_visible()
    text = toast.inner_text()
    match = re.search(r"Saved version (\d+)", text)
    assert match, text
    expect(page.locator(".unsaved")).to_have_count(0)
    return int(match.group(1))


def grid_graph(count: int, columns: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A chain of ``count`` Sequence nodes on a grid (no saved viewport: the editor fits it;
    add one to open elsewhere)."""
    names = ["root"] + [f"n{i:04d}" for i in range(1, count)]
    nodes = {
        name: {
            "routerType": "Sequence",
            "steps": [{"nodeName": names[i + 1]}] if i + 1 < count else [{"serviceName": "last"}],
        }
        for i, name in enumerate(names)
    }
    layout = {
        "nodes": {n: {"x": (i % columns) * 360, "y": (i // columns) * 220} for i, n in enumerate(names)}
    }
    return nodes, layout


def on_one_line(locator: Locator) -> bool:
    """Whether the element's text is drawn on one line, whole (not wrapped, not cut short)."""
    return bool(
        locator.evaluate(
            """el => {
                const range = document.createRange();
                range.selectNodeContents(el);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                return lines.size === 1 && el.scrollWidth <= el.clientWidth + 1;
            }"""
        )
    )
