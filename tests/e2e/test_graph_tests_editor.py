"""Graph tests in the editor, in a real browser against the real stack (live server, Redis, a
Celery worker, the mock model server): a finished run saved as a test case through the console's
dialog, the Tests tab's list, and an expectation written by clicking a value in the JSON tree of a
step's response, with the server's issues pinned to the expectation.

Selectors: the console's "Save as test case…" button and its dialog "Save as test case" (list
"Expectations", "Remove: <sentence>" buttons); the "Tests" tab with the list "Test cases" and
"Edit <name>" buttons; in the case editor one "Expectation N" item per expectation with its
"Pick from a response…" button, the picker's "Response to pick from" select and JSON tree (``role=tree``,
rows ``role=treeitem`` with ``data-path``), and the fields "Path (GJSON)" and "On step's response".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from canvaskit import on_one_line, open_tab
from playwright.sync_api import Locator, Page, expect
from test_accessibility import serious_violations

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 30_000  # a run on a loaded 2-core machine: queue, worker thread, mock calls
CAT = {"instances": [{"animal": "cat", "image": "tom.jpg"}]}


@pytest.fixture
def switch_graph(make_graph: Any) -> Any:
    manifest, layout, description, _request = demo.DEMO_GRAPHS["animal-switch"]
    return make_graph("animal-switch", manifest["spec"]["nodes"], layout=layout, description=description)


def console(page: Page) -> Locator:
    return page.get_by_role("region", name="Run console")


@pytest.fixture
def cat_run(stack: Any, switch_graph: Any, user_page: Page, open_editor: Any) -> Page:
    """The Switch demo open in the editor, after a cat ran through it."""
    run_cat(user_page, open_editor)
    return user_page


def run_cat(page: Page, open_editor: Any) -> None:
    """Opens the Switch demo and runs a cat through it (succeeded)."""
    open_editor(page, "animal-switch")
    open_tab(page, "Run")
    page.get_by_label("Payload (JSON)").fill(json.dumps(CAT))
    page.get_by_role("button", name="Run", exact=True).click()
    expect(console(page).locator(".run-status")).to_have_text("succeeded", timeout=RUN_TIMEOUT_MS)


def test_a_finished_run_is_saved_as_a_case_with_the_expectations_the_user_kept(
    cat_run: Page, switch_graph: Any
) -> None:
    """The dialog lists the status, the body subset and the route; the removed one is not saved;
    the case shows up in the Tests tab."""
    from execution.models import GraphCase

    page = cat_run
    # The final body is a JSON tree now: its values are rows with their GJSON path.
    final = console(page).locator(".run-final")
    expect(final.get_by_role("treeitem").and_(final.locator('[data-path="predictions.0"]'))).to_be_visible()

    console(page).get_by_role("button", name="Save as test case…").click()
    dialog = page.get_by_role("dialog", name="Save as test case")
    exps = dialog.get_by_role("list", name="Expectations").get_by_role("listitem")
    expect(exps).to_have_count(3)
    expect(exps.nth(0)).to_contain_text("The final status is 200")
    expect(exps.nth(1)).to_contain_text("The body contains")
    expect(exps.nth(2)).to_contain_text('Node root routed to step "cat"')
    assert serious_violations(page) == []
    dialog.get_by_role("button", name=re.compile(r"^Remove: The body contains")).click()
    expect(exps).to_have_count(2)
    dialog.get_by_label("Name").fill("a cat photo")
    dialog.get_by_role("button", name="Save test case").click()

    expect(dialog).to_be_hidden()
    expect(page.get_by_role("tab", name="Tests")).to_have_attribute("aria-selected", "true")
    cases = page.get_by_role("list", name="Test cases")
    expect(cases.locator(".case-item.highlight")).to_contain_text("a cat photo")
    expect(cases).to_contain_text('Node root routed to step "cat"')
    case = GraphCase.objects.get(graph=switch_graph, name="a cat photo")
    assert case.document["expectations"] == [{"status": 200}, {"route": "root", "took": "cat"}]
    assert case.document["request"]["payload"] == CAT


def test_an_expectation_is_written_by_clicking_a_value_of_a_step_response_and_issues_are_pinned(
    cat_run: Page, switch_graph: Any
) -> None:
    """Add expectation → pick from a step's response → click the value: the path, the step and the
    value fill the form, and the save stores them. A step the graph lacks comes back as the
    server's issue on that expectation, and nothing is saved."""
    from execution.models import GraphCase

    page = cat_run
    breed = json.loads(console(page).locator('.run-final [data-path="predictions.0"] .jt-value').inner_text())

    open_tab(page, "Tests")
    page.get_by_role("button", name="New test case").click()
    editor = page.get_by_role("form", name="New test case")
    editor.get_by_label("Name", exact=True).fill("cat breed")
    editor.get_by_label("Request (JSON", exact=False).fill(json.dumps({"payload": CAT}))
    editor.get_by_role("button", name="+ Add expectation").click()
    second = editor.get_by_role("listitem", name="Expectation 2")
    second.get_by_role("button", name="Pick from a response…").click()
    picker = second.get_by_role("group", name="Pick a value from a run")
    picker.get_by_label("Response to pick from").select_option(label="Step root/cat")
    tree = picker.get_by_role("tree", name="Step root/cat")
    tree.locator('[data-path="predictions.0"]').click()

    expect(picker).to_be_hidden()
    expect(second.get_by_label("Path (GJSON)")).to_have_value("predictions.0")
    expect(second.get_by_label("On step's response", exact=False)).to_have_value("root/cat")
    expect(second).to_contain_text(f'predictions.0 in step root/cat\'s response equals "{breed}"')
    assert serious_violations(page) == []

    # A third expectation on a step the graph does not have: the server refuses the case.
    editor.get_by_role("button", name="+ Add expectation").click()
    third = editor.get_by_role("listitem", name="Expectation 3")
    third.get_by_label("Path (GJSON)").fill("predictions.0")
    third.get_by_label("On step's response", exact=False).fill("root/horse")
    third.get_by_label("Operator").select_option("exists")
    editor.get_by_role("button", name="Save test case").click()
    expect(third.locator(".field-error")).to_contain_text("horse")
    expect(third).to_have_class(re.compile(r"\bhas-issue\b"))
    expect(second).not_to_have_class(re.compile(r"\bhas-issue\b"))
    assert not GraphCase.objects.filter(graph=switch_graph).exists()

    third.get_by_role("button", name="Remove expectation 3").click()
    editor.get_by_role("button", name="Save test case").click()
    expect(page.get_by_role("list", name="Test cases")).to_contain_text("cat breed")
    case = GraphCase.objects.get(graph=switch_graph, name="cat breed")
    assert case.document["expectations"] == [
        {"status": 200},
        {"path": "predictions.0", "step": "root/cat", "equals": breed},
    ]


