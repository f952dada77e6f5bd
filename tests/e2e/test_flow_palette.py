"""The Flow view with the mouse alone: services picked in the palette are dropped on an
arrow (inserted there), on a box (run beside it, or fill a blank box in) or on the canvas (added at
the end of the pipeline); a new user draws the seed's four-stage pipeline in a handful of drags and
exports the YAML a KServe user writes by hand.

Selectors: the palette's "Services" group (a button per service, named by it), the arrows' "+"
buttons ("Insert a model between A and B"), ``.flow-box[data-box=CALL-ID]`` and the canvas's
``.flow-drop-note`` (what a drop there would do, shown while dragging).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
import yaml
from canvaskit import palette
from playwright.sync_api import Locator, Page, expect
from test_flow_view import box, bring_into_view, demo_graph, open_flow, yaml_text

from graphs import language
from graphs import manifests as graph_manifests

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# What the seed's request drew (step 1 -> step 2 -> steps 3-1 and 3-2 in parallel -> step 4), as a
# KServe user writes it by hand.
SEED_YAML = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: seed
  namespace: default
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
        - name: face-detector
          serviceName: face-detector
        - name: feature-extractor
          serviceName: feature-extractor
          data: $response
        - name: ensemble
          nodeName: ensemble
          data: $response
        - name: result-merger
          serviceName: result-merger
          data: $response
    ensemble:
      routerType: Ensemble
      steps:
        - name: db-employees
          serviceName: db-employees
        - name: db-visitors
          serviceName: db-visitors
"""

SERVICES = [
    "face-detector",
    "feature-extractor",
    "db-employees",
    "db-visitors",
    "result-merger",
    "face-aligner",
]


@pytest.fixture
def staging(studio_user: Any) -> Any:
    """The user's environment, whose service map names the models they may use."""
    from execution.models import Environment

    return Environment.objects.create(
        name="staging",
        owner=studio_user,
        service_urls={name: f"http://{name}.models.svc/v1/models/{name}:predict" for name in SERVICES},
    )


@pytest.fixture
def face_flow_staging(flow_page: Page, make_graph: Any, live_server: Any, staging: Any) -> Page:
    demo_graph(make_graph, "face-recognition")
    open_flow(flow_page, f"{live_server.url}/graphs/face-recognition/")
    return flow_page


def service(page: Page, name: str) -> Locator:
    return palette(page).get_by_role("group", name="Services").get_by_role("button", name=name, exact=True)


def plus(page: Page, between: str) -> Locator:
    return page.get_by_role("button", name=f"Insert a model between {between}", exact=True)


