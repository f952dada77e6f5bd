"""Issue 14, items 7 and 8 in the run console, against the real stack (worker, Redis, mock models).

Fixtures ``worker``, ``run_settings`` and ``mock_server`` come from the test suite's conftest; the
helpers are test_console.py's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import card, step_row
from playwright.sync_api import Page, expect
from test_console import console, line, start_run, wait_status

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SEP = "\u203a"

# root calls an Ensemble whose two members both fail (Soft, the default): the Ensemble still
# answers 200 (ROUTER-SEMANTICS §2.7), so the run succeeds. `spare` is never called.
SOFT_ENSEMBLE = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "match", "nodeName": "match"},
            {"name": "greet", "serviceName": "success-200"},
        ],
    },
    "match": {
        "routerType": "Ensemble",
        "steps": [
            {"name": "db-employees", "serviceName": "always-404"},
            {"name": "db-visitors", "serviceName": "always-404"},
        ],
    },
    "spare": {"routerType": "Sequence", "steps": [{"name": "unused", "serviceName": "echo"}]},
}


@pytest.fixture
def stack(worker: Any, run_settings: None, studio_user: Any) -> Any:
    from execution import services

    environment, _ = services.ensure_local_environment(owner=studio_user)
    return environment


def test_soft_failures_are_marked_apart_and_unreached_nodes_greyed(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, shot: Any
) -> None:
    """An Ensemble whose Soft members both failed: the members show "failed, went on (Soft)", the
    Sequence step that called it is flagged rather than plain green, the console explains it, and
    the node the run never reached is greyed."""
    page = user_page
    make_graph("soft-ensemble", SOFT_ENSEMBLE)
    open_editor(page, "soft-ensemble", cards=3)
    start_run(page, {"instances": [1]})
    wait_status(page, "succeeded")

    for call_id in ("root/0>match/0", "root/0>match/1"):
        expect(line(page, call_id)).to_have_class(re.compile(r"\bstatus-soft-failed\b"))
        expect(line(page, call_id)).to_contain_text("went on (Soft)")
    expect(line(page, "root/1")).to_have_class(re.compile(r"\bstatus-ok\b"))
    note = console(page).locator(".run-soft-note")
    expect(note).to_contain_text(f"2 calls failed, but the graph went on: match {SEP} db-employees")
    expect(note).to_contain_text("dependency: Hard")

    for i in (0, 1):
        expect(step_row(page, "match", i)).to_have_class(re.compile(r"\brun-soft-failed\b"))
    caller = step_row(page, "root", 0).locator(".run-badge.run-soft-below")
    expect(caller).to_be_visible()
    expect(caller).to_have_attribute("title", re.compile(r"2 calls below failed"))
    expect(step_row(page, "root", 1).locator(".run-soft-below")).to_have_count(0)
    expect(card(page, "spare")).to_have_class(re.compile(r"\brun-not-reached\b"))
    expect(card(page, "root")).not_to_have_class(re.compile(r"\brun-not-reached\b"))
    shot(page, "soft")
