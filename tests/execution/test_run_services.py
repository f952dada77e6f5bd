"""Running a run in-process (the task's service, against the real mock model server), the SSE
replay of stored events, and the reaper. The Celery worker itself is exercised in tests/integration."""

from __future__ import annotations

import json
import os
import socket
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from execution.devtools import demo, demomodels
from execution.models import Environment, Run, RunEvent, RunStep
from execution.services import reaper, runs, worker
from graphs.models import Graph

pytestmark = pytest.mark.django_db


def sse_events(response: Any) -> list[dict[str, Any]]:
    text = b"".join(response.streaming_content).decode()
    out = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1)
            for line in block.split("\n")
            if line and not line.startswith(":") and ": " in line
        )
        if "data" in fields:
            out.append(
                {"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])}
            )
    return out


@pytest.fixture
def seeded(db: Any, mock_server: Any) -> Any:
    list(demo.seed())
    return Environment.objects.get(name="local")


def execute(
    name: str, payload: Any, *, environment: Environment | None = None, seed: int | None = None
) -> Run:
    graph = Graph.objects.get(name=name)
    run, _ = runs.run_create(
        graph=graph,
        version=graph.latest_version,
        user=graph.owner,
        payload=payload,
        environment=environment,
        seed=seed,
    )
    assert worker.run_execute(run_id=str(run.pk)) == "done"
    return Run.objects.get(pk=run.pk)


def test_a_run_records_its_response_steps_and_events(seeded: Environment) -> None:
    request = demo.demo_request("face-recognition")
    run = execute("face-recognition", request)
    features = demomodels.feature_extractor(demomodels.face_detector(request))
    expected = demomodels.result_merger(
        {
            "db-employees": demomodels.MODELS["face-db-employees"](features),
            "db-visitors": demomodels.MODELS["face-db-visitors"](features),
        }
    )
    assert run.status == "succeeded" and run.response_status == 200 and run.attempt == 1
    assert json.loads(run.response_body) == expected
    assert run.started_at and run.finished_at and run.duration_ms > 0 and run.heartbeat_at is None
    steps = list(run.steps.order_by("order").values_list("call_id", "outcome", "status_code"))
    assert steps == [
        ("root/0", "ok", 200),
        ("root/1", "ok", 200),
        ("root/2", "ok", 200),
        ("match#1/0", "ok", 200),
        ("match#1/1", "ok", 200),
        ("root/3", "ok", 200),
    ]
    types = list(RunEvent.objects.filter(run=run).values_list("type", flat=True))
    assert types[:2] == ["run.queued", "run.started"] and types[-1] == "run.finished"
    assert types.count("step.started") == types.count("step.finished") == 6
    assert list(RunEvent.objects.filter(run=run).values_list("seq", flat=True)) == list(
        range(1, len(types) + 1)
    )
    final = RunEvent.objects.get(run=run, type="run.finished").data
    assert final["status"] == "succeeded" and final["status_code"] == 200
    # The console names the worker by its host and process, so that a person can find it.
    started = RunEvent.objects.get(run=run, type="run.started").data
    assert started["worker"] == f"{socket.gethostname()} (pid {os.getpid()})"


def test_receiving_the_task_twice_is_harmless(seeded: Environment) -> None:
    run = execute("cat-dog-breed", {"instances": [{"animal": "cat"}]})
    before = (RunEvent.objects.filter(run=run).count(), RunStep.objects.filter(run=run).count())
    assert worker.run_execute(run_id=str(run.pk)) == "not-claimed"
    assert (RunEvent.objects.filter(run=run).count(), RunStep.objects.filter(run=run).count()) == before
    assert Run.objects.get(pk=run.pk).attempt == 1


def test_an_unmet_condition_is_a_skipped_step_with_its_condition(seeded: Environment) -> None:
    run = execute("cat-dog-breed", {"instances": [{"animal": "cat"}]})
    assert run.status == "succeeded" and json.loads(run.response_body) == {"predictions": ["cat"]}
    skipped = run.steps.get(call_id="root/1")
    assert skipped.outcome == "skipped" and skipped.condition["matches"] is False
    assert skipped.route["decision"] == "stop"


def test_switch_and_splitter_decisions_are_on_the_chosen_step(seeded: Environment) -> None:
    run = execute("animal-switch", {"instances": [{"animal": "dog"}]})
    chosen = run.steps.get()
    assert chosen.call_id == "root/1" and chosen.route["router"] == "Switch" and chosen.route["chosen"] == 1
    canary = execute("canary", {"instances": [{"text": "hi"}]}, seed=1)
    step = canary.steps.get()
    assert step.route["router"] == "Splitter" and step.route["weights"] == [90, 10]
    import random

    draw = random.Random(1).randrange(100)
    assert step.route["draw"] == draw and step.step_name == ("stable" if draw < 90 else "canary")


def test_a_non_2xx_answer_fails_the_run_with_the_status(seeded: Environment, user: Any) -> None:
    from graphs import services as graph_services

    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "nope"},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "always-404"}]}}},
        },
    )
    run = execute("nope", {})
    assert run.status == "failed" and run.response_status == 404
    assert json.loads(run.response_body) == {"detail": "Intentional 404 code"}
    final = RunEvent.objects.filter(run=run).last().data  # the terminal event carries the answer too
    assert final["status"] == "failed" and final["status_code"] == 404 and final["outcome"] == "http-error"
    assert final["response"]["body"] == {"detail": "Intentional 404 code"}


