"""The Flow view: the editor's default picture of a graph, one box per model and arrows
for the data, edited directly, with a run's outcome on the boxes.

Selectors: ``.flow-box[data-box=CALL-ID]`` (a box; its id is the run console's call id, e.g.
``root/2>match/1``), its ``.flow-box-body`` (the focusable button), ``.flow-group[data-group=ID]``
(a called node's frame), ``.flow-arrow-label`` (an arrow's label and "+" button) and the toolbar's
"Canvas view" group with its "Flow" and "Nodes" buttons.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import card, open_tab, save, set_field, step_row
from playwright.sync_api import Locator, Page, expect
from test_accessibility import serious_violations
from test_console_rough_edges import SOFT_ENSEMBLE
from test_draw_pipeline import FACE_RECOGNITION

from execution.devtools import demo
from graphs import language

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 30_000


def box(page: Page, call_id: str) -> Locator:
    return page.locator(f'.flow-box[data-box="{call_id}"]')


def box_body(page: Page, call_id: str) -> Locator:
    return box(page, call_id).locator(".flow-box-body")


def centre(locator: Locator) -> tuple[float, float]:
    b = locator.bounding_box()
    assert b is not None
    return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2


def run_and_wait(page: Page, payload: str) -> None:
    """Runs the graph with ``payload`` in the Run tab and waits until the run has succeeded."""
    open_tab(page, "Run")
    page.get_by_label("Payload (JSON)").fill(payload)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_role("region", name="Run console").locator(".run-status")).to_have_text(
        "succeeded", timeout=RUN_TIMEOUT_MS
    )


def drag(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Presses at ``start`` and moves to ``end`` in small steps, as a hand does, then lets go."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + (end[0] - start[0]) / 4, start[1] + (end[1] - start[1]) / 4, steps=4)
    page.mouse.move(*end, steps=10)
    page.mouse.up()


def in_canvas(page: Page, locator: Locator) -> bool:
    """Whether ``locator`` is wholly inside the Flow canvas's visible area."""
    canvas = page.locator(".flow-canvas").bounding_box()
    b = locator.bounding_box()
    assert canvas is not None and b is not None
    return (
        canvas["x"] <= b["x"]
        and b["x"] + b["width"] <= canvas["x"] + canvas["width"]
        and canvas["y"] <= b["y"]
        and b["y"] + b["height"] <= canvas["y"] + canvas["height"]
    )


def bring_into_view(page: Page, call_id: str) -> None:
    """Focuses the box (as Tab does), which pans the canvas until the box is in view."""
    box_body(page, call_id).focus()
    for _ in range(40):
        page.wait_for_timeout(100)  # the pan is animated
        if in_canvas(page, box(page, call_id)):
            page.wait_for_timeout(300)
            return
    raise AssertionError(f"{call_id} did not come into view")


def settle(page: Page) -> None:
    """Waits until the canvas stands still: a new or selected box out of view is panned to, animated."""
    last = None
    for _ in range(30):
        now = page.locator(".flow-canvas .react-flow__viewport").get_attribute("style")
        if now == last:
            return
        last = now
        page.wait_for_timeout(120)


def yaml_text(page: Page) -> str:
    open_tab(page, "YAML")
    return page.locator(".cm-content").inner_text()


def view_button(page: Page, name: str) -> Locator:
    return page.get_by_role("group", name="Canvas view").get_by_role("button", name=name, exact=True)


