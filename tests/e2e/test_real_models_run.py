"""The demo's real models in the browser: pick the astronaut's photo in the Run panel of
face-recognition, run it on KServe's model server (models/server.py, .venv-models) through the real
stack, and see the input image with the detector's box drawn on her face and her name."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_console import RUN_TIMEOUT_MS, console, wait_status

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

FACE_SERVICES = (
    "face-detector",
    "feature-extractor",
    "face-db-employees",
    "face-db-visitors",
    "result-merger",
)


def test_pick_the_photo_run_it_and_see_the_face_boxed_and_named(
    stack: Any,
    make_graph: Any,
    user_page: Page,
    open_editor: Any,
    real_models: str,
    studio_user: Any,
    shot: Any,
) -> None:
    from execution.models import Environment

    Environment.objects.create(
        name="real-models",
        owner=studio_user,
        allow_loopback=True,
        service_urls={name: f"{real_models}/v1/models/{name}:predict" for name in FACE_SERVICES},
    )
    manifest, _layout, description, _request = demo.DEMO_GRAPHS["face-recognition"]
    make_graph(
        "face-recognition",
        manifest["spec"]["nodes"],
        layout=demo.demo_layout("face-recognition"),
        description=description,
    )
    page = user_page
    open_editor(page, "face-recognition", cards=2)
    page.get_by_role("tab", name="Run").click()

    # A file that is not an image is refused, visibly.
    page.get_by_label("Image file for the payload").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello"}
    )
    expect(page.get_by_role("alert").filter(has_text="notes.txt is not an image")).to_be_visible()

    page.get_by_label("Image file for the payload").set_input_files(str(demo.PHOTOS / "astronaut.jpg"))
    expect(page.get_by_alt_text("The picked image, astronaut.jpg")).to_be_visible()
    payload = page.get_by_label("Payload (JSON)")
    assert json.loads(payload.input_value()) == demo.photo_request()
    page.get_by_label("Environment").select_option("real-models")
    page.get_by_role("button", name="Run", exact=True).click()
    wait_status(page, "succeeded")

    figure = console(page).get_by_role("figure", name="Input image: 1 face found")
    expect(figure).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(figure).to_contain_text("Eileen Collins")
    box = figure.locator("[data-box]")
    expect(box).to_have_count(1)
    x, y, w, h = (int(v) for v in (box.get_attribute("data-box") or "").split(","))
    assert abs(x - 177) <= 4 and abs(y - 66) <= 4 and abs(w - 95) <= 4 and abs(h - 95) <= 4
    # The rectangle is drawn over her face: its place on screen is the box scaled to the image.
    image = figure.locator("img").bounding_box()
    rect = box.locator("rect").bounding_box()
    assert image is not None and rect is not None
    scale = image["width"] / 512
    assert abs(rect["x"] - (image["x"] + x * scale)) <= 4 and abs(rect["width"] - w * scale) <= 4

    # The detector's face crop is a thumbnail in its response.
    console(page).locator('.console-step[data-call-id="root/0"] .console-line-head').click()
    expect(
        console(page).get_by_role(
            "img", name=re.compile(r"Response received: predictions\.0\.faces\.0\.crop")
        )
    ).to_be_visible()
    shot(page, "astronaut")


def test_test_connection_puts_the_detectors_v2_tensors_on_its_flow_box_and_offers_a_sample(
    stack: Any, make_graph: Any, flow_page: Page, live_server: Any, real_models: str, studio_user: Any
) -> None:
    """The real model server's v2 metadata, read by Test connection: the Flow box of the detector
    shows its inputs and outputs, and the Run panel offers a v2 request built from its inputs."""
    from execution.models import Environment

    Environment.objects.create(
        name="real-v2",
        owner=studio_user,
        allow_loopback=True,
        service_urls={"face-detector": f"{real_models}/v2/models/face-detector/infer"},
    )
    make_graph("detect-v2", {"root": {"routerType": "Sequence", "steps": [{"serviceName": "face-detector"}]}})
    page = flow_page
    page.goto(f"{live_server.url}/graphs/detect-v2/")
    page.get_by_role("tab", name="Run").click()
    page.get_by_label("Environment", exact=True).select_option("real-v2")
    box = page.locator(".flow-box", has_text="face-detector")
    expect(box).to_be_visible()
    expect(box.locator(".flow-io")).to_have_count(0)  # unknown before the probe
    page.get_by_role("button", name="Test connection of real-v2").click()
    results = page.get_by_role("list", name="Connection test of real-v2")
    expect(results.get_by_role("listitem").filter(has_text="face-detector")).to_contain_text("ready")
    io = box.locator(".flow-io")
    expect(io).to_have_text("image → boxes")
    expect(io).to_have_attribute("title", "in: image BYTES [-1]; out: boxes INT32 [-1, 4]")
    page.get_by_label("Saved payloads").select_option("meta:face-detector (v2 metadata)")
    assert json.loads(page.get_by_label("Payload (JSON)").input_value()) == {
        "inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": [""]}]
    }
