"""The stored events are the one truth about a run: every event follows its declaration
(execution/eventschema.py), the terminal event carries the answer, and the same stored events are
served as SSE and as JSON, so a field the engine adds reaches both without any other change."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from execution.devtools import demo
from execution.engine import runner
from execution.eventschema import RUN_EVENTS
from execution.models import Environment, Run, RunEvent
from execution.services import runs
from graphs.models import Graph
from tests.execution.test_run_services import execute, sse_events

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(db: Any, mock_server: Any) -> Environment:
    list(demo.seed())
    return Environment.objects.get(name="local")


def stored(run: Run) -> list[RunEvent]:
    return list(RunEvent.objects.filter(run=run).order_by("seq"))


def test_the_terminal_event_carries_the_answer_as_the_run_api_shows_it(
    seeded: Environment, api: APIClient
) -> None:
    run = execute("face-recognition", demo.demo_request("face-recognition"))
    finals = [e for e in stored(run) if e.type == RUN_EVENTS.terminal]
    assert len(finals) == 1 and finals[0].seq == run.event_seq  # one, and the last
    final = finals[0].data
    shown = api.get(f"/api/runs/{run.pk}/").json()
    assert final["response"] == shown["response"] and isinstance(final["response"]["body"], dict)
    assert final["status"] == "succeeded" and final["status_code"] == 200 == shown["response"]["status_code"]
    # The engine's own report is kept: its outcome, deadline and warnings.
    assert final["outcome"] == "ok" and final["deadline_s"] > 0 and final["warnings"] == []
    assert final["attempt"] == 1 and final["duration_ms"] == shown["duration_ms"]


def test_a_run_cancelled_before_it_started_ends_without_an_answer(
    seeded: Environment, api: APIClient
) -> None:
    graph = Graph.objects.get(name="canary")
    run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=graph.owner, payload={})
    runs.run_cancel(run=run, user=graph.owner)
    final = stored(run)[-1]
    assert final.type == RUN_EVENTS.terminal
    assert final.data["status"] == "cancelled" and final.data["response"] is None
    assert final.data["status_code"] is None and final.data["warnings"] == []


def check_declared(event: RunEvent) -> None:
    declared = RUN_EVENTS.get(event.type)
    assert declared is not None, f"{event.type} is not declared in execution/eventschema.py"
    fields = RUN_EVENTS.fields_of(declared)
    names = {f.name for f in fields}
    extra = set(event.data) - names
    assert not extra, f"{event.type} carries undeclared fields {sorted(extra)}"
    missing = {f.name for f in fields if not f.optional} - set(event.data)
    assert not missing, f"{event.type} lacks declared fields {sorted(missing)}"


@pytest.mark.parametrize(
    ("graph", "payload"),
    [
        ("face-recognition", None),
        ("cat-dog-breed", {"instances": [{"animal": "cat"}]}),
        ("animal-switch", {"instances": [{"animal": "dog"}]}),
        ("canary", {"instances": [{"text": "hi"}]}),
    ],
)
def test_every_stored_event_follows_its_declaration(seeded: Environment, graph: str, payload: Any) -> None:
    run = execute(graph, payload if payload is not None else demo.demo_request(graph))
    for event in stored(run):
        check_declared(event)


def test_the_stored_events_are_served_as_json_in_order(seeded: Environment, api: APIClient) -> None:
    run = execute("cat-dog-breed", {"instances": [{"animal": "dog"}]})
    as_sse = [e["data"] for e in sse_events(api.get(f"/api/runs/{run.pk}/events/"))]
    listing = api.get(f"/api/runs/{run.pk}/events/?format=json")
    assert listing.status_code == 200 and listing["Content-Type"].startswith("application/json")
    body = listing.json()
    assert body["run"] == str(run.pk) and body["finished"] is True
    assert body["events"] == as_sse  # the same stored events, the same JSON
    assert [e["seq"] for e in body["events"]] == list(range(1, run.event_seq + 1))
    by_accept = api.get(f"/api/runs/{run.pk}/events/", HTTP_ACCEPT="application/json").json()
    assert by_accept == body
    after = api.get(f"/api/runs/{run.pk}/events/?format=json&last_event_id=3").json()
    assert [e["seq"] for e in after["events"]] == list(range(4, run.event_seq + 1))
    assert after["finished"] is True


def test_the_json_events_of_an_unfinished_run_say_so(seeded: Environment, api: APIClient) -> None:
    graph = Graph.objects.get(name="canary")
    run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=graph.owner, payload={})
    body = api.get(f"/api/runs/{run.pk}/events/?format=json").json()
    assert body["finished"] is False and [e["type"] for e in body["events"]] == ["run.queued"]


def test_the_json_events_check_their_input(seeded: Environment, api: APIClient, anon: APIClient) -> None:
    missing = api.get("/api/runs/00000000-0000-0000-0000-000000000000/events/?format=json")
    assert missing.status_code == 404 and "There is no run" in missing.json()["detail"]
    run = execute("canary", {})
    bad = api.get(f"/api/runs/{run.pk}/events/?format=json&last_event_id=x")
    assert bad.status_code == 400 and "last_event_id" in bad.json()["detail"]
    assert anon.get(f"/api/runs/{run.pk}/events/?format=json").status_code in (401, 403)


def test_the_json_events_are_in_the_openapi_schema(api: APIClient) -> None:
    schema = yaml.safe_load(api.get("/api/schema/").content)
    operation = next(
        op for path, ops in schema["paths"].items() if path.endswith("/events/") for op in ops.values()
    )
    content = operation["responses"]["200"]["content"]
    assert "text/event-stream" in content and "application/json" in content
    listing = schema["components"]["schemas"]["RunEventLog"]
    assert set(listing["properties"]) == {"run", "finished", "events", "total", "next"}


def test_a_field_the_engine_adds_to_its_step_event_reaches_the_stream_and_the_json(
    seeded: Environment, api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding a field to every step's trace is a change in the engine (and the console) only:
    nothing between the engine and the browser filters or copies fields one by one."""
    emit = runner._Run.emit

    def emit_with_probe(self: Any, type_: str, call_id: str, *args: Any, **kwargs: Any) -> None:
        if type_ == "step.finished":
            args = (args[0], args[1], {**args[2], "probe": f"seen {call_id}"}, *args[3:])
        emit(self, type_, call_id, *args, **kwargs)

    monkeypatch.setattr(runner._Run, "emit", emit_with_probe)
    run = execute("cat-dog-breed", {"instances": [{"animal": "dog"}]})
    live = [e["data"] for e in sse_events(api.get(f"/api/runs/{run.pk}/events/"))]
    replay = api.get(f"/api/runs/{run.pk}/events/?format=json").json()["events"]
    for events in (live, replay):
        steps = [e for e in events if e["type"] == "step.finished"]
        assert steps and all(e["data"]["probe"] == f"seen {e['data']['call_id']}" for e in steps)
    assert json.dumps(live) == json.dumps(replay)
