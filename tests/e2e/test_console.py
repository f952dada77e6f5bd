"""The test-run console in a real browser, against the real stack: the live Django server, a real
Redis (broker and event fan-out), a real Celery worker and the mock model server on loopback.

Selectors: the "Run" tab; the payload textarea (label "Payload (JSON)"); the environment picker
(label "Environment"); buttons "Run", "Cancel run" and "Runs" (exact names); the console
``section[aria-label="Run console"]`` with ``.run-status``, one ``.console-step`` per step call
(``data-call-id``, ``data-node``, ``data-step``, ``status-ok|failed|skipped|running|cancelled``),
``.console-route`` lines, ``.run-error`` (why it failed) and ``.run-final`` (the response); on the
canvas ``.router-card.run-<status>``, ``.step-row.run-<status>`` (``not-taken`` for the branches a
Switch or Splitter did not take), ``.run-cond-match`` / ``.run-cond-nomatch`` and ``.run-draw``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from canvaskit import card, open_tab, step_row
from playwright.sync_api import Locator, Page, expect

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SEP = "\u203a"  # the separator the console puts between a node and its step
RUN_TIMEOUT_MS = 30_000  # a run on a loaded 2-core machine: queue, worker thread, mock calls

LATENCY = re.compile(r"^(<1 ms|\d+ ms|\d+\.\d+ s)$")
CAT = {"instances": [{"animal": "cat", "image": "tom.jpg"}]}
DOG = {"instances": [{"animal": "dog", "image": "rex.jpg"}]}

HARD = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "greet", "serviceName": "success-200"},
            {"name": "lookup", "serviceName": "always-404", "dependency": "Hard"},
            {"name": "echo", "serviceName": "echo", "data": "$response"},
        ],
    }
}


@pytest.fixture
def slow_environment(stack: Any, mock_server: Any) -> Any:
    """``slow``: the mock model server with ``latency_ms`` on every call (name -> ms)."""
    from execution.models import Environment

    def _make(name: str, latency_ms: int) -> Any:
        return Environment.objects.create(
            name=name,
            visibility="shared",  # usable by every test user, like a staff-shared one
            url_template=f"{mock_server.url}/v1/models/{{name}}:predict?latency_ms={latency_ms}",
            allow_loopback=True,
            step_timeout=60.0,
            deadline=120.0,
        )

    return _make


def api_get(page: Page, base_url: str, path: str) -> Any:
    """GET an API path with the page's session cookie."""
    response = page.request.get(f"{base_url}{path}")
    assert response.ok, f"GET {path}: {response.status} {response.text()[:300]}"
    return response.json()


def demo_graph(make_graph: Any, name: str) -> Any:
    manifest, layout, description, _request = demo.DEMO_GRAPHS[name]
    return make_graph(name, manifest["spec"]["nodes"], layout=layout, description=description)


def console(page: Page) -> Locator:
    return page.get_by_role("region", name="Run console")


def line(page: Page, call_id: str) -> Locator:
    return console(page).locator(f'.console-step[data-call-id="{call_id}"]')


def start_run(page: Page, payload: Any, environment: str | None = None, *, shortcut: bool = False) -> None:
    """Types the payload, picks the environment, then clicks Run (or presses Ctrl+Enter in the editor)."""
    open_tab(page, "Run")
    editor = page.get_by_label("Payload (JSON)")
    editor.fill(json.dumps(payload, indent=2))
    if environment:
        page.get_by_label("Environment").select_option(environment)
    if shortcut:
        editor.press("Control+Enter")
    else:
        page.get_by_role("button", name="Run", exact=True).click()


def wait_status(page: Page, status: str) -> None:
    expect(console(page).locator(".run-status")).to_have_text(status, timeout=RUN_TIMEOUT_MS)


def latest_run(page: Page, base_url: str, graph: str) -> dict[str, Any]:
    runs = api_get(page, base_url, f"/api/graphs/{graph}/runs/")["results"]
    return api_get(page, base_url, f"/api/runs/{runs[0]['id']}/")