def test_the_json_tree_and_the_case_list_work_from_the_keyboard(cat_run: Page, switch_graph: Any) -> None:
    """Arrows move through the tree and open and close containers, Enter picks the value; Edit,
    Duplicate and Delete are buttons reached with Tab."""
    from execution.models import GraphCase

    page = cat_run
    final_tree = console(page).locator(".run-final").get_by_role("tree")
    root = final_tree.get_by_role("treeitem").first
    root.focus()
    page.keyboard.press("ArrowDown")  # predictions
    predictions = final_tree.locator('[data-path="predictions"]')
    expect(predictions).to_be_focused()
    page.keyboard.press("ArrowLeft")  # closes it
    expect(predictions).to_have_attribute("aria-expanded", "false")
    expect(final_tree.locator('[data-path="predictions.0"]')).to_have_count(0)
    page.keyboard.press("ArrowRight")  # opens it
    page.keyboard.press("ArrowRight")  # to its first element
    expect(final_tree.locator('[data-path="predictions.0"]')).to_be_focused()
    expect(console(page).locator(".run-final .jt-path")).to_contain_text("predictions.0")
    # Searching narrows the rows to the matches and their parents.
    console(page).locator(".run-final").get_by_role("searchbox").fill("zzz-nothing")
    expect(final_tree.get_by_role("treeitem")).to_have_count(0)

    open_tab(page, "Tests")
    page.get_by_role("button", name="New test case").click()
    editor = page.get_by_role("form", name="New test case")
    editor.get_by_label("Name", exact=True).fill("keyboard")
    first = editor.get_by_role("listitem", name="Expectation 1")
    first.get_by_role("button", name="Pick from a response…").press("Enter")
    tree = first.get_by_role("tree", name="Final response")
    tree.get_by_role("treeitem").first.focus()
    page.keyboard.press("End")
    expect(tree.locator('[data-path="predictions.0"]')).to_be_focused()
    page.keyboard.press("Enter")
    expect(first.get_by_label("Path (GJSON)")).to_have_value("predictions.0")
    editor.get_by_role("button", name="Save test case").press("Enter")
    cases = page.get_by_role("list", name="Test cases")
    expect(cases).to_contain_text("keyboard")

    page.get_by_role("button", name="Duplicate keyboard").press("Enter")
    expect(cases.get_by_role("listitem").filter(has_text="keyboard (copy)")).to_have_count(1)
    page.get_by_role("button", name="Delete keyboard (copy)").press("Enter")
    page.get_by_role("dialog", name="Delete the test case?").get_by_role("button", name="Delete").press(
        "Enter"
    )
    expect(page.get_by_role("status").filter(has_text="Deleted “keyboard (copy)”.")).to_be_visible()
    assert list(GraphCase.objects.filter(graph=switch_graph).values_list("name", flat=True)) == ["keyboard"]


