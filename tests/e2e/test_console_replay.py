"""The console's replay in a real browser: the stored events as JSON
(``GET /api/runs/{id}/events/?format=json``) through the same reducer as the live stream.

A stream the browser cannot read is replaced by the stored events, the run's answer comes with its
``run.finished`` (nothing else is fetched for it), a past run opens from its stored events without
a stream, and an event type the console does not know is shown instead of lost.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from canvaskit import open_tab
from playwright.sync_api import Page, Request, Route, expect
from test_console import CAT, console, demo_graph, start_run, wait_status

from execution.devtools import demo

# `stack` (conftest.py): the worker is up and `local` points at the mock model server.
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("stack")]

EVENTS_URL = re.compile(r"/api/runs/[0-9a-f-]+/events/")


def test_a_refused_stream_is_replaced_by_the_stored_events(
    make_graph: Any, user_page: Page, open_editor: Any
) -> None:
    """Every event stream fails; the console reads the stored events until the run has ended and
    shows the whole run and its answer, without fetching the run for it."""
    page = user_page
    demo_graph(make_graph, "face-recognition")
    open_editor(page, "face-recognition", cards=2)
    asked: list[str] = []

    def refuse_streams(route: Route) -> None:
        if "format=json" in route.request.url:
            route.continue_()
        else:
            route.abort()

    def on_request(request: Request) -> None:
        if "/api/runs/" in request.url:
            asked.append(request.url)

    page.route(EVENTS_URL, refuse_streams)
    page.on("request", on_request)
    start_run(page, demo.demo_request("face-recognition"))
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-step.status-ok")).to_have_count(6)
    expect(console(page).locator(".run-final")).to_contain_text("identities")
    expect(console(page).locator(".run-final .http-code")).to_have_text("200")
    run_id = console(page).get_attribute("data-run-id")
    assert any("format=json" in url for url in asked), asked
    assert not [url for url in asked if url.rstrip("/").endswith(f"/api/runs/{run_id}")], asked


def test_an_event_type_the_console_does_not_know_is_shown_live_and_replayed(
    make_graph: Any, user_page: Page, open_editor: Any
) -> None:
    """A stored event of a type this console was not built with (a newer server's) is shown as
    such, whether it arrives on the stream or from the stored events, and the run still ends."""
    from execution.models import Run, RunEvent

    page = user_page
    demo_graph(make_graph, "animal-switch")
    open_editor(page, "animal-switch", cards=1)
    start_run(page, CAT)
    wait_status(page, "succeeded")
    run_id = console(page).get_attribute("data-run-id")
    breed = json.loads(Run.objects.get(pk=run_id).response_body)["predictions"][0]
    # An unknown event just before the terminal one.
    final = RunEvent.objects.get(run_id=run_id, type="run.finished")
    RunEvent.objects.filter(pk=final.pk).update(seq=final.seq + 1)
    RunEvent.objects.create(run_id=run_id, seq=final.seq, type="run.paused", data={"why": "a newer server"})
    Run.objects.filter(pk=run_id).update(event_seq=final.seq + 1)

    # Live: a reload reattaches to the run's stream, which the browser cannot deliver it on.
    page.reload()
    expect(page.locator(".router-card").first).to_be_visible()
    open_tab(page, "Run")
    expect(console(page)).to_have_attribute("data-run-id", run_id or "")
    wait_status(page, "succeeded")
    unknown = console(page).locator(".console-note.note-warn", has_text="run.paused")
    expect(unknown).to_have_count(1)
    expect(unknown).to_contain_text("a newer server")
    expect(console(page).locator(".run-final")).to_contain_text(breed)

    # Replayed: opening it from the Runs list reads the stored events, and no stream.
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if EVENTS_URL.search(r.url) else None)
    page.get_by_role("button", name="Runs", exact=True).click()
    dialog = page.get_by_role("dialog", name="Runs of animal-switch")
    dialog.locator(f'tr[data-run-id="{run_id}"]').get_by_role("button", name="Open").click()
    expect(dialog).to_be_hidden()
    wait_status(page, "succeeded")
    expect(console(page).locator(".console-note.note-warn", has_text="run.paused")).to_have_count(1)
    expect(console(page).locator(".run-final")).to_contain_text(breed)
    assert streams and all("format=json" in url for url in streams), streams