def open_flow(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    expect(box(page, "request")).to_be_visible()


def demo_graph(make_graph: Any, name: str) -> Any:
    manifest, layout, description, _request = demo.DEMO_GRAPHS[name]
    return make_graph(name, manifest["spec"]["nodes"], layout=layout, description=description)


@pytest.fixture
def face_flow(flow_page: Page, make_graph: Any, live_server: Any) -> Page:
    """The demo face-recognition graph open in the Flow view."""
    demo_graph(make_graph, "face-recognition")
    open_flow(flow_page, f"{live_server.url}/graphs/face-recognition/")
    return flow_page


def test_face_recognition_reads_detect_embed_parallel_match_merge(face_flow: Page, shot: Any) -> None:
    """The demo graph opens in the Flow view and reads as its pipeline, left to right:
    detect → embed → (employees ‖ visitors) → merge → result-merger, the Ensemble a labelled group."""
    page = face_flow
    expect(view_button(page, "Flow")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".router-card")).to_have_count(0)

    chain = ["request", "root/0", "root/1", "root/2>match/0", "root/2>match:merge", "root/3", "response"]
    xs = [centre(box(page, c))[0] for c in chain]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), xs
    # The two databases are matched at once: one above the other, in the same column.
    (ex, ey), (vx, vy) = centre(box(page, "root/2>match/0")), centre(box(page, "root/2>match/1"))
    assert abs(ex - vx) < 60 and abs(ey - vy) > 40
    expect(box(page, "root/0")).to_contain_text("face-detector")
    expect(box(page, "root/2>match/1")).to_contain_text("face-db-visitors")
    expect(box(page, "root/2>match:merge")).to_contain_text("{db-employees, db-visitors}")
    group = page.locator('.flow-group[data-group="root/2>match"]')
    expect(group).to_contain_text("match")
    expect(group).to_contain_text("Ensemble")
    # The fan-in arrows are labelled with the keys of the merged answer.
    labels = page.locator(".flow-arrow-label .flow-label")
    expect(labels.filter(has_text=re.compile(r"^db-employees$"))).to_have_count(1)
    expect(labels.filter(has_text=re.compile(r"^db-visitors$"))).to_have_count(1)
    shot(page, "face-recognition")


def test_switch_and_splitter_demos_label_their_branches(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    page = flow_page
    demo_graph(make_graph, "animal-switch")
    demo_graph(make_graph, "canary")
    open_flow(page, f"{live_server.url}/graphs/animal-switch/")
    labels = page.locator(".flow-arrow-label .flow-label")
    expect(labels.filter(has_text='if instances.#(animal=="cat")')).to_have_count(1)
    expect(labels.filter(has_text='if instances.#(animal=="dog")')).to_have_count(1)
    expect(labels.filter(has_text="no match")).to_have_count(1)
    expect(box(page, "root:nomatch")).to_contain_text("nothing matched → 404")
    # Drawn whole, not cut short: the exit's title and the models' service names fit their boxes.
    for title in [
        box(page, "root:nomatch").locator(".flow-title"),
        box(page, "root/0").locator(".flow-sub-text"),
    ]:
        assert title.evaluate("el => el.scrollWidth <= el.clientWidth"), title.inner_text()
    open_flow(page, f"{live_server.url}/graphs/canary/")
    expect(labels.filter(has_text=re.compile(r"^90%$"))).to_have_count(1)
    expect(labels.filter(has_text=re.compile(r"^10%$"))).to_have_count(1)


def test_a_switch_then_an_ensemble_meet_in_one_join_point(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    """Three Switch branches then three Ensemble branches: the branches meet in one join dot, and
    one arrow leaves it for each Ensemble branch (6 arrows there, not 9); its "+" inserts after
    the Switch."""
    page = flow_page
    make_graph(
        "join-point",
        {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "route", "nodeName": "route"},
                    {"name": "fan", "nodeName": "fan", "data": "$response"},
                ],
            },
            "route": {
                "routerType": "Switch",
                "steps": [{"name": n, "serviceName": n, "condition": f"x=={n}"} for n in "abc"],
            },
            "fan": {"routerType": "Ensemble", "steps": [{"name": n, "serviceName": n} for n in "pqr"]},
        },
    )
    open_flow(page, f"{live_server.url}/graphs/join-point/")
    join = page.get_by_role("img", name="join", exact=True)
    expect(join).to_have_count(1)
    expect(join).not_to_have_attribute("tabindex", "0")
    expect(page.locator(".flow-box")).to_have_count(11)
    # request, decision (4), exit, 3 into the join, 3 out of it, 3 into the merge, the response.
    expect(page.locator(".react-flow__edge")).to_have_count(15)
    insert_blank(page, page.get_by_role("button", name="Insert a model between the join and p"))
    text = yaml_text(page)
    assert re.search(r"- name: route\n\s+nodeName: route\n\s+- name: model\n", text), text