def test_the_test_file_is_exported_and_imported_and_a_bad_file_shows_its_problems(
    stack: Any, switch_graph: Any, studio_user: Any, user_page: Page, open_editor: Any, tmp_path: Any
) -> None:
    """Export YAML downloads the graph's cases; importing the file back with Merge keeps one case
    per name; a file with a bad expectation is refused with its line, and nothing changes."""
    import yaml

    from execution.cases import services
    from execution.models import GraphCase

    document = {"name": "a cat", "request": {"payload": CAT}, "expectations": [{"status": 200}]}
    services.test_case_create(graph=switch_graph, user=studio_user, document=document)
    page = user_page
    open_editor(page, "animal-switch")
    open_tab(page, "Tests")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export YAML").click()
    assert download.value.suggested_filename == "animal-switch.tests.yaml"
    exported = yaml.safe_load(Path(download.value.path()).read_text(encoding="utf-8"))
    assert exported["kind"] == "InferenceGraphTest" and [c["name"] for c in exported["cases"]] == ["a cat"]

    exported["cases"].append(
        {"name": "a dog", "request": {"payload": CAT}, "expectations": [{"status": 201}]}
    )
    good = tmp_path / "pets.tests.yaml"
    good.write_text(yaml.safe_dump(exported), encoding="utf-8")
    page.get_by_label("Test file to import").set_input_files(str(good))
    dialog = page.get_by_role("dialog", name="Import pets.tests.yaml")
    dialog.get_by_role("button", name="Merge").click()
    expect(
        page.get_by_role("status").filter(has_text="Imported 2 cases from pets.tests.yaml.")
    ).to_be_visible()
    expect(page.get_by_role("list", name="Test cases")).to_contain_text("a dog")
    assert sorted(GraphCase.objects.filter(graph=switch_graph).values_list("name", flat=True)) == [
        "a cat",
        "a dog",
    ]

    bad = tmp_path / "bad.tests.yaml"
    bad.write_text(
        "kind: InferenceGraphTest\ngraph: animal-switch\ncases:\n- name: broken\n  expectations:\n"
        "  - {path: a, matches: '(unclosed'}\n",
        encoding="utf-8",
    )
    page.get_by_label("Test file to import").set_input_files(str(bad))
    dialog = page.get_by_role("dialog", name="Import bad.tests.yaml")
    dialog.get_by_role("button", name="Replace all cases").click()
    expect(dialog.get_by_role("alert")).to_contain_text("line 6")
    expect(dialog.get_by_role("alert")).to_contain_text("regex")
    assert sorted(GraphCase.objects.filter(graph=switch_graph).values_list("name", flat=True)) == [
        "a cat",
        "a dog",
    ]


def add_case(graph: Any, user: Any, name: str, expectations: list[dict[str, Any]]) -> Any:
    from execution.cases import services

    document = {"name": name, "request": {"payload": CAT}, "expectations": expectations}
    return services.test_case_create(graph=graph, user=user, document=document)


