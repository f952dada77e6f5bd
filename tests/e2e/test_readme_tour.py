"""The README's tour, as a newcomer takes it: the seeded demo, signed in as the
demo user, opens ``face-recognition`` in the editor and runs its sample payload in the console.

The two screenshots go to test-artifacts/screenshots/; with ``README_SCREENSHOTS=1`` they also
replace the README's pictures in docs/images/ (editor.png, console.png)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from canvaskit import on_one_line
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
RUN_TIMEOUT_MS = 60_000  # a worker on a shared 2-core machine; the run itself takes milliseconds


def readme_image(shot_path: Path, name: str) -> None:
    if os.environ.get("README_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot_path, IMAGES / name)


def test_the_demo_graph_opens_in_the_editor_and_its_sample_run_succeeds(
    worker: Any, run_settings: None, login: Any, live_server: Any, shot: Any
) -> None:
    from django.contrib.auth import get_user_model

    from execution.devtools import demo

    for _ in demo.seed():
        pass
    # A newcomer's editor opens in its default view, the Flow view: one box per model.
    page = login(get_user_model().objects.get(username=demo.DEMO_USER), canvas_view=None, flow_direction=None)
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    detector = page.locator('.flow-box[data-box="root/0"]')
    expect(detector).to_contain_text("face-detector")
    detector.click()
    expect(page.get_by_label("serviceName")).to_have_value("face-detector")
    expect(page.get_by_text("Valid", exact=True)).to_be_visible()  # the server's check has answered
    readme_image(shot(page, "editor"), "editor.png")
    # The Nodes view, one toggle away, draws the CRD's structure: router cards with their steps.
    page.get_by_role("group", name="Canvas view").get_by_role("button", name="Nodes", exact=True).click()
    expect(page.locator(".router-card")).to_have_count(2)

    page.get_by_role("tab", name="Run").click()
    # The demo graph's own sample payload is offered, not an empty one.
    expect(page.get_by_label("Payload (JSON)")).to_have_value(re.compile("lobby-camera-0001"))
    page.get_by_role("button", name="Run", exact=True).click()
    console = page.get_by_role("region", name="Run console")
    expect(console.locator(".run-status")).to_have_text("succeeded", timeout=RUN_TIMEOUT_MS)
    # The run's name is whole at the side panel's default width (it was cut to "R…").
    expect(console.locator(".console-title")).to_have_text(re.compile(r"^Run [0-9a-f]{8} · v1"))
    assert on_one_line(console.locator(".console-title"))
    console.locator('.console-step[data-call-id="match#1/1"] .console-line-head').click()
    expect(console.locator(".step-details")).to_contain_text("Response received")
    readme_image(shot(page, "console"), "console.png")
