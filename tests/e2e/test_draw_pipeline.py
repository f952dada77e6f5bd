"""Drawing a whole graph by hand: palette drags, step drags, connections, properties, save."""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import card, connect_step, drop_node, drop_step, save, set_field, step_row, wait_checked
from playwright.sync_api import expect

from graphs import language

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FACE_RECOGNITION = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "face-detector", "serviceName": "face-detector"},
            {"name": "feature-extractor", "serviceName": "feature-extractor", "data": "$response"},
            {"name": "match", "nodeName": "match", "data": "$response"},
            {"name": "result-merger", "serviceName": "result-merger", "data": "$response"},
        ],
    },
    "match": {
        "routerType": "Ensemble",
        "steps": [
            {"name": "db-employees", "serviceName": "db-employees"},
            {"name": "db-visitors", "serviceName": "db-visitors"},
        ],
    },
}


def add_service_step(page: Any, node: str, name: str, data: str | None = None) -> None:
    index = drop_step(page, "Service step", node)
    set_field(page, "name", name)
    set_field(page, "serviceName", name)
    if data is not None:
        set_field(page, "data", data)
    expect(step_row(page, node, index).locator(".step-name")).to_have_text(name)


def test_person_draws_face_recognition_pipeline_from_empty_canvas(
    user_page: Any, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """From a graph with no nodes at all, a person drags and draws the face-recognition pipeline,
    saves it, and the server's export of that version is a valid InferenceGraph."""
    page = user_page
    make_graph("face-recognition", nodes={})
    page.goto(f"{live_server.url}/graphs/face-recognition/")
    expect(page.locator(".react-flow__pane")).to_be_visible()
    expect(page.locator(".router-card")).to_have_count(0)
    shot(page, "empty")

    # The first node dropped on an empty canvas is the root.
    drop_node(page, "Sequence", 0.12, 0.12)
    expect(card(page, "root")).to_be_visible()
    add_service_step(page, "root", "face-detector")
    add_service_step(page, "root", "feature-extractor", "$response")

    drop_node(page, "Ensemble", 0.62, 0.15)
    expect(card(page, "ensemble")).to_be_visible()
    name = page.locator("#node-name")
    name.fill("match")
    name.press("Enter")
    expect(card(page, "match")).to_be_visible()
    add_service_step(page, "match", "db-employees")
    add_service_step(page, "match", "db-visitors")

    index = drop_step(page, "Node step", "root")
    connect_step(page, "root", index, "match")
    # The connection selects the step; name it and pass the features on.
    set_field(page, "name", "match")
    set_field(page, "data", "$response")
    expect(page.locator(".react-flow__edge")).to_have_count(1)

    add_service_step(page, "root", "result-merger", "$response")
    expect(wait_checked(page)).to_have_text("Valid")
    shot(page, "drawn")

    number = save(page, "Face recognition pipeline")
    assert number == 2
    shot(page, "saved")

    version = page.request.get(f"{live_server.url}/api/graphs/face-recognition/versions/{number}/").json()
    assert version["manifest"]["spec"]["nodes"] == FACE_RECOGNITION
    assert version["valid"] is True
    exported = page.request.get(
        f"{live_server.url}/api/graphs/face-recognition/versions/{number}/export/?format=yaml"
    )
    assert exported.ok, exported.text()
    manifest = language.parse(exported.text())
    issues = language.validate(manifest)
    assert not language.has_errors(issues), [i.to_dict() for i in issues]
    assert [i for i in issues if i.severity == language.WARNING] == []