def start_suite(page: Page, open_editor: Any, environment: str) -> Locator:
    """Opens the Switch demo's Tests tab and runs its suite in ``environment``; the Suite region."""
    open_editor(page, "animal-switch")
    open_tab(page, "Tests")
    suite = page.get_by_role("region", name="Suite")
    expect(suite.get_by_label("Version")).to_have_value("1")
    suite.get_by_label("Environment").select_option(environment)
    suite.get_by_role("button", name="Run suite").click()
    return suite


def test_the_suite_runs_with_live_counts_and_a_failed_case_opens_its_run_with_the_failures_on_top(
    stack: Any, switch_graph: Any, studio_user: Any, user_page: Page, open_editor: Any, shot: Any
) -> None:
    """Run suite on the version on screen: the counts reach the end, the failed case comes first in
    the table, and opening it shows its failed expectation (expected against actual) above its run."""
    from execution.suites.models import SuiteRun

    add_case(switch_graph, studio_user, "routes to cat", [{"status": 200}, {"route": "root", "took": "cat"}])
    add_case(switch_graph, studio_user, "says a dog", [{"path": "predictions.0", "equals": "a dog breed"}])
    page = user_page
    suite = start_suite(page, open_editor, "local")

    bar = suite.get_by_role("progressbar", name="Suite progress")
    expect(bar).to_have_attribute("aria-valuenow", "2", timeout=RUN_TIMEOUT_MS)
    expect(bar).to_have_attribute("aria-valuetext", "2/2 · 1 passed · 1 failed · 0 errors")
    expect(suite.get_by_role("status")).to_have_text("failed")
    rows = suite.get_by_role("table").get_by_role("row")
    expect(rows.nth(1)).to_contain_text("says a dog")
    expect(rows.nth(1)).to_contain_text("failed")
    expect(rows.nth(2)).to_contain_text("passed")
    shot(page, "suite-results")
    # The table reads at the side panel's default width: headers and outcomes keep their words.
    table = suite.get_by_role("table")
    for cell in [
        *table.locator("thead th:not(:has(.visually-hidden))").all(),
        *table.locator(".outcome").all(),
    ]:
        assert on_one_line(cell), cell.inner_text()
    stored = SuiteRun.objects.get(graph=switch_graph)
    assert stored.status == "failed" and stored.version.number == 1
    # Each case shows its last result in the list.
    cases = page.get_by_role("list", name="Test cases")
    expect(cases.get_by_role("listitem").filter(has_text="routes to cat").first).to_contain_text(
        "passed on v1"
    )

    suite.get_by_role("button", name="Open the run of says a dog").press("Enter")
    expect(page.get_by_role("tab", name="Run")).to_have_attribute("aria-selected", "true")
    failures = page.get_by_role("region", name="Failed expectations")
    expect(failures).to_contain_text("Test case “says a dog”: failed")
    expect(failures).to_contain_text('"a dog breed"')
    # As diff tools show it: the expected value "-" (red), what the run returned "+" (green).
    expect(failures.locator(".diff-legend").first).to_contain_text("\u2212 expected")
    expect(failures.locator(".diff-legend").first).to_contain_text("+ actual")
    expect(failures.locator("pre.diff-unified del.diff-expected")).to_have_text('- "a dog breed"')
    expect(failures.locator("pre.diff-unified ins.diff-actual")).to_have_text(
        re.compile(r'^\+ "(?!a dog breed")')
    )
    run_id = stored.results.get(name="says a dog").run_id
    expect(console(page)).to_have_attribute("data-run-id", str(run_id))
    expect(console(page).locator(".run-status")).to_have_text("succeeded")
    # The failures sit above the console.
    failures_box, console_box = failures.bounding_box(), console(page).bounding_box()
    assert failures_box is not None and console_box is not None and failures_box["y"] < console_box["y"]
    shot(page, "failed-case")