def centre(locator: Locator) -> tuple[float, float]:
    """The centre of ``locator`` once it stands still (the canvas pans to a new box, animated)."""
    last = None
    for _ in range(40):
        b = locator.bounding_box()  # None while the picture is drawn again
        now = None if b is None else (b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
        if now is not None and now == last:
            return now
        last = now
        locator.page.wait_for_timeout(100)
    raise AssertionError(f"{locator} keeps moving or is not drawn")


def drag_item(page: Page, item: Locator, to: tuple[float, float], note: str | None = None) -> None:
    """Drags a palette item to a point of the page as a hand does (scrolling the palette to it
    first); checks what the canvas says the drop will do (``note``) before letting go."""
    item.scroll_into_view_if_needed()
    page.mouse.move(*centre(item))
    page.mouse.down()
    page.mouse.move(to[0] - 40, to[1] - 20, steps=6)
    page.mouse.move(*to, steps=6)
    if note is not None:
        expect(page.locator(".flow-drop-note")).to_have_text(note)
    page.mouse.up()
    expect(page.locator(".flow-drop-note")).to_have_count(0)


def document(page: Page) -> Any:
    """The working copy's manifest, as the YAML panel shows it."""
    return yaml.safe_load(yaml_text(page))


def nodes_of(page: Page) -> Any:
    return document(page)["spec"]["nodes"]


def test_the_palette_lists_the_services_and_drops_them_on_arrows_boxes_and_the_canvas(
    flow_page: Page, make_graph: Any, live_server: Any, staging: Any, shot: Any
) -> None:
    page = flow_page
    demo_graph(make_graph, "face-recognition")
    open_flow(page, f"{live_server.url}/graphs/face-recognition/")
    # The studio's catalog (the services the graphs call) and the ones only the environment maps,
    # each once, by name.
    names = service(page, "face-aligner").locator("xpath=..").get_by_role("button").all_inner_texts()
    called = ["face-db-employees", "face-db-visitors", "face-detector", "feature-extractor", "result-merger"]
    assert names == sorted([*called, "db-employees", "db-visitors", "face-aligner"]), names
    before = nodes_of(page)

    # On the "+" of an arrow: inserted there, taking the previous answer.
    drag_item(
        page,
        service(page, "face-aligner"),
        centre(plus(page, "face-detector and feature-extractor")),
        "Insert between face-detector and feature-extractor",
    )
    expect(box(page, "root/1")).to_contain_text("face-aligner")
    expect(box(page, "root/1")).to_have_class(re.compile(r"\bselected\b"))
    steps = nodes_of(page)["root"]["steps"]
    assert steps[1] == {"name": "face-aligner", "serviceName": "face-aligner", "data": "$response"}
    assert [s["name"] for s in steps] == [
        "face-detector",
        "face-aligner",
        "feature-extractor",
        "match",
        "result-merger",
    ]
    shot(page, "inserted")
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")
    expect(box(page, "root/1")).to_contain_text("feature-extractor")
    assert nodes_of(page) == before

    # On the empty canvas, far from any box or arrow: the last step of the root Sequence.
    canvas = page.locator(".flow-canvas").bounding_box()
    assert canvas is not None
    drag_item(
        page,
        service(page, "face-aligner"),
        (canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] - 60),
        "Add at the end of the pipeline",
    )
    steps = nodes_of(page)["root"]["steps"]
    assert steps[-1] == {"name": "face-aligner", "serviceName": "face-aligner", "data": "$response"}
    assert len(steps) == 5
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")
    assert nodes_of(page) == before

    # On the box of a model: a new Ensemble runs it and the new model in parallel.
    bring_into_view(page, "root/0")
    drag_item(
        page,
        service(page, "face-aligner"),
        centre(box(page, "root/0")),
        "Run beside face-detector, in parallel",
    )
    nodes = nodes_of(page)
    assert nodes["root"]["steps"][0] == {"name": "ensemble", "nodeName": "ensemble"}
    assert nodes["ensemble"] == {
        "routerType": "Ensemble",
        "steps": [
            {"name": "face-detector", "serviceName": "face-detector"},
            {"name": "face-aligner", "serviceName": "face-aligner"},
        ],
    }
    page.locator(".flow-canvas .react-flow__pane").click(position={"x": 8, "y": 8})
    page.keyboard.press("Control+z")
    assert nodes_of(page) == before

    # A blank step dropped on an arrow, then a service dropped on that blank box: it is filled in.
    drag_item(
        page,
        palette(page).get_by_role("button", name="Service step", exact=True),
        centre(plus(page, "face-detector and feature-extractor")),
    )
    expect(box(page, "root/1")).to_contain_text("model")
    drag_item(page, service(page, "face-aligner"), centre(box(page, "root/1")), "Use for model")
    assert nodes_of(page)["root"]["steps"][1] == {
        "name": "face-aligner",
        "serviceName": "face-aligner",
        "data": "$response",
    }
    expect(page.locator(".valid-chip")).to_have_text("Valid")


def test_router_types_dropped_on_a_box_add_its_branches(face_flow_staging: Page) -> None:
    """A Switch from the palette dropped on a box is the box's "condition" button; a Sequence has
    no meaning on the Flow canvas: the note says what to drop, and nothing changes."""
    page = face_flow_staging
    before = nodes_of(page)
    canvas = page.locator(".flow-canvas").bounding_box()
    assert canvas is not None
    page.mouse.move(*centre(palette(page).get_by_role("button", name="Sequence", exact=True)))
    page.mouse.down()
    page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] - 60, steps=8)
    expect(page.locator(".flow-drop-note")).to_have_text("Drop an Ensemble, Switch or Splitter on a box")
    page.mouse.up()
    assert nodes_of(page) == before

    drag_item(
        page,
        palette(page).get_by_role("button", name="Switch", exact=True),
        centre(box(page, "root/0")),
        "Add a conditional branch beside face-detector",
    )
    nodes = nodes_of(page)
    assert nodes["root"]["steps"][0] == {"name": "switch", "nodeName": "switch"}
    assert nodes["switch"] == {
        "routerType": "Switch",
        "steps": [
            {"name": "face-detector", "serviceName": "face-detector", "condition": ""},
            {"name": "model", "serviceName": "", "condition": ""},
        ],
    }


