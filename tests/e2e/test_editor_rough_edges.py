"""Issue 14, items 4-10: the editor's rough edges a new user hit in the first hour."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import card, palette, step_row
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ONE_STEP = {
    "root": {
        "routerType": "Sequence",
        "steps": [{"name": "first", "serviceName": "first"}],
    }
}


def step_names(page: Page, node: str) -> list[str]:
    return [t.strip() for t in card(page, node).locator(".step-name").all_inner_texts()]


def drag_palette_step_over(page: Page, label: str, node: str, index: int, share: float) -> None:
    """Presses on a palette step and holds it over row ``index`` at ``share`` of its height."""
    source = palette(page).get_by_role("button", name=label, exact=True).bounding_box()
    row = step_row(page, node, index).bounding_box()
    assert source is not None and row is not None
    page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
    page.mouse.down()
    page.mouse.move(source["x"] + source["width"] / 2 + 10, source["y"] + source["height"] / 2 + 5)
    page.mouse.move(row["x"] + 40, row["y"] + row["height"] * share, steps=8)
    page.mouse.move(row["x"] + 42, row["y"] + row["height"] * share)


def test_steps_dropped_on_the_middle_of_a_card_are_appended_in_drop_order(
    user_page: Page, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    """Four steps dropped on the middle of a card's first row come out in the order dropped; near a
    row's edge the insertion line shows where the step goes, and it goes there."""
    page = user_page
    make_graph("drop-order", nodes=ONE_STEP)
    open_editor(page, "drop-order", cards=1)

    for _ in range(3):
        before = card(page, "root").locator(".step-row").count()
        palette(page).get_by_role("button", name="Service step", exact=True).drag_to(
            step_row(page, "root", 0), target_position={"x": 40, "y": 20}
        )
        expect(card(page, "root").locator(".step-row")).to_have_count(before + 1)
    assert step_names(page, "root") == ["first", "step-2", "step-3", "step-4"]

    # Held near the top edge of row 1: the line is drawn above that row, and the drop lands there.
    drag_palette_step_over(page, "Service step", "root", 1, 0.1)
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\bdrop-before\b"))
    expect(card(page, "root").locator(".drop-before")).to_have_count(1)
    shot(page, "insertion-line")
    page.mouse.up()
    expect(card(page, "root").locator(".step-row")).to_have_count(5)
    assert step_names(page, "root") == ["first", "step-5", "step-2", "step-3", "step-4"]
    expect(card(page, "root").locator(".drop-before, .drop-after")).to_have_count(0)

    # Held over the middle of a row, the line marks the end of the card.
    drag_palette_step_over(page, "Service step", "root", 0, 0.5)
    expect(step_row(page, "root", 4)).to_have_class(re.compile(r"\bdrop-after\b"))
    page.mouse.up()
    expect(card(page, "root").locator(".step-row")).to_have_count(6)
    assert step_names(page, "root")[-1] == "step-6"


LONG_CONDITION = 'predictions.#(label=="dog" && score>0.9).label'

SWITCH = {
    "root": {
        "routerType": "Switch",
        "steps": [
            {"name": "cats", "serviceName": "cat-model", "condition": 'instances.#(kind=="cat")'},
            {"name": "dogs", "serviceName": "dog-model", "condition": LONG_CONDITION},
            {"name": "other", "serviceName": "fallback"},
        ],
    }
}


def test_switch_conditions_show_on_the_step_rows(
    user_page: Page, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    """Each Switch step shows its condition on its row (a long one shortened, the whole text on
    hover); a step without a condition shows none."""
    page = user_page
    make_graph("switch-labels", nodes=SWITCH)
    open_editor(page, "switch-labels", cards=1)

    short = step_row(page, "root", 0).locator(".step-cond")
    expect(short.locator(".step-cond-tag")).to_have_text("if")
    expect(short.locator(".step-cond-text")).to_have_text('instances.#(kind=="cat")')
    long = step_row(page, "root", 1).locator(".step-cond")
    expect(long).to_contain_text('predictions.#(label=="dog"')
    expect(long).not_to_contain_text(LONG_CONDITION)
    expect(long).to_have_attribute("title", f"condition: {LONG_CONDITION}")
    expect(step_row(page, "root", 2).locator(".step-cond")).to_have_count(0)
    # The text fits inside the card: the row does not widen it.
    row_box = step_row(page, "root", 1).bounding_box()
    cond_box = long.bounding_box()
    assert row_box is not None and cond_box is not None
    assert cond_box["x"] + cond_box["width"] <= row_box["x"] + row_box["width"]
    shot(page, "conditions")
