"""Work is never lost: unsaved changes kept in the browser across an ended session and a reload,
a sign-in dialog that keeps the edit and then saves, and YAML that does not parse blocks Save."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import base_badge, open_tab, select_step, set_field, step_row
from conftest import PASSWORD, api_get
from playwright.sync_api import Page, expect
from test_accessibility import serious_violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHAIN = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "classifier", "serviceName": "classifier"},
            {"name": "ranker", "serviceName": "ranker"},
        ],
    }
}


def end_every_session() -> None:
    """What an expired session looks like to the server: its row is gone."""
    from django.contrib.sessions.models import Session

    Session.objects.all().delete()


def edit_service(page: Page, value: str) -> None:
    select_step(page, "root", 1)
    set_field(page, "serviceName", value)
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text(value)
    expect(page.locator(".unsaved")).to_be_visible()


def wait_draft_kept(page: Page, text: str) -> None:
    """The draft is written a moment after the last edit."""
    page.wait_for_function(
        """(text) => Object.keys(localStorage).some(
            (k) => k.startsWith("inference-graph-studio:draft:") && localStorage.getItem(k).includes(text))""",
        arg=text,
    )


def versions_of(page: Page, base_url: str, graph: str) -> list[int]:
    return [v["number"] for v in api_get(page, base_url, f"/api/graphs/{graph}/versions/")["results"]]


def test_an_ended_session_on_save_signs_in_in_a_dialog_and_saves_the_edit(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    make_graph("kept-on-save", nodes=CHAIN)
    open_editor(page, "kept-on-save", cards=1)
    edit_service(page, "ranker-v2")
    end_every_session()

    page.get_by_label("Version message").fill("Rank with v2")
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog", name="Sign in again to save")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("User name")).to_have_value("erin")
    # The edit is still on the canvas, unsaved.
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-v2")
    expect(page.locator(".unsaved")).to_be_visible()
    assert serious_violations(page) == []

    dialog.get_by_label("Password").fill("not-the-password")
    dialog.get_by_role("button", name="Sign in and save").click()
    expect(dialog.get_by_role("alert")).to_contain_text("not right")
    shot(page, "wrong-password")

    dialog.get_by_label("Password").fill(PASSWORD)
    dialog.get_by_role("button", name="Sign in and save").click()
    expect(page.locator(".toast")).to_contain_text("Saved version 2")
    expect(dialog).to_be_hidden()
    expect(page.locator(".unsaved")).to_have_count(0)
    expect(base_badge(page)).to_have_text("v2")
    latest = api_get(page, live_server.url, "/api/graphs/kept-on-save/")["latest_version"]
    assert latest["number"] == 2
    assert latest["message"] == "Rank with v2"
    assert latest["manifest"]["spec"]["nodes"]["root"]["steps"][1]["serviceName"] == "ranker-v2"
    # Saved: nothing is offered back after a reload.
    page.reload()
    expect(page.locator(".router-card")).to_have_count(1)
    expect(base_badge(page)).to_have_text("v2")
    expect(page.get_by_role("dialog", name="Restore your unsaved changes?")).to_have_count(0)


def test_unsaved_changes_survive_an_ended_session_and_a_reload(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    make_graph("kept-on-reload", nodes=CHAIN)
    open_editor(page, "kept-on-reload", cards=1)
    edit_service(page, "ranker-v3")
    wait_draft_kept(page, "ranker-v3")
    end_every_session()

    # The reload leads to the sign-in page (the unsaved-changes question is answered "leave").
    page.on("dialog", lambda d: d.accept())
    page.reload()
    expect(page).to_have_url(re.compile(r"/login/\?next=/graphs/kept-on-reload/"))
    page.get_by_label("Username").fill("erin")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{live_server.url}/graphs/kept-on-reload/")

    offer = page.get_by_role("dialog", name="Restore your unsaved changes?")
    expect(offer).to_be_visible()
    expect(offer).to_contain_text("drawn on version 1")
    shot(page, "offered")
    assert serious_violations(page) == []
    offer.get_by_role("button", name="Restore").click()
    expect(offer).to_be_hidden()
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-v3")
    expect(page.locator(".unsaved")).to_be_visible()

    # Undo goes back to the saved version; redo brings the draft again.
    page.get_by_role("button", name="Undo").click()
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker")
    expect(step_row(page, "root", 1).locator(".chip-svc")).not_to_contain_text("ranker-v3")
    page.get_by_role("button", name="Redo").click()
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-v3")

    page.get_by_label("Version message").fill("Kept across the reload")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".toast")).to_contain_text("Saved version 2")
    assert versions_of(page, live_server.url, "kept-on-reload") == [2, 1]

    # Discard drops a kept draft for good.
    edit_service(page, "ranker-v4")
    wait_draft_kept(page, "ranker-v4")
    page.reload()
    offer = page.get_by_role("dialog", name="Restore your unsaved changes?")
    offer.get_by_role("button", name="Discard them").click()
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-v3")
    expect(page.locator(".unsaved")).to_have_count(0)
    page.reload()
    expect(page.locator(".router-card")).to_have_count(1)
    expect(page.get_by_role("dialog", name="Restore your unsaved changes?")).to_have_count(0)


def test_yaml_that_does_not_parse_blocks_save_at_its_line(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    make_graph("yaml-blocked", nodes=CHAIN)
    open_editor(page, "yaml-blocked", cards=1)
    open_tab(page, "YAML")
    editor = page.get_by_label("YAML manifest")
    expect(editor).to_contain_text("serviceName: ranker")
    lines = page.locator(".cm-content .cm-line")
    texts = lines.all_inner_texts()
    number = next(i for i, t in enumerate(texts, start=1) if t.strip() == "routerType: Sequence")

    # Mis-indent that line and save at once (before the typing delay has parsed it).
    lines.nth(number - 1).click()
    page.keyboard.press("Home")
    page.keyboard.press("Home")
    page.keyboard.press("Delete")
    page.keyboard.press("Delete")
    page.keyboard.press("Delete")
    page.keyboard.press("Control+s")

    toast = page.locator(".toast")
    expect(toast).to_contain_text(f"Not saved: the YAML does not parse (line {number}:")
    expect(page.locator(".valid-chip")).to_have_text(f"YAML invalid (line {number})")
    expect(page.locator(".yaml-status")).to_contain_text(f"Line {number}:")
    # The first underline sits on the line the message names.
    expect(lines.nth(number - 1).locator(".cm-lintRange-error").first).to_be_visible()
    marked_lines = page.evaluate(
        """() => [...document.querySelectorAll(".cm-content .cm-line")]
            .map((el, i) => (el.querySelector(".cm-lintRange-error") ? i + 1 : 0)).filter(Boolean)"""
    )
    # (the lines after it may be marked too: they no longer line up with anything)
    assert marked_lines[0] == number, marked_lines
    shot(page, "blocked")
    assert versions_of(page, live_server.url, "yaml-blocked") == [1]

    # Undo the typing: the YAML parses again, Save works and nothing new was typed.
    page.keyboard.press("Control+z")
    expect(page.locator(".yaml-status")).not_to_contain_text("Line")
    expect(page.locator(".valid-chip")).not_to_contain_text("YAML invalid")

    # A valid edit typed and saved at once is saved (not "nothing new").
    lines.filter(has_text="serviceName: ranker").click()
    page.keyboard.press("End")
    page.keyboard.insert_text("-v5")
    page.keyboard.press("Control+s")
    expect(toast).to_contain_text("Saved version 2")
    saved = api_get(page, live_server.url, "/api/graphs/yaml-blocked/versions/2/")["manifest"]
    assert saved["spec"]["nodes"]["root"]["steps"][1]["serviceName"] == "ranker-v5"


def test_a_draft_drawn_on_an_older_version_is_restored_on_it_and_saving_meets_the_newer_one(
    user_page: Page, make_graph: Any, add_version: Any, open_editor: Any, live_server: Any
) -> None:
    """The draft keeps its base: restored on version 1 while version 2 exists, Save answers with
    the conflict dialog (apply on top, or overwrite), not a silent overwrite."""
    page = user_page
    graph = make_graph("kept-on-old", nodes=CHAIN)
    open_editor(page, "kept-on-old", cards=1)
    edit_service(page, "ranker-mine")
    wait_draft_kept(page, "ranker-mine")
    theirs = {
        "root": {
            **CHAIN["root"],
            "steps": [*CHAIN["root"]["steps"], {"name": "extra", "serviceName": "extra"}],
        }
    }
    add_version(graph, theirs, message="Theirs")

    page.on("dialog", lambda d: d.accept())
    page.reload()
    offer = page.get_by_role("dialog", name="Restore your unsaved changes?")
    expect(offer).to_contain_text("drawn on version 1")
    expect(offer).to_contain_text("Version 2 was saved since")
    offer.get_by_role("button", name="Restore").click()
    expect(base_badge(page)).to_have_text("v1")
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-mine")
    expect(page.locator(".router-card .step-row")).to_have_count(2)

    page.get_by_role("button", name="Save", exact=True).click()
    conflict = page.get_by_role("dialog", name="Someone saved a newer version")
    expect(conflict).to_be_visible()
    conflict.get_by_role("button", name="Apply my edits on top").click()
    expect(base_badge(page)).to_have_text("v2")
    expect(page.locator(".router-card .step-row")).to_have_count(3)
    expect(step_row(page, "root", 1).locator(".chip-svc")).to_contain_text("ranker-mine")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".toast")).to_contain_text("Saved version 3")
    steps = api_get(page, live_server.url, "/api/graphs/kept-on-old/versions/3/")["manifest"]["spec"][
        "nodes"
    ]["root"]["steps"]
    assert [s["serviceName"] for s in steps] == ["classifier", "ranker-mine", "extra"]


def test_signed_in_on_another_tab_save_again_saves(
    user_page: Page, make_graph: Any, open_editor: Any, live_server: Any
) -> None:
    """The way for single sign-on: the dialog's link opens the sign-in page in a new tab; once
    signed in there, "Save again" saves with the new session (and its new CSRF token)."""
    page = user_page
    make_graph("kept-sso", nodes=CHAIN)
    open_editor(page, "kept-sso", cards=1)
    edit_service(page, "ranker-sso")
    end_every_session()
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog", name="Sign in again to save")
    with page.context.expect_page() as opened:
        dialog.get_by_role("link", name="Sign in on a new tab").click()
    tab = opened.value
    tab.get_by_label("Username").fill("erin")
    tab.get_by_label("Password").fill(PASSWORD)
    tab.get_by_role("button", name="Sign in").click()
    expect(tab.get_by_role("heading", name="Inference graphs")).to_be_visible()
    tab.close()

    dialog.get_by_role("button", name="Save again").click()
    expect(page.locator(".toast")).to_contain_text("Saved version 2")
    assert versions_of(page, live_server.url, "kept-sso") == [2, 1]
