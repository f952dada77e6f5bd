"""Two editors of one test case, in a real browser: a save from a stale revision (someone changed
the case while it was open) is refused, the editor keeps the author's edit on screen and shows the
conflict; "Save mine over theirs" then saves it on top of their revision."""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, expect

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CAT = {"instances": [{"animal": "cat", "image": "tom.jpg"}]}


def test_a_stale_save_keeps_the_edit_and_shows_the_conflict(
    make_graph: Any, studio_user: Any, user_page: Page, open_editor: Any
) -> None:
    from execution.cases import services
    from execution.models import GraphCase

    manifest, layout, description, _request = demo.DEMO_GRAPHS["animal-switch"]
    graph = make_graph("animal-switch", manifest["spec"]["nodes"], layout=layout, description=description)
    document = {"name": "routes to cat", "request": {"payload": CAT}, "expectations": [{"status": 200}]}
    case = services.test_case_create(graph=graph, user=studio_user, document=document)

    page = user_page
    open_editor(page, "animal-switch")
    open_tab(page, "Tests")
    page.get_by_role("button", name="Edit routes to cat").click()
    editor = page.get_by_role("form", name="Edit test case routes to cat")
    editor.get_by_label("Description").fill("mine")

    # Someone else saves the case meanwhile.
    services.test_case_update(
        test_case=case, user=studio_user, document={**document, "description": "theirs"}, base_revision=1
    )

    editor.get_by_role("button", name="Save test case").click()
    conflict = editor.get_by_role("alert").filter(has_text="changed by someone else")
    expect(conflict).to_contain_text("“routes to cat” — theirs")
    expect(editor.get_by_label("Description")).to_have_value("mine")  # the edit is still there
    case.refresh_from_db()
    assert case.description == "theirs"

    conflict.get_by_role("button", name="Save mine over theirs").click()
    expect(page.get_by_role("list", name="Test cases")).to_contain_text("routes to cat")
    case.refresh_from_db()
    assert (case.description, case.revision) == ("mine", 3)
    assert GraphCase.objects.count() == 1