def test_the_cat_dog_breed_demo_shows_the_condition_and_where_the_data_comes_from(
    flow_page: Page, make_graph: Any, live_server: Any
) -> None:
    """The breed step has a condition and no ``data``: it gets the graph's request (an arrow from
    Request, labelled with the condition), after the classifier (a dashed "then" arrow)."""
    page = flow_page
    demo_graph(make_graph, "cat-dog-breed")
    open_flow(page, f"{live_server.url}/graphs/cat-dog-breed/")
    expect(box(page, "root/0")).to_contain_text("cat-dog-classifier")
    expect(box(page, "root/1")).to_contain_text("dog-breed-classifier")
    expect(box(page, "root/1").locator(".flow-cond")).to_contain_text("if [@this]")
    labels = page.locator(".flow-arrow-label .flow-label")
    expect(labels.filter(has_text=re.compile(r"^if \[@this\]"))).to_have_count(1)
    expect(labels.filter(has_text=re.compile(r"^then · if \[@this\]"))).to_have_count(1)
    expect(page.locator(".flow-label-order")).to_have_count(1)


def test_insert_a_model_on_an_arrow_and_add_a_parallel_branch(face_flow: Page, shot: Any) -> None:
    """'+' on an arrow inserts a model there (the YAML shows it at once, undo takes it back); a
    parallel branch beside a box wraps it in a new Ensemble."""
    page = face_flow

    insert_blank(
        page, page.get_by_role("button", name="Insert a model between face-detector and feature-extractor")
    )
    expect(box(page, "root/1")).to_contain_text("model")
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bselected\b"))
    open_tab(page, "Properties")
    set_field(page, "serviceName", "face-aligner")
    expect(box(page, "root/1")).to_contain_text("face-aligner")
    text = yaml_text(page)
    assert re.search(r"- name: model\n\s+serviceName: face-aligner\n\s+data: \$response", text), text
    assert text.index("face-detector") < text.index("face-aligner") < text.index("feature-extractor")

    # Undo (twice: the field, then the insertion) restores the document.
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    expect(box(page, "root/1")).to_contain_text("feature-extractor")
    assert "name: model" not in yaml_text(page)

    bring_into_view(page, "root/3")
    box_body(page, "root/3").click()
    box(page, "root/3").get_by_role("button", name="‖ parallel").click()
    group = page.locator('.flow-group[data-group="root/3>ensemble"]')
    expect(group).to_contain_text("Ensemble")
    expect(box(page, "root/3>ensemble/0")).to_contain_text("result-merger")
    expect(box(page, "root/3>ensemble/1")).to_have_class(re.compile(r"\bselected\b"))
    text = yaml_text(page)
    # In a Sequence the step that now calls the Ensemble takes its name (a step name there is a label).
    assert re.search(r"- name: ensemble\n\s+nodeName: ensemble\n\s+data: \$response", text), text
    assert re.search(
        r"ensemble:\n\s+routerType: Ensemble\n\s+steps:\n\s+- name: result-merger\n\s+serviceName: result-merger\n\s+- name: model\n",
        text,
    ), text
    shot(page, "parallel")
    # Undo takes the whole branch back: one edit, the document as it was.
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")
    expect(box(page, "root/3")).to_contain_text("result-merger")
    assert "ensemble" not in yaml_text(page)


def test_views_toggle_keeps_the_selection_and_is_remembered(face_flow: Page) -> None:
    page = face_flow
    box_body(page, "root/2>match/1").click()
    expect(box(page, "root/2>match/1")).to_have_class(re.compile(r"\bselected\b"))

    page.keyboard.press("v")
    expect(view_button(page, "Nodes")).to_have_attribute("aria-pressed", "true")
    expect(step_row(page, "match", 1)).to_have_class(re.compile(r"\bselected\b"))

    # Selected in the Nodes view, shown in the Flow view; the choice survives a reload.
    step_row(page, "root", 0).locator(".step-name").click()
    view_button(page, "Flow").click()
    expect(box(page, "root/0")).to_have_class(re.compile(r"\bselected\b"))
    view_button(page, "Nodes").click()
    page.reload()
    expect(card(page, "root")).to_be_visible()
    expect(view_button(page, "Nodes")).to_have_attribute("aria-pressed", "true")


