"""The graph list page and signing in, as a person uses them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import PASSWORD, api_get
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

IMPORTED_YAML = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: imported-graph
spec:
  nodes:
    root:
      routerType: Splitter
      steps:
        - serviceName: stable
          weight: 80
        - serviceName: canary
          weight: 20
"""


def rows(page: Any) -> Any:
    return page.locator(".graph-table tbody tr")


def test_login_form_signs_in(new_context: Any, studio_user: Any, live_server: Any, page_errors: Any) -> None:
    """An anonymous visitor is sent to /login/; the real form signs them in and back to the list."""
    page = page_errors.watch(new_context().new_page())
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/")
    page.get_by_label("Username").fill("erin")
    page.get_by_label("Password").fill("wrong-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Inference graphs")).to_be_visible()
    expect(page.locator(".user-name")).to_have_text("erin")


def test_list_search_create_import_and_archive(
    user_page: Any, make_graph: Any, live_server: Any, tmp_path: Path, shot: Any
) -> None:
    """Search filters the list; "New graph" creates one and opens it; importing a YAML file
    creates a graph from it; archiving takes a graph off the list but keeps it."""
    from graphs.models import Graph

    page = user_page
    make_graph("alpha-one", description="First graph")
    make_graph("beta-two", description="Second graph")
    page.goto(f"{live_server.url}/")
    expect(rows(page)).to_have_count(2)
    shot(page, "list")

    search = page.get_by_label("Search graphs")
    search.fill("beta")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("beta-two")
    search.fill("nothing-like-this")
    expect(page.locator(".table-status.empty")).to_contain_text("No graph matches")
    search.fill("")
    expect(rows(page)).to_have_count(2)

    # Create: a bad name is refused inline, a good one opens the new graph in the editor.
    page.get_by_role("button", name="New graph").click()
    name = page.get_by_label("Name", exact=True)
    name.fill("Gamma Three")
    expect(page.locator("#new-graph-name-help")).to_contain_text("Lower-case letters")
    expect(page.get_by_role("button", name="Create")).to_be_disabled()
    # The form suggests the name in KServe's form; one click takes it.
    page.get_by_role("button", name="Use gamma-three").click()
    expect(name).to_have_value("gamma-three")
    page.get_by_label("Description").fill("Made in the browser")
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(f"{live_server.url}/graphs/gamma-three/")
    expect(page.locator('.router-card[data-node="root"]')).to_be_visible()
    gamma = Graph.objects.get(name="gamma-three")
    assert gamma.description == "Made in the browser"
    assert gamma.latest_version.number == 1

    # Import a YAML file: a new graph named by its metadata.name, opened in the editor.
    file = tmp_path / "imported-graph.yaml"
    file.write_text(IMPORTED_YAML)
    page.goto(f"{live_server.url}/")
    expect(rows(page)).to_have_count(3)
    page.get_by_label("Import file").set_input_files(file)
    expect(page).to_have_url(f"{live_server.url}/graphs/imported-graph/")
    expect(page.locator('.router-card[data-node="root"] .step-row')).to_have_count(2)
    imported = api_get(page, live_server.url, "/api/graphs/imported-graph/")["latest_version"]
    assert imported["manifest"]["spec"]["nodes"]["root"]["steps"] == [
        {"serviceName": "stable", "weight": 80},
        {"serviceName": "canary", "weight": 20},
    ]
    assert imported["valid"] is True

    # Archive: confirmed in a dialog; the row goes, the graph and its versions stay.
    page.goto(f"{live_server.url}/")
    expect(rows(page)).to_have_count(4)
    page.get_by_role("button", name="Archive alpha-one").click()
    dialog = page.get_by_role("dialog", name="Archive graph")
    expect(dialog).to_contain_text("alpha-one")
    shot(page, "archive-confirm")
    dialog.get_by_role("button", name="Confirm archive").click()
    expect(dialog).to_be_hidden()
    expect(rows(page)).to_have_count(3)
    expect(page.get_by_role("link", name="alpha-one")).to_have_count(0)
    archived = Graph.objects.get(name="alpha-one")
    assert archived.archived_at is not None
    assert archived.versions.count() == 1
    page.reload()
    expect(rows(page)).to_have_count(3)


def test_the_list_marks_graphs_with_warnings_as_well_as_invalid_ones(
    user_page: Any, make_graph: Any, live_server: Any
) -> None:
    page = user_page
    make_graph("clean", nodes={"root": {"routerType": "Sequence", "steps": [{"serviceName": "a"}]}})
    make_graph(
        "with-orphan",
        nodes={
            "root": {"routerType": "Sequence", "steps": [{"serviceName": "a"}]},
            # Not reachable from root: a warning, not an error.
            "orphan": {"routerType": "Sequence", "steps": [{"serviceName": "b"}]},
        },
    )
    # A step that calls nothing: an error.
    make_graph(
        "broken", nodes={"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceName": ""}]}}
    )
    page.goto(f"{live_server.url}/")
    expect(rows(page)).to_have_count(3)
    row = {name: rows(page).filter(has_text=name) for name in ("clean", "with-orphan", "broken")}
    expect(row["with-orphan"].locator(".badge-warning")).to_have_text("1 warning")
    expect(row["broken"].locator(".badge-error")).to_have_text("invalid")
    expect(row["broken"].locator(".badge-warning")).to_have_count(0)
    expect(row["clean"].locator(".badge-warning, .badge-error")).to_have_count(0)
