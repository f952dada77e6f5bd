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


ROOT_LAST = {
    "zeta": {"routerType": "Sequence", "steps": [{"name": "z", "serviceName": "z"}]},
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "first", "serviceName": "first"},
            {"name": "second", "nodeName": "zeta"},
        ],
    },
}


def focused(page: Page) -> str:
    """What has the keyboard focus: `node:<name>`, `step:<node>#<i>`, `tab:<id>` or its tag."""
    return str(
        page.evaluate(
            """() => {
              const el = document.activeElement;
              if (el.matches(".step-row")) return `step:${el.closest(".router-card").dataset.node}#${el.dataset.step}`;
              if (el.matches(".react-flow__node")) return `node:${el.dataset.id}`;
              if (el.matches("[role=tab]")) return `tab:${el.id}`;
              return el.tagName;
            }"""
        )
    )


def test_keyboard_reaches_steps_moves_cards_as_edits_and_asks_before_deleting_root(
    user_page: Page, make_graph: Any, open_editor: Any
) -> None:
    """Step rows are Tab stops (Enter selects, Up/Down walk the rows); cards come in graph order;
    an arrow-key move is an edit (unsaved, undoable); Delete on root asks first."""
    page = user_page
    make_graph("keys", nodes=ROOT_LAST)
    open_editor(page, "keys", cards=2)

    # Cards in the DOM, and so in Tab order, root first although the manifest lists it last.
    order = page.locator(".react-flow__node").evaluate_all("els => els.map(e => e.dataset.id)")
    assert order == ["root", "zeta"]

    step_row(page, "root", 0).focus()
    assert focused(page) == "step:root#0"
    page.keyboard.press("ArrowDown")
    assert focused(page) == "step:root#1"
    page.keyboard.press("Enter")
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator(".props-title")).to_contain_text("Step 1")
    page.keyboard.press("Tab")
    assert focused(page) != "step:root#1"

    # Arrow keys move the selected card: an edit, undone by Ctrl+Z.
    card(page, "zeta").locator(".card-name").click()
    before = card(page, "zeta").bounding_box()
    assert focused(page) == "node:zeta"
    expect(page.locator(".unsaved")).to_have_count(0)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".unsaved")).to_be_visible()
    moved = card(page, "zeta").bounding_box()
    assert before is not None and moved is not None and moved["x"] > before["x"]
    # A quick burst of presses merges into one undo step (a slow machine may leave two).
    undo = page.get_by_role("button", name="Undo")
    for _ in range(2):
        if undo.is_enabled():
            page.keyboard.press("Control+z")
    expect(undo).to_be_disabled()
    expect(page.locator(".unsaved")).to_have_count(0)
    back = card(page, "zeta").bounding_box()
    assert back is not None and round(back["x"]) == round(before["x"])

    # Delete on root asks first; Cancel keeps it, confirming removes it.
    card(page, "root").locator(".card-name").click()
    page.keyboard.press("Delete")
    dialog = page.get_by_role("dialog", name="Delete the root node?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(card(page, "root")).to_be_visible()
    card(page, "root").locator(".card-name").click()
    page.keyboard.press("Delete")
    dialog.get_by_role("button", name="Delete root").click()
    expect(card(page, "root")).to_have_count(0)
    # Another node goes at once.
    card(page, "zeta").locator(".card-name").click()
    page.keyboard.press("Delete")
    expect(page.locator(".router-card")).to_have_count(0)
    expect(dialog).to_be_hidden()


def test_panel_tabs_follow_the_aria_tabs_pattern(user_page: Page, make_graph: Any, open_editor: Any) -> None:
    """The tab list is one Tab stop; arrow keys (wrapping), Home and End switch panels."""
    page = user_page
    make_graph("tabs", nodes=ONE_STEP)
    open_editor(page, "tabs", cards=1)
    tablist = page.get_by_role("tablist", name="Panels")
    tabs = tablist.get_by_role("tab")
    expect(tabs).to_have_count(7)
    # At the panel's default width every tab shows whole (the sixth, Tests, was cut off at "Tes").
    strip = tablist.bounding_box()
    assert strip is not None
    for handle in tabs.all():
        box = handle.bounding_box()
        assert box is not None and box["x"] + box["width"] <= strip["x"] + strip["width"] + 0.5, (
            handle.inner_text()
        )
    expect(page.locator('[role=tab][tabindex="0"]')).to_have_count(1)
    page.get_by_role("tab", name="Properties").focus()
    page.keyboard.press("ArrowRight")
    assert focused(page) == "tab:tab-yaml"
    expect(page.get_by_role("tab", name="YAML")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-yaml")).to_be_visible()
    page.keyboard.press("End")
    assert focused(page) == "tab:tab-load"
    page.keyboard.press("ArrowRight")
    assert focused(page) == "tab:tab-properties"
    page.keyboard.press("ArrowLeft")
    assert focused(page) == "tab:tab-load"
    page.keyboard.press("Home")
    expect(page.get_by_role("tab", name="Properties")).to_have_attribute("aria-selected", "true")
    expect(page.locator('[role=tab][tabindex="0"]')).to_have_attribute("id", "tab-properties")
    # Tab leaves the tab list for the panel rather than walking the other tabs.
    page.keyboard.press("Tab")
    assert not focused(page).startswith("tab:")


def card_rects(page: Page) -> dict[str, dict[str, float]]:
    rects: dict[str, dict[str, float]] = {}
    for handle in page.locator(".router-card").all():
        box = handle.bounding_box()
        assert box is not None
        rects[str(handle.get_attribute("data-node"))] = {k: box[k] for k in ("x", "y", "width", "height")}
    return rects


def overlapping(rects: dict[str, dict[str, float]]) -> list[tuple[str, str]]:
    names = sorted(rects)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p, q = rects[a], rects[b]
            if (
                p["x"] < q["x"] + q["width"]
                and q["x"] < p["x"] + p["width"]
                and p["y"] < q["y"] + q["height"]
                and q["y"] < p["y"] + p["height"]
            ):
                out.append((a, b))
    return out


def test_new_and_pasted_cards_land_in_free_space_and_cards_are_opaque(
    user_page: Page, make_graph: Any, open_editor: Any, shot: Any
) -> None:
    """Palette clicks and pastes never put a card on top of another; an unreachable card is
    drawn opaque, so nothing shows through it."""
    page = user_page
    make_graph("placement", nodes=ONE_STEP)
    open_editor(page, "placement", cards=1)

    for router_type in ("Sequence", "Switch", "Ensemble"):
        before = page.locator(".router-card").count()
        palette(page).get_by_role("button", name=router_type, exact=True).click()
        expect(page.locator(".router-card")).to_have_count(before + 1)
    assert overlapping(card_rects(page)) == []

    card(page, "root").locator(".card-name").click()
    page.keyboard.press("Control+c")
    for count in (5, 6):
        page.keyboard.press("Control+v")
        expect(page.locator(".router-card")).to_have_count(count)
    assert overlapping(card_rects(page)) == []
    shot(page, "placed")

    unreachable = card(page, "sequence")
    expect(unreachable).to_have_class(re.compile(r"\bunreachable\b"))
    opacity = unreachable.evaluate("el => getComputedStyle(el).opacity")
    assert opacity == "1"


CLASH_YAML = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: shop
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
        - name: imported
          serviceName: imported-model
"""


def test_importing_a_taken_name_offers_a_new_version_or_a_rename(
    user_page: Page, make_graph: Any, live_server: Any, tmp_path: Any, shot: Any
) -> None:
    """The clash is said once, in a dialog that imports the file as the graph's next version or
    as a new graph under another name."""
    from graphs.models import Graph

    page = user_page
    make_graph("shop", nodes=ONE_STEP)
    file = tmp_path / "shop.yaml"
    file.write_text(CLASH_YAML)

    page.goto(f"{live_server.url}/")
    page.get_by_label("Import file").set_input_files(file)
    dialog = page.get_by_role("dialog", name="A graph with this name exists")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("A graph named shop already exists.")
    expect(page.get_by_text("already exists")).to_have_count(1)
    shot(page, "clash")
    dialog.get_by_label("New name").fill("shop-two")
    dialog.get_by_role("button", name="Import under this name").click()
    expect(page).to_have_url(f"{live_server.url}/graphs/shop-two/")
    expect(step_row(page, "root", 0).locator(".step-name")).to_have_text("imported")

    page.goto(f"{live_server.url}/")
    page.get_by_label("Import file").set_input_files(file)
    dialog.get_by_role("button", name="Import as a new version of shop").click()
    expect(page).to_have_url(f"{live_server.url}/graphs/shop/")
    expect(step_row(page, "root", 0).locator(".step-name")).to_have_text("imported")
    latest = Graph.objects.get(name="shop").latest_version
    assert latest is not None and latest.number == 2
    assert Graph.objects.filter(name__startswith="shop").count() == 2


MANY_FIELDS = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {
                "name": "first",
                "serviceName": "first",
                "dependency": "Hard",
                "condition": "instances",
                "data": "$response",
            }
        ],
    }
}


def test_polish_header_yaml_order_diffs_palette_minimap_and_contrast(
    user_page: Page, make_graph: Any, add_version: Any, open_editor: Any, shot: Any
) -> None:
    """Viewing v1 the header says v1; the YAML panel keeps the export's key order; a diff says
    "unset" rather than null; the palette hint speaks of squares; no minimap for a small graph;
    helper text reaches WCAG AA contrast."""
    page = user_page
    graph = make_graph("polish", nodes=MANY_FIELDS, message="First")
    add_version(
        graph,
        {
            "root": {
                "routerType": "Sequence",
                "steps": [{"name": "first", "serviceName": "first", "data": "$response"}],
            }
        },
        message="Second",
    )
    open_editor(page, "polish", cards=1)

    expect(page.locator(".react-flow__minimap")).to_have_count(0)
    hint = palette(page).locator(".palette-hint")
    expect(hint).not_to_contain_text("●")
    expect(hint).to_contain_text("square")

    # Helper text: at least 4.5:1 against the panel behind it.
    ratio = page.locator(".field-help").first.evaluate(
        """el => {
          const rgb = s => s.match(/\\d+/g).slice(0, 3).map(Number);
          const lum = c => { const [r, g, b] = c.map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
          let bgEl = el; let bg = "rgba(0, 0, 0, 0)";
          while (bgEl && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) { bg = getComputedStyle(bgEl).backgroundColor; bgEl = bgEl.parentElement; }
          const a = lum(rgb(getComputedStyle(el).color)), b = lum(rgb(bg));
          return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        }"""
    )
    assert ratio >= 4.5, ratio

    # YAML: the step reads name, target, condition, data, dependency, as the export writes it.
    page.get_by_role("tab", name="YAML").click()
    text = page.locator(".cm-content").inner_text()
    keys = [
        line.strip().lstrip("- ").split(":")[0]
        for line in text.splitlines()
        if line.strip().lstrip("- ").split(":")[0]
        in {"name", "serviceName", "condition", "data", "dependency"}
        and line.startswith("        ")
    ]
    assert keys == ["name", "serviceName", "data"], keys

    # Viewing version 1: the header names v1, not the working copy's v2.
    page.get_by_role("tab", name="History").click()
    page.get_by_role("button", name="View version 1").click()
    expect(page.locator(".view-banner")).to_contain_text("Viewing version 1")
    expect(page.locator(".app-header .badge-readonly")).to_have_text("v1 · read-only")
    expect(page.locator(".app-header .badge-base")).to_have_count(0)
    page.get_by_role("tab", name="YAML").click()
    text = page.locator(".cm-content").inner_text()
    step_keys = [
        line.strip().lstrip("- ").split(":")[0] for line in text.splitlines() if line.startswith("        ")
    ]
    assert step_keys == ["name", "serviceName", "condition", "data", "dependency"], step_keys
    shot(page, "view-v1")

    # The diff of v1 -> v2: the removed fields read "unset", never "null".
    page.get_by_role("tab", name="History").click()
    page.get_by_role("button", name="Compare on canvas").click()
    diff = page.locator(".diff-view")
    expect(diff).to_contain_text("dependency")
    expect(diff.locator(".diff-unset").first).to_have_text("unset")
    expect(diff).not_to_contain_text("null")
    shot(page, "diff")


def test_toolbar_icons_are_one_svg_icon_set_not_unicode_glyphs(
    user_page: Page, make_graph: Any, open_editor: Any
) -> None:
    """The toolbar's buttons draw Lucide SVG icons (hidden from screen readers), not arrows and
    boxes from the font; their names stay plain words."""
    page = user_page
    make_graph("icons", nodes=ONE_STEP)
    open_editor(page, "icons", cards=1)
    toolbar = page.get_by_role("toolbar", name="Editor")
    for name in ("Undo", "Redo", "Auto layout", "Fit view", "Export", "Import", "History", "Runs"):
        button = toolbar.get_by_role("button", name=name, exact=True)
        expect(button.locator("svg.lucide")).to_have_count(1)
        expect(button.locator("svg.lucide")).to_have_attribute("aria-hidden", "true")
    text = toolbar.inner_text()
    for glyph in "↶↷⊞⤢⇩⇧⟲▤":
        assert glyph not in text
    page.get_by_role("tab", name="Run").click()
    expect(page.get_by_role("button", name="Run", exact=True).locator("svg.lucide")).to_have_count(1)