def test_keyboard_reaches_the_toggle_the_boxes_and_their_actions(face_flow: Page) -> None:
    page = face_flow
    view_button(page, "Flow").focus()
    page.keyboard.press("Tab")
    expect(view_button(page, "Nodes")).to_be_focused()

    body = box_body(page, "root/0")
    body.focus()
    page.keyboard.press("Enter")
    expect(box(page, "root/0")).to_have_class(re.compile(r"\bselected\b"))
    # Alt+→ moves the box later along its chain (the document's step order).
    page.keyboard.press("Alt+ArrowRight")
    expect(box(page, "root/1")).to_contain_text("face-detector")
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bselected\b"))
    # Tab goes from the box to its actions; Delete removes the step.
    box_body(page, "root/1").focus()
    page.keyboard.press("Tab")
    expect(box(page, "root/1").get_by_role("button", name="+ after")).to_be_focused()
    box(page, "root/1").get_by_role("button", name="Delete face-detector").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".flow-box").filter(has_text="face-detector")).to_have_count(0)
    assert "face-detector" not in yaml_text(page)


def test_a_finished_run_colours_the_boxes(
    stack: Any, flow_page: Page, make_graph: Any, live_server: Any, shot: Any
) -> None:
    """Each box of the path shows its outcome and latency; the branch a Switch did not take is grey."""
    page = flow_page
    demo_graph(make_graph, "animal-switch")
    open_flow(page, f"{live_server.url}/graphs/animal-switch/")
    run_and_wait(page, '{"instances": [{"animal": "cat", "image": "tom.jpg"}]}')
    expect(box(page, "root/0")).to_have_class(re.compile(r"\bflow-run-ok\b"))
    expect(box(page, "root/0").locator(".flow-run-badge")).to_have_text(re.compile(r"\d+(\.\d+)? ?m?s|<1 ms"))
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bflow-run-not-taken\b"))
    expect(box(page, "root:switch")).to_have_class(re.compile(r"\bflow-run-ok\b"))
    shot(page, "run")


def test_soft_failures_are_marked_apart_and_unreached_boxes_greyed(
    stack: Any, flow_page: Page, make_graph: Any, live_server: Any, shot: Any
) -> None:
    """Both Soft members of an Ensemble fail and the graph goes on: their boxes are marked as soft
    failures (not as successes, not as failures that stopped the graph); the node no step reaches
    is greyed as never reached."""
    page = flow_page
    make_graph("soft-flow", SOFT_ENSEMBLE)
    open_flow(page, f"{live_server.url}/graphs/soft-flow/")
    run_and_wait(page, '{"instances": [1]}')
    for call_id in ("root/0>match/0", "root/0>match/1"):
        expect(box(page, call_id)).to_have_class(re.compile(r"\bflow-run-soft-failed\b"))
        expect(box(page, call_id).locator(".flow-run-badge")).to_contain_text("soft")
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bflow-run-ok\b"))
    expect(box(page, "spare>spare/0")).to_have_class(re.compile(r"\bflow-run-not-reached\b"))
    shot(page, "soft")