def test_the_guard_refuses_loopback_unless_the_environment_allows_it(seeded: Environment, user: Any) -> None:
    strict = Environment.objects.create(name="strict", url_template=seeded.url_template, visibility="shared")
    run = execute("cat-dog-breed", {"instances": [{"animal": "dog"}]}, environment=strict)
    step = run.steps.get(call_id="root/0")
    assert run.status == "failed" and run.response_status == 500
    assert step.outcome == "error" and "blocked by URL guard" in step.error and "loopback" in step.error


def test_the_event_stream_replays_a_finished_run_and_resumes(seeded: Environment, api: APIClient) -> None:
    run = execute("cat-dog-breed", {"instances": [{"animal": "dog"}]})
    stored = list(RunEvent.objects.filter(run=run).values_list("seq", "type"))
    response = api.get(f"/api/runs/{run.pk}/events/", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    got = sse_events(response)
    assert [(e["id"], e["event"]) for e in got] == stored
    assert got[0]["data"]["type"] == "run.queued" and got[-1]["data"]["data"]["status"] == "succeeded"
    resumed = sse_events(api.get(f"/api/runs/{run.pk}/events/", HTTP_LAST_EVENT_ID="3"))
    assert [e["id"] for e in resumed] == [seq for seq, _ in stored[3:]]
    by_query = sse_events(api.get(f"/api/runs/{run.pk}/events/?last_event_id={len(stored) - 1}"))
    assert [e["event"] for e in by_query] == ["run.finished"]


def test_the_event_stream_polls_the_database_without_redis(
    seeded: Environment, api: APIClient, settings: Any
) -> None:
    run = execute("cat-dog-breed", {"instances": [{"animal": "dog"}]})
    settings.RUN_EVENTS_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    got = sse_events(api.get(f"/api/runs/{run.pk}/events/"))
    assert [e["id"] for e in got] == list(range(1, run.event_seq + 1))


def test_the_event_stream_checks_its_input(api: APIClient, anon: APIClient, seeded: Environment) -> None:
    assert (
        api.get(
            "/api/runs/00000000-0000-0000-0000-000000000000/events/", HTTP_ACCEPT="text/event-stream"
        ).status_code
        == 404
    )
    run = execute("canary", {})
    assert api.get(f"/api/runs/{run.pk}/events/", HTTP_LAST_EVENT_ID="x").status_code == 400
    assert anon.get(f"/api/runs/{run.pk}/events/", HTTP_ACCEPT="text/event-stream").status_code in (401, 403)


# --- the reaper -----------------------------------------------------------------------------------


def queued_run(graph_name: str = "canary") -> Run:
    graph = Graph.objects.get(name=graph_name)
    run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=graph.owner, payload={})
    return run


def claim(run: Run, *, attempt: int = 1, silent_for: float = 60.0, cancel: bool = False) -> None:
    """What a worker's claim leaves behind, with its last heartbeat ``silent_for`` seconds ago."""
    beat = timezone.now() - timedelta(seconds=silent_for)
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING,
        attempt=attempt,
        started_at=beat,
        heartbeat_at=beat,
        cancel_requested=cancel,
    )
    RunStep.objects.create(run=run, attempt=attempt, call_id="root/0", outcome=RunStep.Outcome.PENDING)


def announce_stop(run: Run, attempt: int = 1) -> None:
    """What a worker asked to stop (SIGTERM) records for a run it is executing."""
    worker._IN_FLIGHT[str(run.pk)] = attempt
    try:
        assert worker.worker_stopping(reason="SIGTERM (warm shutdown)") == [str(run.pk)]
    finally:
        worker._IN_FLIGHT.pop(str(run.pk), None)
        worker._STOP_REASON = None  # this process goes on running the other tests' runs


def test_the_reaper_fails_a_run_whose_worker_died_unannounced_and_does_not_retry_it(
    seeded: Environment, enqueued: list, django_capture_on_commit_callbacks: Any
) -> None:
    """A worker that vanished without being asked to stop may have been crashed by the run itself
    (a poison run): running it again would crash the next worker, so it ends failed."""
    run = queued_run()
    claim(run)
    with django_capture_on_commit_callbacks(execute=True):
        report = reaper.reap_runs()
    assert report.failed == [str(run.pk)] and not report.requeued
    run.refresh_from_db()
    assert run.status == "failed" and run.attempt == 1 and run.finished_at
    assert "The worker running this run died" in run.error and "not retried" in run.error
    assert run.steps.get().outcome == "error" and "not retried" in run.steps.get().error
    assert RunEvent.objects.filter(run=run).last().data["status"] == "failed"
    assert enqueued == []  # nothing re-sent
    assert worker.run_execute(run_id=str(run.pk)) == "not-claimed"  # a redelivered message is harmless


