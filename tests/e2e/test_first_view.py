"""The demo's first view: opening ``face-recognition`` at 1440x900 and at 1280x800 shows its whole
pipeline, Request to Response, with every box's text at least 10 px on screen; the side panel
folds away and stays folded on the next visit.

Selectors: ``.flow-canvas`` (the Flow view, ``data-direction`` its layout's direction),
``.flow-box`` (a box), ``.react-flow__viewport`` (its transform carries the zoom) and the
toolbar's "Hide the side panel" / "Show the side panel" button.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import session_cookie_for
from playwright.sync_api import BrowserContext, Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The smallest text of a box, in CSS pixels on screen.
MIN_TEXT_PX = 10


@pytest.fixture
def demo_page(
    new_context: Callable[..., BrowserContext], live_server: Any, page_errors: Any
) -> Callable[[int, int], Page]:
    """``demo_page(width, height)``: the seeded demo user's browser at that window size."""
    from django.contrib.auth import get_user_model

    from execution.devtools import demo

    for _ in demo.seed():
        pass
    user = get_user_model().objects.get(username=demo.DEMO_USER)

    def _page(width: int, height: int) -> Page:
        context = new_context()
        context.add_cookies([session_cookie_for(user, live_server.url)])
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        return page_errors.watch(page)

    return _page


def first_view_problems(page: Page) -> list[str]:
    """Each box out of the canvas's view, and each text of a box smaller than MIN_TEXT_PX."""
    return page.evaluate(
        """(min) => {
            const canvas = document.querySelector(".flow-canvas").getBoundingClientRect();
            const problems = [];
            const boxes = [...document.querySelectorAll(".flow-box")];
            if (boxes.length === 0) problems.push("no box drawn");
            for (const box of boxes) {
                const r = box.getBoundingClientRect();
                const name = box.dataset.box;
                if (r.left < canvas.left - 0.5 || r.top < canvas.top - 0.5 ||
                    r.right > canvas.right + 0.5 || r.bottom > canvas.bottom + 0.5)
                    problems.push(`${name} out of view: ${JSON.stringify(r)} in ${JSON.stringify(canvas)}`);
                const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
                for (let t = walker.nextNode(); t; t = walker.nextNode()) {
                    const el = t.parentElement;
                    if (!t.textContent.trim() || el.closest(".visually-hidden")) continue;
                    // The on-screen size: the font's size through every scale above it.
                    const range = document.createRange();
                    range.selectNodeContents(t);
                    const onScreen = range.getBoundingClientRect().height;
                    const scale = el.getBoundingClientRect().height / el.offsetHeight;
                    const px = parseFloat(getComputedStyle(el).fontSize) * scale;
                    if (onScreen > 0 && px < min - 0.05)
                        problems.push(`${name}: "${t.textContent.trim()}" is ${px.toFixed(1)} px`);
                }
            }
            return problems;
        }""",
        MIN_TEXT_PX,
    )


@pytest.mark.parametrize("size", [(1440, 900), (1280, 800)], ids=["1440x900", "1280x800"])
def test_the_demo_pipeline_is_whole_and_readable_on_first_open(
    demo_page: Callable[[int, int], Page], live_server: Any, shot: Any, size: tuple[int, int]
) -> None:
    page = demo_page(*size)
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    # Request, three models, the Ensemble's two models and its merge, Response.
    expect(page.locator(".flow-box")).to_have_count(8)
    for name in ("Request", "face-detector", "db-employees", "db-visitors", "result-merger", "Response"):
        expect(page.locator(".flow-box", has_text=name).first).to_be_visible()
    page.wait_for_timeout(300)  # no animation runs on first open; a frame for the fonts
    shot(page, "first-view")
    assert first_view_problems(page) == []


def test_the_side_panel_folds_and_stays_folded(
    demo_page: Callable[[int, int], Page], live_server: Any
) -> None:
    page = demo_page(1280, 800)
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    panel = page.locator(".side-panel")
    expect(panel).to_be_visible()
    canvas_before = page.locator(".flow-canvas").bounding_box()
    hide = page.get_by_role("button", name="Hide the side panel")
    expect(hide).to_have_attribute("aria-expanded", "true")
    hide.click()
    expect(panel).to_be_hidden()
    canvas_after = page.locator(".flow-canvas").bounding_box()
    assert canvas_before is not None and canvas_after is not None
    assert canvas_after["width"] > canvas_before["width"] + 200

    # Remembered: the next visit opens with the panel folded; P brings it back.
    page.reload()
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    expect(panel).to_be_hidden()
    show = page.get_by_role("button", name="Show the side panel")
    expect(show).to_have_attribute("aria-expanded", "false")
    page.locator(".flow-canvas").click(position={"x": 5, "y": 5})
    page.keyboard.press("p")
    expect(panel).to_be_visible()


def test_a_palette_drop_keeps_the_users_place(
    demo_page: Callable[[int, int], Page], live_server: Any
) -> None:
    """A service dropped on an arrow of the demo is inserted there; the boxes before it stay where
    they were on screen (the view does not pan), and the new box is in view."""
    page = demo_page(1440, 900)
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    request = page.locator('.flow-box[data-box="request"]')
    detector = page.locator('.flow-box[data-box="root/0"]')
    before = [request.bounding_box(), detector.bounding_box()]
    plus = page.get_by_role("button", name="Insert a model between face-detector and feature-extractor")
    target = plus.bounding_box()
    item = (
        page.get_by_role("complementary", name="Palette")
        .get_by_role("group", name="Services")
        .get_by_role("button", name="sentiment-v1", exact=True)
    )
    source = item.bounding_box()
    assert target is not None and source is not None
    page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
    page.mouse.down()
    end = (target["x"] + target["width"] / 2, target["y"] + target["height"] / 2)
    page.mouse.move(end[0] - 40, end[1] - 20, steps=6)
    page.mouse.move(*end, steps=6)
    expect(page.locator(".flow-drop-note")).to_have_text("Insert between face-detector and feature-extractor")
    page.mouse.up()
    new = page.locator('.flow-box[data-box="root/1"]')
    expect(new).to_contain_text("sentiment-v1")
    page.wait_for_timeout(400)  # a pan, if any, is animated
    assert [request.bounding_box(), detector.bounding_box()] == before
    canvas = page.locator(".flow-canvas").bounding_box()
    box = new.bounding_box()
    assert canvas is not None and box is not None
    assert canvas["y"] <= box["y"] and box["y"] + box["height"] <= canvas["y"] + canvas["height"]