def test_a_running_suite_is_cancelled_and_says_how_many_cases_finished(
    stack: Any, switch_graph: Any, studio_user: Any, user_page: Page, open_editor: Any, mock_server: Any
) -> None:
    from execution.models import Environment

    Environment.objects.create(
        name="slow",
        visibility="shared",
        url_template=f"{mock_server.url}/v1/models/{{name}}:predict?latency_ms=4000",
        allow_loopback=True,
        step_timeout=60.0,
        deadline=120.0,
    )
    for i in range(3):
        add_case(switch_graph, studio_user, f"slow {i}", [{"status": 200}])
    page = user_page
    suite = start_suite(page, open_editor, "slow")
    suite.get_by_role("button", name="Cancel suite").click()
    expect(suite.get_by_role("status")).to_have_text("cancelled", timeout=RUN_TIMEOUT_MS)
    bar = suite.get_by_role("progressbar", name="Suite progress")
    expect(bar).to_have_attribute("aria-valuetext", re.compile(r"^\d/3 · .* cancelled$"))
    expect(suite.get_by_role("button", name="Cancel suite")).to_have_count(0)
    expect(suite.get_by_role("button", name="Run suite")).to_be_enabled()


def test_green_state_everywhere_and_the_export_gate_asks_for_a_reason(
    stack: Any, switch_graph: Any, studio_user: Any, user_page: Page, open_editor: Any, live_server: Any
) -> None:
    """After a failing suite run: History, the version banner and the graph list say so; with the
    gate switched on in the graph's properties, the export menu warns and Export asks for a reason
    of visible characters, which the audit log keeps with the forced export (a POST)."""
    from graphs.models import AuditEvent, Graph

    add_case(switch_graph, studio_user, "routes to cat", [{"route": "root", "took": "cat"}])
    add_case(switch_graph, studio_user, "says a dog", [{"path": "predictions.0", "equals": "a dog breed"}])
    page = user_page
    suite = start_suite(page, open_editor, "local")
    expect(suite.get_by_role("status")).to_have_text("failed", timeout=RUN_TIMEOUT_MS)

    open_tab(page, "History")
    versions = page.get_by_role("list", name="Versions")
    expect(versions.get_by_role("listitem").first).to_contain_text("✗ 1/2 failed · local")
    versions.get_by_role("button", name="View version 1").click()
    expect(page.locator(".view-banner")).to_contain_text("1/2 failed · local")
    page.locator(".view-banner").get_by_role("button", name="Back to editing").click()

    # The setting, in the graph's properties (nothing selected).
    open_tab(page, "Properties")
    gate = page.get_by_label("Require a passing suite run to export")
    gate.check()
    expect(gate).to_be_checked()
    page.wait_for_function("() => !document.querySelector('.test-gate .spinner')")
    assert Graph.objects.get(pk=switch_graph.pk).require_passing_tests
    # whose verdicts count: none ticked, the system's default environment
    trusted = page.get_by_role("group", name="Trusted environments")
    expect(trusted.get_by_role("checkbox", name="local (default)")).not_to_be_checked()
    expect(page.locator("#test-gate-help")).to_contain_text("in a trusted environment: local (the default)")

    page.get_by_role("button", name="Export").click()
    menu = page.get_by_role("menu", name="Export format")
    expect(page.locator(".menu").get_by_role("note")).to_have_text(
        "v1 has no passing suite run (latest: 1/2 failed · local); exporting asks for a reason."
    )
    assert serious_violations(page) == []
    menu.get_by_role("menuitem", name="YAML").click()
    dialog = page.get_by_role("dialog", name="Export without passing tests?")
    expect(dialog).to_contain_text("Version 1 has no passing suite run")
    assert serious_violations(page) == []
    dialog.get_by_role("button", name="Export anyway").click()
    expect(dialog.get_by_role("alert")).to_contain_text("Say why")
    # zero-width and other invisible characters are no reason
    dialog.get_by_label("Reason (kept in the audit log)").fill("\u200b\u2060\ufeff" * 4)
    dialog.get_by_role("button", name="Export anyway").click()
    expect(dialog.get_by_role("alert")).to_contain_text("at least 8 visible characters")
    assert not AuditEvent.objects.filter(action="version.export_forced").exists()
    dialog.get_by_label("Reason (kept in the audit log)").fill("hotfix for the demo")
    with page.expect_download() as download:
        dialog.get_by_label("Reason (kept in the audit log)").press("Enter")
    assert download.value.suggested_filename == "animal-switch-v1.yaml"
    expect(dialog).to_be_hidden()
    forced = AuditEvent.objects.get(action="version.export_forced")
    assert forced.details["reason"] == "hotfix for the demo"

    page.goto(f"{live_server.url}/")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="animal-switch"))
    expect(row).to_contain_text("✗ 1/2 failed · local")


