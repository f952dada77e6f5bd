"""Versions in the browser: concurrent saves, history compare and rollback, export downloads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from canvaskit import base_badge, card, drop_step, open_tab, save, select_step, set_field, step_row
from conftest import api_get
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHARED = {"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceName": "model"}]}}


def conflict_dialog(page: Any) -> Any:
    return page.get_by_role("dialog", name="Someone saved a newer version")


def test_conflicting_save_from_a_second_browser_loses_no_edit(
    user_page: Any,
    login: Any,
    studio_user: Any,
    make_graph: Any,
    open_editor: Any,
    live_server: Any,
    shot: Any,
) -> None:
    """Two browsers edit version 1. The second to save gets the conflict dialog: "Keep editing"
    keeps the working copy, "Apply my edits on top" replays it on the newer version so both
    edits are saved; "Overwrite with mine" saves a working copy exactly as it is."""
    make_graph("shared-graph", nodes=SHARED)
    first, second = user_page, login(studio_user)
    open_editor(first, "shared-graph", cards=1)
    open_editor(second, "shared-graph", cards=1)

    # The second browser changes the existing step and saves version 2.
    select_step(second, "root", 0)
    set_field(second, "serviceName", "model-b")
    assert save(second, "Use model-b") == 2

    # The first browser, still on version 1, adds a step and saves.
    drop_step(first, "Service step", "root")
    set_field(first, "name", "from-a")
    set_field(first, "serviceName", "model-a")
    first.get_by_label("Version message").fill("Add from-a")
    first.get_by_role("button", name="Save", exact=True).click()
    dialog = conflict_dialog(first)
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("version 2")
    expect(dialog).to_contain_text("Use model-b")
    shot(first, "conflict")

    dialog.get_by_role("button", name="Keep editing").click()
    expect(dialog).to_be_hidden()
    expect(step_row(first, "root", 1).locator(".step-name")).to_have_text("from-a")
    expect(first.locator(".unsaved")).to_be_visible()
    assert api_get(first, live_server.url, "/api/graphs/shared-graph/")["latest_version"]["number"] == 2

    first.get_by_label("Version message").press("Control+s")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Apply my edits on top").click()
    expect(dialog).to_be_hidden()
    expect(first.locator(".toast")).to_contain_text("on top of version 2")
    expect(base_badge(first)).to_have_text("v2")
    expect(step_row(first, "root", 0).locator(".chip-svc")).to_contain_text("model-b")
    expect(step_row(first, "root", 1).locator(".chip-svc")).to_contain_text("model-a")
    shot(first, "rebased")
    assert save(first, "Add from-a") == 3
    v3 = api_get(first, live_server.url, "/api/graphs/shared-graph/versions/3/")
    assert v3["manifest"]["spec"]["nodes"]["root"]["steps"] == [
        {"name": "a", "serviceName": "model-b"},
        {"name": "from-a", "serviceName": "model-a"},
    ]
    assert v3["parent"] == 2

    # The second browser (on version 2) saves again: it chooses to overwrite with its copy.
    set_field(second, "serviceName", "model-c")
    second.get_by_label("Version message").fill("model-c only")
    second.get_by_role("button", name="Save", exact=True).click()
    dialog = conflict_dialog(second)
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Overwrite with mine").click()
    expect(dialog).to_be_hidden()
    expect(second.locator(".toast")).to_contain_text("Saved version 4")
    v4 = api_get(second, live_server.url, "/api/graphs/shared-graph/versions/4/")
    assert v4["manifest"]["spec"]["nodes"]["root"]["steps"] == [{"name": "a", "serviceName": "model-c"}]
    assert v4["message"] == "model-c only"


def test_compare_two_versions_and_roll_back(
    user_page: Any, make_graph: Any, add_version: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """History: comparing v1 → v2 marks the added node on the canvas; viewing v1 shows it
    read-only; rolling back to v1 saves v3 with v1's content."""
    page = user_page
    graph = make_graph("history-demo", nodes=SHARED, message="First cut")
    add_version(
        graph,
        {
            "root": {
                "routerType": "Sequence",
                "steps": [{"name": "a", "serviceName": "model"}, {"name": "score", "nodeName": "scorer"}],
            },
            "scorer": {"routerType": "Ensemble", "steps": [{"serviceName": "x"}, {"serviceName": "y"}]},
        },
        message="Add scorer",
    )
    open_editor(page, "history-demo", cards=2)
    open_tab(page, "History")
    versions = page.get_by_role("list", name="Versions")
    expect(versions.get_by_role("listitem")).to_have_count(2)
    expect(page.get_by_label("Compare from version")).to_have_value("1")
    expect(page.get_by_label("Compare to version")).to_have_value("2")
    for picker in ("Compare from version", "Compare to version"):  # wide enough for "v2", not "v…"
        size = page.get_by_label(picker).bounding_box()
        assert size is not None and size["width"] >= 60, size

    page.get_by_role("button", name="Compare on canvas").click()
    banner = page.locator(".compare-banner")
    expect(banner).to_contain_text("Comparing v1 → v2")
    expect(banner).to_contain_text("1 added")
    expect(card(page, "scorer")).to_have_class(re.compile(r"\bmark-added\b"))
    expect(card(page, "root")).to_have_class(re.compile(r"\bmark-changed\b"))
    shot(page, "compare")
    banner.get_by_role("button", name="Close comparison").click()
    expect(banner).to_have_count(0)

    page.get_by_role("button", name="View version 1").click()
    view_banner = page.locator(".view-banner")
    expect(view_banner).to_contain_text("Viewing version 1")
    expect(view_banner).to_contain_text("First cut")
    expect(page.locator(".router-card")).to_have_count(1)
    expect(page.get_by_role("button", name="Save", exact=True)).to_be_disabled()
    shot(page, "view-v1")

    page.get_by_role("button", name="Roll back to version 1").click()
    confirm = page.get_by_role("dialog", name="Roll back to version 1")
    expect(confirm).to_be_visible()
    confirm.get_by_role("button", name="Create version from v1").click()
    expect(page.locator(".toast")).to_contain_text("Rolled back: version 3 has the content of version 1.")
    expect(page.locator(".view-banner")).to_have_count(0)
    expect(base_badge(page)).to_have_text("v3")
    expect(page.locator(".router-card")).to_have_count(1)
    expect(versions.get_by_role("listitem")).to_have_count(3)
    shot(page, "rolled-back")

    v1 = api_get(page, live_server.url, "/api/graphs/history-demo/versions/1/")
    v3 = api_get(page, live_server.url, "/api/graphs/history-demo/versions/3/")
    assert v3["manifest"] == v1["manifest"]
    assert v3["spec_hash"] == v1["spec_hash"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_download_equals_the_api_export(
    fmt: str, user_page: Any, make_graph: Any, open_editor: Any, live_server: Any, tmp_path: Path
) -> None:
    """Export → YAML/JSON downloads the saved version byte for byte as the API exports it."""
    page = user_page
    make_graph(
        "export-demo",
        nodes={
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "pre", "serviceUrl": "http://pre.example/v1/models/pre:predict"},
                    {"name": "route", "nodeName": "pick", "data": "$response"},
                ],
            },
            "pick": {
                "routerType": "Switch",
                "steps": [{"serviceName": "cats", "condition": '[@this].#(kind=="cat")'}],
            },
        },
    )
    open_editor(page, "export-demo", cards=2)
    page.get_by_role("button", name="Export").click()
    with page.expect_download() as info:
        page.get_by_role("menuitem", name=fmt.upper()).click()
    download = info.value
    assert download.suggested_filename == f"export-demo-v1.{fmt}"
    target = tmp_path / download.suggested_filename
    download.save_as(target)

    api = page.request.get(f"{live_server.url}/api/graphs/export-demo/versions/1/export/?format={fmt}")
    assert api.ok, api.text()
    assert target.read_bytes() == api.body()
    expect(page.locator(".toast")).to_contain_text(f"Exported version 1 as {fmt.upper()}")