def test_face_recognition_run_shows_every_step_its_output_and_the_merged_result(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """Each step is a console line with status, position and latency; expanding one shows what it
    was sent and answered; the final merged answer is shown; the canvas marks the path."""
    page = user_page
    demo_graph(make_graph, "face-recognition")
    open_editor(page, "face-recognition", cards=2)
    start_run(page, demo.demo_request("face-recognition"))

    wait_status(page, "succeeded")
    call_ids = ["root/0", "root/1", "root/2", "match#1/0", "match#1/1", "root/3"]
    steps = console(page).locator(".console-step")
    expect(steps).to_have_count(len(call_ids))
    assert [s.get_attribute("data-call-id") for s in steps.all()] == call_ids
    for call_id in call_ids:
        expect(line(page, call_id)).to_have_class(re.compile(r"\bstatus-ok\b"))
        expect(line(page, call_id).locator(".latency")).to_have_text(LATENCY)
    expect(line(page, "match#1/1")).to_contain_text(f"match {SEP} db-visitors")
    expect(line(page, "root/0")).to_contain_text("200")

    # The final merged answer: identities from both databases, as the API stored it.
    final = console(page).locator(".run-final")
    expect(final).to_contain_text("200")
    expect(final).to_contain_text("application/json")
    stored = latest_run(page, live_server.url, "face-recognition")
    assert stored["status"] == "succeeded"
    for identity in stored["response"]["body"]["predictions"][0]["identities"]:
        expect(final).to_contain_text(identity["name"])

    # Expanding a line shows the request it was sent and the response it received.
    line(page, "match#1/1").locator(".console-line-head").click()
    details = line(page, "match#1/1").locator(".step-details")
    expect(details).to_contain_text("Request sent")
    expect(details).to_contain_text("embedding")
    expect(details).to_contain_text("Response received")
    expect(details).to_contain_text('"database": "visitors"')
    expect(details).to_contain_text("HTTP 200")
    shot(page, "expanded")
    # ... and selects that step on the canvas.
    expect(step_row(page, "match", 1)).to_have_class(re.compile(r"\bselected\b"))

    # The path on the canvas: every step ran, with its latency; both cards are marked.
    for node, count in (("root", 4), ("match", 2)):
        expect(card(page, node)).to_have_class(re.compile(r"\brun-ok\b"))
        expect(card(page, node).locator(".step-row.run-ok")).to_have_count(count)
    expect(step_row(page, "root", 0).locator(".run-step-ok")).to_have_text(re.compile(r"ms|s"))

    # Selecting a step on the canvas highlights its console line.
    step_row(page, "root", 1).click()
    expect(line(page, "root/1")).to_have_class(re.compile(r"\bselected\b"))
    expect(line(page, "match#1/1")).not_to_have_class(re.compile(r"\bselected\b"))


def test_switch_route_follows_the_payload_and_past_runs_replay_and_compare(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any, shot: Any
) -> None:
    """A cat goes to the cat model, a dog to the dog model: the console says which condition
    matched and the canvas marks the branch; the Runs list replays and compares both runs."""
    page = user_page
    demo_graph(make_graph, "animal-switch")
    open_editor(page, "animal-switch", cards=1)

    start_run(page, CAT)
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-route")).to_contain_text('step 0 "cat" matched')
    expect(console(page).locator(".console-step")).to_have_count(1)
    expect(line(page, "root/0")).to_have_class(re.compile(r"\bstatus-ok\b"))
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-ok\b"))
    expect(step_row(page, "root", 0).locator(".run-cond-match")).to_be_visible()
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\brun-not-taken\b"))
    expect(step_row(page, "root", 1).locator(".run-cond-nomatch")).to_be_visible()
    shot(page, "cat")
    cat_run = latest_run(page, live_server.url, "animal-switch")

    start_run(page, DOG)
    expect(console(page)).not_to_have_attribute("data-run-id", cat_run["id"])
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-route")).to_contain_text('step 1 "dog" matched')
    expect(line(page, "root/1")).to_have_class(re.compile(r"\bstatus-ok\b"))
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\brun-ok\b"))
    expect(step_row(page, "root", 1).locator(".run-cond-match")).to_be_visible()
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-not-taken\b"))
    dog_run = latest_run(page, live_server.url, "animal-switch")
    breed = dog_run["response"]["body"]["predictions"][0]
    expect(console(page).locator(".run-final")).to_contain_text(breed)

    # Past runs: both are listed; comparing them shows the different branches side by side.
    page.get_by_role("button", name="Runs", exact=True).click()
    dialog = page.get_by_role("dialog", name="Runs of animal-switch")
    rows = dialog.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("succeeded")
    expect(rows.first).to_contain_text("v1")
    expect(rows.first).to_contain_text("local")
    for run_id in (cat_run["id"], dog_run["id"]):
        dialog.get_by_label(f"Pick run {run_id[:8]} to compare").check()
    dialog.get_by_role("button", name="Compare selected").click()
    compare = page.get_by_role("dialog", name="Compare runs")
    expect(compare.locator('.cmp-table tr[data-call-id="root/0"] td').nth(2)).to_contain_text("did not run")
    expect(compare.locator('.cmp-table tr[data-call-id="root/1"] td').nth(1)).to_contain_text("did not run")
    expect(compare.locator(".cmp-table tr.differs")).to_have_count(2)
    expect(compare).to_contain_text(breed)
    shot(page, "compare")
    compare.get_by_role("button", name="Back to the list").click()

    # Opening the cat run replays its console and its canvas marks.
    dialog.locator(f'tr[data-run-id="{cat_run["id"]}"]').get_by_role("button", name="Open").click()
    expect(dialog).to_be_hidden()
    expect(console(page)).to_have_attribute("data-run-id", cat_run["id"])
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-route")).to_contain_text('step 0 "cat" matched')
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-ok\b"))
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\brun-not-taken\b"))


def test_a_hard_failure_stops_the_run_where_expected_and_the_console_says_why(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    make_graph("hard-stop", HARD)
    open_editor(page, "hard-stop", cards=1)
    start_run(page, {"instances": [1]}, shortcut=True)

    wait_status(page, "failed")
    expect(line(page, "root/0")).to_have_class(re.compile(r"\bstatus-ok\b"))
    expect(line(page, "root/1")).to_have_class(re.compile(r"\bstatus-failed\b"))
    expect(line(page, "root/1")).to_contain_text("404")
    expect(line(page, "root/2")).to_have_class(re.compile(r"\bstatus-skipped\b"))
    error = console(page).locator(".run-error")
    expect(error).to_have_text(f"root {SEP} lookup (a Hard dependency) answered 404, so root stopped there.")
    expect(console(page).locator(".console-route")).to_contain_text("stopped at step 1")
    expect(console(page).locator(".run-final")).to_contain_text("Intentional 404 code")

    expect(card(page, "root")).to_have_class(re.compile(r"\brun-failed\b"))
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-ok\b"))
    expect(step_row(page, "root", 1)).to_have_class(re.compile(r"\brun-failed\b"))
    expect(step_row(page, "root", 2)).to_have_class(re.compile(r"\brun-skipped\b"))
    shot(page, "failed")

    stored = latest_run(page, live_server.url, "hard-stop")
    assert stored["status"] == "failed" and stored["response"]["status_code"] == 404
    assert [s["outcome"] for s in stored["steps"]] == ["ok", "http-error", "skipped"]


def test_cancelling_a_slow_run_stops_it(
    slow_environment: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any, shot: Any
) -> None:
    page = user_page
    slow_environment("slow", 20_000)
    demo_graph(make_graph, "cat-dog-breed")
    open_editor(page, "cat-dog-breed", cards=1)
    start_run(page, DOG, environment="slow")

    # In flight: progress with elapsed time, the first step running.
    progress = console(page).get_by_role("progressbar", name="Run progress")
    expect(progress).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(line(page, "root/0")).to_have_class(re.compile(r"\bstatus-running\b"), timeout=RUN_TIMEOUT_MS)
    expect(progress.locator(".elapsed")).to_have_text(re.compile(r"\d"))
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-running\b"))
    shot(page, "in-flight")

    console(page).get_by_role("button", name="Cancel run", exact=True).click()
    wait_status(page, "cancelled")
    expect(progress).to_be_hidden()
    expect(line(page, "root/0")).to_have_class(re.compile(r"\bstatus-cancelled\b"))
    expect(console(page).locator(".run-error")).to_contain_text("Cancelled")
    expect(console(page).get_by_role("button", name="Cancel run", exact=True)).to_have_count(0)
    expect(step_row(page, "root", 0)).to_have_class(re.compile(r"\brun-cancelled\b"))

    stored = latest_run(page, live_server.url, "cat-dog-breed")
    assert stored["status"] == "cancelled"
    assert stored["steps"][0]["outcome"] == "cancelled"


def test_reloading_the_page_mid_run_reattaches_and_the_console_continues(
    slow_environment: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any
) -> None:
    """After a reload the console shows what already happened and goes on live: every step once."""
    page = user_page
    slow_environment("unhurried", 1_200)
    demo_graph(make_graph, "face-recognition")
    open_editor(page, "face-recognition", cards=2)
    start_run(page, demo.demo_request("face-recognition"), environment="unhurried")
    expect(line(page, "root/0")).to_have_class(re.compile(r"\bstatus-ok\b"), timeout=RUN_TIMEOUT_MS)
    run_id = console(page).get_attribute("data-run-id")
    stored = api_get(page, live_server.url, f"/api/runs/{run_id}/")
    assert stored["status"] == "running", stored["status"]

    page.reload()
    expect(page.locator(".router-card").first).to_be_visible()
    open_tab(page, "Run")
    expect(console(page)).to_have_attribute("data-run-id", run_id)
    # It comes back mid-run (the last steps are still ahead) and finishes live.
    expect(console(page).get_by_role("progressbar", name="Run progress")).to_be_visible()
    wait_status(page, "succeeded")
    steps = console(page).locator(".console-step")
    expect(steps).to_have_count(6)
    assert [s.get_attribute("data-call-id") for s in steps.all()] == [
        "root/0",
        "root/1",
        "root/2",
        "match#1/0",
        "match#1/1",
        "root/3",
    ]
    expect(console(page).locator(".console-step.status-ok")).to_have_count(6)
    expect(console(page).locator(".console-note", has_text="Queued")).to_have_count(1)
    expect(console(page).locator(".run-final")).to_contain_text("identities")


def test_unsaved_edits_are_saved_first_when_asked(
    stack: Any, make_graph: Any, user_page: Page, open_editor: Any, live_server: Any
) -> None:
    """Run with unsaved edits asks: "Save and run" saves a new version and runs that one."""
    page = user_page
    demo_graph(make_graph, "animal-switch")
    open_editor(page, "animal-switch", cards=1)
    palette = page.get_by_role("complementary", name="Palette")
    palette.get_by_role("button", name="Sequence", exact=True).click()
    expect(page.locator(".router-card")).to_have_count(2)
    start_run(page, CAT)

    ask = page.get_by_role("dialog", name="Run unsaved changes?")
    expect(ask.get_by_role("button", name="Run last saved version")).to_be_visible()
    ask.get_by_role("button", name="Save and run").click()
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-title")).to_contain_text("v2")
    assert latest_run(page, live_server.url, "animal-switch")["version"] == 2
    assert api_get(page, live_server.url, "/api/graphs/animal-switch/")["latest_version"]["number"] == 2


def test_a_stream_cut_every_second_reconnects_and_shows_every_event_once(
    slow_environment: Any, make_graph: Any, user_page: Page, open_editor: Any, settings: Any
) -> None:
    """The server ends each stream after a second; the browser reconnects with Last-Event-ID and
    the console neither misses nor repeats anything."""
    settings.RUN_SSE_MAX_SECONDS = 1.0
    page = user_page
    slow_environment("choppy", 900)
    demo_graph(make_graph, "face-recognition")
    open_editor(page, "face-recognition", cards=2)
    resumed_from: list[str] = []  # the Last-Event-ID of each request for the event stream

    def on_request(request: Any) -> None:
        if "/events/" in request.url:
            resumed_from.append(request.all_headers().get("last-event-id", ""))

    page.on("request", on_request)
    start_run(page, demo.demo_request("face-recognition"), environment="choppy")

    wait_status(page, "succeeded")
    # The first request starts from the beginning; the browser's own reconnects resume.
    assert resumed_from[0] == "" and len(resumed_from) >= 2, resumed_from
    assert all(r.isdigit() and int(r) > 0 for r in resumed_from[1:]), resumed_from
    steps = console(page).locator(".console-step")
    expect(steps).to_have_count(6)
    expect(console(page).locator(".console-step.status-ok")).to_have_count(6)
    expect(console(page).locator(".console-route, .console-note.note-warn")).to_have_count(0)
    expect(console(page).locator(".console-note", has_text="Queued")).to_have_count(1)
    expect(console(page).locator(".console-note", has_text="Started")).to_have_count(1)
    expect(console(page).locator(".run-final")).to_contain_text("identities")