def test_drag_a_box_along_its_chain_reorders_and_a_group_collapses(face_flow: Page) -> None:
    page = face_flow
    # face-detector dropped past feature-extractor (not past the match group): it runs second.
    start = centre(box_body(page, "root/0"))
    past = box(page, "root/1").bounding_box()
    assert past is not None
    drag(page, start, (past["x"] + past["width"] * 0.9, start[1] + 30))
    expect(box(page, "root/0")).to_contain_text("feature-extractor")
    expect(box(page, "root/1")).to_contain_text("face-detector")
    text = yaml_text(page)
    assert (
        text.index("name: feature-extractor") < text.index("name: face-detector") < text.index("name: match")
    ), text

    # A box moved a little stays where it was dropped (kept in the layout, an unsaved change).
    page.keyboard.press("Control+z")
    expect(box(page, "root/0")).to_contain_text("face-detector")
    bring_into_view(page, "root/3")
    before = box(page, "root/3").bounding_box()
    assert before is not None
    s = centre(box_body(page, "root/3"))
    drag(page, s, (s[0], s[1] + 120))
    expect(page.get_by_text("Unsaved changes")).to_be_visible()
    after = box(page, "root/3").bounding_box()
    assert after is not None and after["y"] > before["y"] + 50
    expect(box(page, "root/3")).to_contain_text("result-merger")

    # The called node's group collapses into one box and expands again.
    page.get_by_role("button", name="Collapse match").click()
    expect(box(page, "root/2")).to_contain_text("match (Ensemble, 2 steps)")
    expect(box(page, "root/2>match/0")).to_have_count(0)
    page.get_by_role("button", name="Expand match").click()
    expect(box(page, "root/2>match/0")).to_be_visible()


# The seed's pipeline (step 1 → step 2 → steps 3-1 ‖ 3-2 → step 4) as a KServe user writes it.
SEED_PIPELINE = FACE_RECOGNITION


def insert_blank(page: Page, plus: Locator) -> None:
    """ "+" on an arrow, then the blank model its menu offers beside the services."""
    plus.click()
    page.get_by_role("menu", name="Insert a model").get_by_role(
        "menuitem", name="Blank model (fill in later)"
    ).click()


def test_plus_on_an_arrow_offers_the_palettes_services(face_flow: Page) -> None:
    """'+' on an arrow offers the services the palette lists: the model inserted calls the one
    picked, so the graph stays valid; Esc closes the menu and gives the focus back to '+'."""
    page = face_flow
    plus = page.get_by_role("button", name="Insert a model between face-detector and feature-extractor")
    plus.click()
    menu = page.get_by_role("menu", name="Insert a model")
    items = menu.get_by_role("menuitem")
    palette_names = (
        page.get_by_role("complementary", name="Palette")
        .get_by_role("group", name="Services")
        .get_by_role("button")
        .all_inner_texts()
    )
    expect(items).to_have_text(["Blank model (fill in later)", *palette_names])
    assert serious_violations(page) == []
    # The keyboard: the first item has the focus, the arrow keys go through the list.
    assert len(palette_names) <= 8  # more, and a box to filter them comes first (as in the palette)
    expect(items.first).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(items.nth(1)).to_be_focused()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(items.last).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_have_count(0)
    expect(plus).to_be_focused()
    plus.click()
    menu.get_by_role("menuitem", name="result-merger", exact=True).click()
    expect(menu).to_have_count(0)
    expect(box(page, "root/1")).to_contain_text("result-merger")
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator(".valid-chip")).not_to_have_text(re.compile("error"))
    text = yaml_text(page)
    assert re.search(r"- name: result-merger\n\s+serviceName: result-merger\n\s+data: \$response", text), text


def name_model(page: Page, name: str) -> None:
    """Types the selected box's name and service name in the Properties panel."""
    open_tab(page, "Properties")
    set_field(page, "name", name)
    set_field(page, "serviceName", name)