def test_comparing_two_versions_marks_the_changed_step_on_the_canvas_beside_the_manifest_diff(
    stack: Any,
    switch_graph: Any,
    studio_user: Any,
    user_page: Page,
    open_editor: Any,
    add_version: Any,
    live_server: Any,
    shot: Any,
) -> None:
    """Version 2 sends cats to the echo model: comparing v1 → v2 runs both suites, the cat case
    changed at step root/cat (its response), the dog case did not; choosing the cat case shows v2
    with that step marked, and the manifest diff names the changed field."""
    from canvaskit import step_row

    manifest, _layout, _description, _request = demo.DEMO_GRAPHS["animal-switch"]
    nodes = json.loads(json.dumps(manifest["spec"]["nodes"]))
    nodes["root"]["steps"][0]["serviceName"] = "echo"
    add_version(switch_graph, nodes, message="cats to echo")
    add_case(switch_graph, studio_user, "a cat", [{"status": 200}])
    dog = {
        "name": "a dog",
        "request": {"payload": {"instances": [{"animal": "dog"}]}},
        "expectations": [{"status": 200}],
    }
    from execution.cases import services

    services.test_case_create(graph=switch_graph, user=studio_user, document=dog)
    page = user_page
    open_editor(page, "animal-switch")
    open_tab(page, "Tests")
    section = page.get_by_role("region", name="Compare versions")
    section.get_by_role("button", name="Last green vs latest").click()
    expect(section).to_contain_text("No version has passed its suite yet.")
    section.get_by_label("Version A (before)").select_option("1")
    section.get_by_label("Version B (after)").select_option("2")
    section.get_by_label("Environment").select_option("local")
    section.get_by_role("button", name="Run both and compare").click()
    expect(section.get_by_role("status")).to_contain_text(
        "v1 (passed) → v2 (passed): 1 of 2 cases changed.", timeout=RUN_TIMEOUT_MS
    )
    # The "last green" note answered the earlier click; a new comparison clears it.
    expect(section).not_to_contain_text("No version has passed its suite yet.")
    cases = section.get_by_role("list", name="Cases compared").get_by_role("listitem")
    expect(cases.first).to_contain_text("a cat")
    expect(cases.first).to_contain_text("changed")
    expect(cases.nth(1)).to_contain_text("same")
    expect(section.locator(".cmp-manifest")).to_contain_text("serviceName")

    cases.first.get_by_role("button").press("Enter")
    steps = section.get_by_role("list", name="Steps of a cat")
    expect(steps.locator(".cmp-step.changed")).to_contain_text("root/cat")
    expect(steps.locator(".cmp-step.changed")).to_contain_text("response")
    expect(page.locator(".view-banner")).to_contain_text("Viewing version 2")
    shot(page, "compare")
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\bmark-changed\b"))
    expect(step_row(page, "root", 1)).not_to_have_class(re.compile(r"\bmark-changed\b"))
    # The Flow view marks the same step's box.
    page.get_by_role("group", name="Canvas view").get_by_role("button", name="Flow", exact=True).click()
    flow_box = page.locator('.flow-box[data-box="root/0"]')
    expect(flow_box).to_have_class(re.compile(r"\bmark-changed\b"))
    expect(page.locator('.flow-box[data-box="root/1"]')).not_to_have_class(re.compile(r"\bmark-changed\b"))
    assert serious_violations(page) == []
    # "Last green vs latest" picks the graph's last passing version as A and the latest as B.
    graph = page.request.get(f"{live_server.url}/api/graphs/animal-switch/").json()
    assert graph["last_passing_version"] in (1, 2)
    section.get_by_label("Version A (before)").select_option("")
    section.get_by_role("button", name="Last green vs latest").click()
    if graph["last_passing_version"] == 2:
        expect(section).to_contain_text("The latest version (v2) is the last green one.")
    else:
        expect(section.get_by_label("Version A (before)")).to_have_value("1")
        expect(section.get_by_label("Version B (after)")).to_have_value("2")
