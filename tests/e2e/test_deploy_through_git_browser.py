"""Deploying through Git in the browser, against a real bare repository and the real worker:
deploy face-recognition v1 from the export menu, see it live, edit the file in Git by hand, see
the drift with its diff, import it as a new version and see that live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gitservers import GitServers
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NODES = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "detect", "serviceName": "face-detector"},
            {"name": "embed", "serviceName": "face-embedder", "data": "$response"},
        ],
    }
}
PATH = "graphs/default/face-recognition.yaml"


def test_deploy_from_the_export_menu_then_drift_and_import(
    user_page: Any,
    studio_user: Any,
    make_graph: Any,
    open_editor: Any,
    live_server: Any,
    stack: Any,
    settings: Any,
    tmp_path: Path,
) -> None:
    from deploys import targets as deploy_targets
    from graphs import services as graph_services

    page = user_page
    with GitServers(tmp_path) as servers:
        servers.create("cluster")
        settings.DEPLOY_FILE_ROOTS = [str(servers.root)]
        graph = make_graph("face-recognition", nodes=NODES)
        deploy_targets.target_create(owner=studio_user, name="prod", url=servers.file_url("cluster"))

        open_editor(page, "face-recognition", cards=1)
        page.get_by_role("button", name="Export").click()
        page.get_by_role("menuitem", name="Deploy to Git…").click()
        dialog = page.get_by_role("dialog", name="Deploy v1")
        expect(dialog.get_by_label("Deploy target")).to_have_value("prod")
        dialog.get_by_label("Message (added to the commit)").fill("First rollout")
        dialog.get_by_role("button", name="Deploy", exact=True).click()
        expect(dialog.get_by_role("status")).to_contain_text(
            "Deployed: v1 live on prod, commit", timeout=30_000
        )
        dialog.get_by_role("button", name="Close", exact=True).click()

        exported, _ = graph_services.version_export(graph=graph, version=graph.latest_version, fmt="yaml")
        assert servers.read("cluster", PATH) == exported
        head = servers.head("cluster")
        expect(page.locator(".app-header .live-chip")).to_have_text(f"v1 live on prod, commit {head[:7]}")

        edited = exported.replace("serviceName: face-embedder", "serviceName: face-embedder-v2")
        hand = servers.hand_edit("cluster", PATH, edited, message="Use the new embedder")

        page.reload()
        banner = page.get_by_role("status", name="Changed outside the studio")
        expect(banner).to_contain_text(
            f"Commit {hand[:7]} by Hand Editor <hand@example.org>: “Use the new embedder”"
        )
        banner.get_by_role("button", name="Show the diff").click()
        expect(banner).to_contain_text("face-embedder-v2")
        banner.get_by_role("button", name="Import as a new version").click()
        expect(banner).to_be_hidden(timeout=15_000)
        expect(page.locator(".app-header .live-chip")).to_have_text(f"v2 live on prod, commit {hand[:7]}")
        expect(page.locator(".app-header .badge-base")).to_have_text("v2")

        page.get_by_role("button", name="History").click()
        history = page.get_by_role("list", name="Versions")
        expect(history).to_contain_text("Use the new embedder")
        expect(history.locator(".live-chip")).to_have_text(f"v2 live on prod, commit {hand[:7]}")

        # Deploying from History over another hand edit: 409 with the diff, nothing overwritten.
        again = edited.replace("face-embedder-v2", "face-embedder-v3")
        third = servers.hand_edit("cluster", PATH, again, message="Try v3")
        page.get_by_role("button", name="Deploy version 1").click()
        dialog = page.get_by_role("dialog", name="Deploy v1")
        dialog.get_by_role("button", name="Deploy", exact=True).click()
        expect(dialog.get_by_role("alert")).to_contain_text("changed outside the studio", timeout=30_000)
        expect(dialog.get_by_role("alert")).to_contain_text("face-embedder-v3")
        assert servers.head("cluster") == third
        dialog.get_by_role("button", name="Cancel").click()

        page.goto(f"{live_server.url}/")
        expect(page.locator(".live-chip")).to_have_text(f"v2 live on prod, commit {hand[:7]}")