def test_a_new_user_builds_the_seed_pipeline_with_eight_clicks(
    flow_page: Page, make_graph: Any, live_server: Any, shot: Any
) -> None:
    """From an empty graph: eight clicks in the Flow view give the four-stage pipeline's shape (the
    rest is typing names); the saved version is the manifest a KServe user writes by hand, valid,
    and its export validates."""
    page = flow_page
    make_graph("seed")
    open_flow(page, f"{live_server.url}/graphs/seed/")
    clicks = 0

    def click(locator: Locator) -> None:
        nonlocal clicks
        settle(page)
        locator.click()
        clicks += 1
        settle(page)

    click(page.get_by_role("button", name="Insert a model between Request and empty Sequence"))
    expect(page.get_by_role("menu", name="Insert a model")).to_have_count(0)  # no service to offer yet
    name_model(page, "face-detector")
    click(box(page, "root/0").get_by_role("button", name="+ after"))
    name_model(page, "feature-extractor")
    click(box(page, "root/1").get_by_role("button", name="+ after"))
    name_model(page, "db-employees")
    click(box(page, "root/2").get_by_role("button", name="‖ parallel"))
    name_model(page, "db-visitors")
    # The step that calls the new Ensemble, and the Ensemble itself, get their names.
    click(
        page.locator('.flow-group[data-group="root/2>ensemble"]').get_by_role(
            "button", name="ensemble", exact=True
        )
    )
    set_field(page, "name", "match")
    click(box_body(page, "root/2>ensemble:merge"))
    page.locator("#node-name").fill("match")
    page.locator("#node-name").press("Enter")
    expect(page.locator('.flow-group[data-group="root/2>match"]')).to_be_visible()
    # Now "+" offers the services the graph calls, and a blank model.
    click(page.get_by_role("button", name="Insert a model between merge and Response"))
    click(page.get_by_role("menuitem", name="Blank model (fill in later)"))
    name_model(page, "result-merger")
    assert clicks == 8
    expect(page.locator(".valid-chip")).to_have_text("Valid")
    shot(page, "built")

    number = save(page, "The seed's pipeline, drawn in the Flow view")
    version = page.request.get(f"{live_server.url}/api/graphs/seed/versions/{number}/").json()
    assert version["manifest"]["spec"]["nodes"] == SEED_PIPELINE
    assert version["valid"] is True
    exported = page.request.get(f"{live_server.url}/api/graphs/seed/versions/{number}/export/?format=yaml")
    assert exported.ok, exported.text()
    assert language.parse(exported.text()).document["spec"]["nodes"] == SEED_PIPELINE


def rendered_font_px(locator: Locator) -> float:
    """The font size a person sees: the element's CSS font size times the canvas's zoom."""
    return float(
        locator.evaluate(
            """el => {
                const size = parseFloat(getComputedStyle(el).fontSize);
                const viewport = el.closest('.react-flow__viewport');
                const zoom = new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a;
                return size * zoom;
            }"""
        )
    )


@pytest.mark.parametrize("name", list(demo.DEMO_GRAPHS))
def test_each_demo_opens_readable_at_its_start(
    flow_page: Page, make_graph: Any, live_server: Any, shot: Any, name: str
) -> None:
    """On a 1440x900 screen each demo graph opens with its boxes' names at a readable size (at
    least 10 px as drawn), the start of the flow in view, and every box in view or reachable by
    panning the canvas."""
    page = flow_page
    demo_graph(make_graph, name)
    open_flow(page, f"{live_server.url}/graphs/{name}/")
    page.wait_for_timeout(400)  # the first fit
    canvas = page.locator(".flow-canvas").bounding_box()
    assert canvas is not None
    titles = page.locator(".flow-box .flow-title")
    assert titles.count() >= 4
    for i in range(titles.count()):
        assert rendered_font_px(titles.nth(i)) >= 10, (i, titles.nth(i).inner_text())
    # The request box (where the flow starts) is fully in view.
    start = box(page, "request").bounding_box()
    assert start is not None
    assert canvas["x"] <= start["x"] and start["x"] + start["width"] <= canvas["x"] + canvas["width"]
    assert canvas["y"] <= start["y"] and start["y"] + start["height"] <= canvas["y"] + canvas["height"]
    shot(page, "opened")
    # Every box is in view, or comes into view by dragging the canvas left.
    response = box(page, "response")
    end = response.bounding_box()
    assert end is not None
    if end["x"] + end["width"] > canvas["x"] + canvas["width"]:
        grab = (canvas["x"] + canvas["width"] * 0.6, canvas["y"] + 12)
        shift = end["x"] + end["width"] - (canvas["x"] + canvas["width"]) + 40
        drag(page, grab, (grab[0] - shift, grab[1]))
        end = response.bounding_box()
        assert end is not None
    assert end["x"] + end["width"] <= canvas["x"] + canvas["width"]
    assert end["x"] >= canvas["x"]
