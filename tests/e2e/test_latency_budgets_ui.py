"""Latency budgets in the editor, in a real browser against the real stack (live server, Redis, a
Celery worker, the mock model server): stated in the graph's Properties (nothing selected), refused
field by field when they do not read, saved and shown again after a reload, and judged by a suite
run whose verdict the Tests panel shows from its ``suite.finished`` event.

Selectors: the region "Latency budgets" in Properties with "Whole graph p95 (ms)", "Add a step
budget", "Step of budget N", "p95 budget of <step> (ms)" and "Save budgets"; in the Tests tab the
Suite region's "Latency budgets" region, one item per budget (``data-budget``, ``data-passed``).
"""

from __future__ import annotations

from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, expect
from test_accessibility import serious_violations
from test_graph_tests_editor import RUN_TIMEOUT_MS, add_case, start_suite

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def switch_graph(make_graph: Any) -> Any:
    manifest, layout, description, _request = demo.DEMO_GRAPHS["animal-switch"]
    return make_graph("animal-switch", manifest["spec"]["nodes"], layout=layout, description=description)


def test_budgets_are_stated_in_properties_and_a_suite_run_judges_them(
    stack: Any,
    switch_graph: Any,
    studio_user: Any,
    user_page: Page,
    open_editor: Any,
) -> None:
    from execution.suites.models import SuiteRun
    from graphs.models import Graph

    page = user_page
    open_editor(page, "animal-switch")
    open_tab(page, "Properties")
    budgets = page.get_by_role("region", name="Latency budgets")
    save = budgets.get_by_role("button", name="Save budgets")
    expect(save).to_be_disabled()  # nothing changed yet

    # What does not read is said at its field, and nothing is sent.
    budgets.get_by_label("Whole graph p95 (ms)").fill("fast")
    budgets.get_by_role("button", name="Add a step budget").click()
    step = budgets.get_by_label("Step of budget 1")
    expect(step).to_have_value("root/cat")  # the first step of the graph without a budget
    step.fill("cat")
    save.click()
    expect(budgets.get_by_label("Whole graph p95 (ms)")).to_have_attribute("aria-invalid", "true")
    expect(budgets.get_by_role("alert").first).to_contain_text("must be a number of milliseconds")
    expect(budgets.get_by_role("alert").nth(1)).to_contain_text('"cat" does not name a step')
    assert Graph.objects.get(pk=switch_graph.pk).latency_budgets == {}
    assert serious_violations(page) == []

    # A graph budget no run can keep, a step budget every run keeps.
    budgets.get_by_label("Whole graph p95 (ms)").fill("0.001")
    step.fill("root/cat")
    budgets.get_by_label("p95 budget of root/cat (ms)").fill("60000")
    save.click()
    expect(budgets.get_by_role("status")).to_have_text("Budgets saved: load tests and suite runs judge them.")
    expect(budgets.get_by_role("alert")).to_have_count(0)
    stored = Graph.objects.get(pk=switch_graph.pk).latency_budgets
    assert stored == {"graph_p95_ms": 0.001, "steps": {"root/cat": 60000.0}}

    # Shown again after a reload.
    page.reload()
    open_tab(page, "Properties")
    budgets = page.get_by_role("region", name="Latency budgets")
    expect(budgets.get_by_label("Whole graph p95 (ms)")).to_have_value("0.001")
    expect(budgets.get_by_label("Step of budget 1")).to_have_value("root/cat")
    expect(budgets.get_by_label("p95 budget of root/cat (ms)")).to_have_value("60000")

    # A suite run judges them; its end says how.
    add_case(switch_graph, studio_user, "routes to cat", [{"status": 200}])
    suite = start_suite(page, open_editor, "local")
    expect(suite.get_by_role("status")).to_have_text("passed", timeout=RUN_TIMEOUT_MS)
    verdict = suite.get_by_role("region", name="Latency budgets")
    expect(verdict.get_by_role("heading")).to_have_text("Latency budgets: exceeded")
    graph_line = verdict.locator("[data-budget='graph']")
    expect(graph_line).to_have_attribute("data-passed", "false")
    expect(graph_line).to_contain_text("p95 of graph: ")
    expect(graph_line).to_contain_text(", budget 0.001 ms")
    expect(verdict.locator("[data-budget='root/cat']")).to_have_attribute("data-passed", "true")
    assert SuiteRun.objects.get(graph=switch_graph).budgets["passed"] is False