def draw_seed_pipeline(page: Page, names: dict[str, str], tmp_path: Any, shot: Any) -> str:
    """From an empty graph, with the mouse only (every press-and-release a user action, at most
    12): five services dragged from the palette, Save, Export, YAML. ``names`` maps the seed's
    models to the services picked for them. Answers the downloaded YAML."""
    actions = 0

    def drop(model: str, on: Locator, below: bool = False) -> None:
        """One drag from the palette onto ``on`` (its centre; with ``below``, near its bottom)."""
        nonlocal actions
        x, y = centre(on)
        if below:
            b = on.bounding_box()
            assert b is not None
            y = b["y"] + b["height"] - 60
        drag_item(page, service(page, names[model]), (x, y))
        actions += 1

    def click(locator: Locator) -> None:
        nonlocal actions
        locator.click()
        actions += 1

    drop("face-detector", plus(page, "Request and empty Sequence"))
    expect(box(page, "root/0")).to_contain_text(names["face-detector"])
    drop("feature-extractor", plus(page, f"{names['face-detector']} and Response"))
    expect(box(page, "root/1")).to_contain_text(names["feature-extractor"])
    drop("db-employees", plus(page, f"{names['feature-extractor']} and Response"))
    expect(box(page, "root/2")).to_contain_text(names["db-employees"])
    drop("db-visitors", box(page, "root/2"))
    expect(box(page, "root/2>ensemble/1")).to_contain_text(names["db-visitors"])
    # Dropped anywhere on the empty canvas: added at the end of the pipeline.
    drop("result-merger", page.locator(".flow-canvas .react-flow__pane"), below=True)
    expect(box(page, "root/3")).to_contain_text(names["result-merger"])
    expect(page.locator(".valid-chip")).to_have_text("Valid")
    shot(page, "drawn")

    click(page.get_by_role("button", name="Save", exact=True))
    expect(page.locator(".toast").filter(has_text="Saved version 2")).to_be_visible()
    click(page.get_by_role("button", name="Export"))
    with page.expect_download() as info:
        click(page.get_by_role("menuitem", name="YAML"))
    assert actions <= 12, actions
    target = tmp_path / "seed.yaml"
    info.value.save_as(target)
    exported = target.read_text()
    assert not language.has_errors(language.validate(language.parse(exported)))
    return exported


def test_a_new_user_draws_the_seed_pipeline_with_the_mouse_alone(
    flow_page: Page, make_graph: Any, live_server: Any, staging: Any, shot: Any, tmp_path: Any
) -> None:
    """The seed's models, mapped in the user's environment, dragged onto a new graph: the
    downloaded file is the pipeline a KServe user writes by hand."""
    page = flow_page
    make_graph("seed")
    open_flow(page, f"{live_server.url}/graphs/seed/")
    exported = draw_seed_pipeline(page, {name: name for name in SERVICES}, tmp_path, shot)
    assert yaml.safe_load(exported) == yaml.safe_load(SEED_YAML), exported


def test_a_user_with_only_the_local_environment_finds_the_demos_services(
    flow_page: Page, studio_user: Any, make_graph: Any, live_server: Any, shot: Any, tmp_path: Any
) -> None:
    """What `make run` gives a new user: the demo (its graphs and the `local` environment, which
    maps no service: a URL template sends every name to the mock models) and nothing else. On a
    new graph the palette lists the services the demo's graphs call, by name, and the
    pipeline is drawn from them by drag alone."""
    from execution.devtools import demo
    from execution.models import Environment
    from execution.selectors import environment_list

    list(demo.seed())
    assert [(e.name, e.service_urls) for e in environment_list(user=studio_user)] == [("local", {})]
    assert not Environment.objects.exclude(name="local").exists()
    make_graph("seed")
    page = flow_page
    open_flow(page, f"{live_server.url}/graphs/seed/")

    names = palette(page).get_by_role("group", name="Services").get_by_role("button").all_inner_texts()
    called = Counter(
        name
        for manifest, _layout, _description, _request in demo.DEMO_GRAPHS.values()
        for name in graph_manifests.service_names(manifest)
    )
    # By name: the order stays from one visit to the next, whatever the graphs call most.
    assert names == sorted(called), names
    # Each name whole: a long one wraps rather than being cut short.
    for item in palette(page).get_by_role("group", name="Services").locator(".palette-service-name").all():
        assert item.evaluate("el => el.scrollWidth <= el.clientWidth"), item.inner_text()
    # Many services: a box filters them by name (and shows them all again once cleared).
    search = palette(page).get_by_role("searchbox", name="Filter services")
    listed = palette(page).get_by_role("group", name="Services").get_by_role("button")
    search.fill("face-db")
    expect(listed).to_have_text(["face-db-employees", "face-db-visitors"])
    search.fill("")
    expect(listed).to_have_count(len(names))
    shot(page, "catalog")

    picked = {
        "face-detector": "face-detector",
        "feature-extractor": "feature-extractor",
        "db-employees": "face-db-employees",
        "db-visitors": "face-db-visitors",
        "result-merger": "result-merger",
    }
    exported = yaml.safe_load(draw_seed_pipeline(page, picked, tmp_path, shot))
    steps = exported["spec"]["nodes"]["root"]["steps"]
    assert [step.get("serviceName") or step.get("nodeName") for step in steps] == [
        "face-detector",
        "feature-extractor",
        "ensemble",
        "result-merger",
    ]
    assert [step["serviceName"] for step in exported["spec"]["nodes"]["ensemble"]["steps"]] == [
        "face-db-employees",
        "face-db-visitors",
    ]