def test_the_reaper_requeues_a_run_whose_worker_was_asked_to_stop(
    seeded: Environment, enqueued: list, django_capture_on_commit_callbacks: Any
) -> None:
    run = queued_run()
    claim(run)
    announce_stop(run)
    with django_capture_on_commit_callbacks(execute=True):
        report = reaper.reap_runs()
    assert report.requeued == [str(run.pk)]
    run.refresh_from_db()
    assert run.status == "queued" and run.attempt == 1
    assert run.steps.get().outcome == "error" and "stopped responding" in run.steps.get().error
    assert RunEvent.objects.filter(run=run).last().type == "run.requeued"
    assert enqueued[-1]["args"] == [str(run.pk)]
    # The next claim is attempt 2, with its own steps.
    assert worker.run_execute(run_id=str(run.pk)) == "done"
    run.refresh_from_db()
    assert run.status == "succeeded" and run.attempt == 2
    assert sorted(run.steps.values_list("attempt", flat=True)) == [1, 2]


def test_a_stop_announced_for_an_earlier_attempt_does_not_excuse_a_later_crash(seeded: Environment) -> None:
    run = queued_run()
    claim(run, attempt=1)
    announce_stop(run, attempt=1)
    claim(run, attempt=2)
    assert reaper.reap_runs().failed == [str(run.pk)]
    assert "not retried" in Run.objects.get(pk=run.pk).error


def test_the_reaper_fails_a_run_after_its_last_attempt(seeded: Environment, settings: Any) -> None:
    run = queued_run()
    claim(run, attempt=settings.RUN_MAX_ATTEMPTS)
    announce_stop(run, attempt=settings.RUN_MAX_ATTEMPTS)
    assert reaper.reap_runs().failed == [str(run.pk)]
    run.refresh_from_db()
    assert run.status == "failed" and "stopped responding" in run.error and run.finished_at
    assert "giving up" in run.error
    assert RunEvent.objects.filter(run=run).last().data["status"] == "failed"


def test_a_worker_asked_to_stop_records_only_the_runs_it_is_executing(
    seeded: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "_STOP_REASON", None)  # this test's stop only
    assert worker.worker_stopping(reason="SIGTERM") == []
    run = queued_run()
    announce_stop(run)
    event = RunEvent.objects.filter(run=run, type="run.worker_stopping").get()
    assert event.data == {"attempt": 1, "reason": "SIGTERM (warm shutdown)"}


def test_a_run_a_stopping_worker_claims_after_its_announcement_is_announced_too(
    seeded: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between SIGTERM and the process's end, a worker thread may still claim a run (a message it
    had received, or a claim committed but not yet counted in flight when the announcement read
    the runs): that run is this stopping worker's too, and the SIGKILL that follows must not make
    the reaper take it for a poison run."""
    monkeypatch.setattr(worker, "_STOP_REASON", None)  # this test's stop only
    assert worker.worker_stopping(reason="SIGTERM (warm shutdown)") == []
    run = queued_run()
    assert worker.run_execute(run_id=str(run.pk)) == "done"
    event = RunEvent.objects.filter(run=run, type="run.worker_stopping").get()
    assert event.data == {"attempt": 1, "reason": "SIGTERM (warm shutdown)"}
    assert RunEvent.objects.filter(run=run, seq__lt=event.seq, type="run.started").exists()


def test_the_reaper_cancels_a_dead_run_that_was_being_cancelled(seeded: Environment) -> None:
    run = queued_run()
    claim(run, cancel=True)
    assert reaper.reap_runs().cancelled == [str(run.pk)]
    run.refresh_from_db()
    assert run.status == "cancelled" and run.steps.get().outcome == "cancelled"


def test_the_reaper_leaves_live_runs_alone(seeded: Environment) -> None:
    run = queued_run()
    claim(run, silent_for=0.5)
    assert reaper.reap_runs().as_dict() == {"requeued": [], "failed": [], "cancelled": [], "resent": []}
    assert Run.objects.get(pk=run.pk).status == "running"


def test_the_reaper_resends_a_lost_queued_run_once_then_fails_it(seeded: Environment, settings: Any) -> None:
    run = queued_run()
    later = timezone.now() + timedelta(seconds=settings.RUN_QUEUED_TIMEOUT + 1)
    assert reaper.reap_runs(now=later).resent == [str(run.pk)]
    assert Run.objects.get(pk=run.pk).status == "queued"
    even_later = later + timedelta(seconds=settings.RUN_QUEUED_TIMEOUT + 1)
    assert reaper.reap_runs(now=even_later).failed == [str(run.pk)]
    assert "worker" in Run.objects.get(pk=run.pk).error
