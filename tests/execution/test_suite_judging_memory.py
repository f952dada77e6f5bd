"""A suite case is judged from what the worker thread that ran it holds (its run's final fields and
the events its attempt stored), not from its run read back; the verdict is the one the database
gives, for every kind of expectation, and the run's events are still stored and resumable."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from execution.devtools import demo
from execution.models import Environment, Run, RunEvent
from execution.services import recall, runs, worker
from execution.suites import services as suites
from execution.suites.judging import judge
from execution.suites.models import SuiteCaseResult, SuiteEvent, SuiteRun
from execution.tasks.runs import run_graph_task
from graphs.models import Graph
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

# Cases of the demo graphs whose expectations cover every kind and every path operator, each
# case with some that pass and some that fail (so that a difference in either would show).
CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "face-recognition",
        {
            "name": "group photo, every operator",
            "request": {"payload": {"instances": [{"image": "lobby-camera-0003.jpg"}]}},
            "expectations": [
                {"status": 200},
                {"status": 201},
                {"body": {"predictions": [{"known_faces": 2}]}},
                {
                    "body": {"predictions": [{"known_faces": 3}]},
                    "match": "exact",
                    "ignore": ["predictions.0.faces"],
                },
                {"path": "predictions.0.faces.#", "step": "root/face-detector", "equals": 3},
                {"path": "predictions.0.faces.#", "step": "root/face-detector", "not_equals": 3},
                {"path": "predictions.0.known_faces", "exists": True},
                {"path": "predictions.0.nobody", "missing": True},
                {"path": "predictions.0.identities.0.name", "matches": "^Grace"},
                {"path": "predictions.0.identities.0.score", "gt": 0.9},
                {"path": "predictions.0.identities.0.score", "lt": 0.5},
                {"path": "predictions.0.known_faces", "approx": 2.1, "tolerance": 0.2},
                {"path": "predictions.0.identities.1", "contains": {"source": "visitors"}},
                {"path": "predictions.0.matches", "step": "match/db-employees", "equals": []},
                {"step": "match/db-employees", "status": 200},
                {"step": "root/result-merger", "status": 500},
                {"latency": 10000},
                {"latency": 1},
            ],
        },
    ),
    (
        "animal-switch",
        {
            "name": "a dog takes the dog route",
            "request": {"payload": {"instances": [{"animal": "dog"}]}},
            "expectations": [
                {"route": "root", "took": "dog"},
                {"route": "root", "took": "cat"},
                {"route": "root", "took": None},
                {"step": "root/cat", "status": "skipped"},
            ],
        },
    ),
    (
        "canary",
        {
            "name": "the Splitter's pick",
            "seed": 20,
            "request": {"payload": {"instances": [{"text": "lovely"}]}},
            "expectations": [
                {"route": "root", "took": "canary"},
                {"route": "root", "took": "stable"},
                {"path": "predictions.0.model_version", "equals": "v2"},
            ],
        },
    ),
    (
        "cat-dog-breed",
        {
            "name": "a cat stops after the classifier",
            "request": {"payload": {"instances": [{"animal": "cat", "image": "tom.jpg"}]}},
            "expectations": [
                {"step": "root/breed", "status": "skipped"},
                {"step": "root/breed", "status": 200},
                {"body": {"predictions": ["cat"]}, "match": "exact"},
            ],
        },
    ),
]


@pytest.fixture
def demo_user(db: Any, mock_server: Any) -> Any:
    list(demo.seed())
    return get_user_model().objects.get(username=demo.DEMO_USER)


def _run_here(graph: Graph, user: Any, document: dict[str, Any]) -> Run:
    run = runs.run_create_claimed(
        graph=graph,
        version=graph.latest_version,
        user=user,
        payload=document["request"]["payload"],
        seed=document.get("seed"),
    )
    assert worker.run_claimed(run) == "done"
    return run


@pytest.mark.parametrize(("graph_name", "document"), CASES, ids=[c[1]["name"] for c in CASES])
def test_a_verdict_from_memory_is_the_verdict_from_the_database(
    demo_user: Any, graph_name: str, document: dict[str, Any]
) -> None:
    graph = Graph.objects.select_related("latest_version").get(name=graph_name)
    run = _run_here(graph, demo_user, document)
    here = recall.ended_here(str(run.pk))
    assert here is not None and here.run.status == Run.Status.SUCCEEDED
    result = SuiteCaseResult(document=document)
    from_memory = judge(result, here.run, {here.run.version_id: here.manifest}, here.events)
    from_database = judge(result, Run.objects.select_related("version").get(pk=run.pk), {})
    assert from_memory == from_database
    failed = {f["index"] for f in from_database["failures"]}
    assert failed and len(failed) < len(document["expectations"])  # some pass, some fail
    # the events it was judged from are the run's stored ones, in order
    assert [e.seq for e in here.events] == list(
        RunEvent.objects.filter(run=run)
        .exclude(type__in=("run.queued", "run.started"))
        .values_list("seq", flat=True)
    )


def test_what_the_thread_ran_is_given_once_and_only_for_that_run(demo_user: Any) -> None:
    graph = Graph.objects.select_related("latest_version").get(name="animal-switch")
    first = _run_here(graph, demo_user, CASES[1][1])
    second = _run_here(graph, demo_user, CASES[1][1])
    assert recall.ended_here(str(second.pk)) is not None
    assert recall.ended_here(str(second.pk)) is None  # given once
    third = _run_here(graph, demo_user, CASES[1][1])
    assert recall.ended_here(str(first.pk)) is None  # the thread has run others since
    assert recall.ended_here(str(third.pk)) is None  # asked for another run: dropped


def test_a_run_whose_ending_this_thread_did_not_write_is_read_from_the_database(demo_user: Any) -> None:
    graph = Graph.objects.select_related("latest_version").get(name="animal-switch")
    run = runs.run_create_claimed(
        graph=graph, version=graph.latest_version, user=demo_user, payload={"instances": [{"animal": "dog"}]}
    )
    Run.objects.filter(pk=run.pk).update(attempt=F("attempt") + 1)  # the reaper gave it to another attempt
    worker.run_claimed(run)
    assert recall.ended_here(str(run.pk)) is None
    assert Run.objects.get(pk=run.pk).status == Run.Status.RUNNING  # this attempt wrote no ending


def test_chained_cases_keep_their_runs_events_stored_in_order_and_resumable(
    demo_user: Any, enqueued: list[dict[str, Any]]
) -> None:
    graph = Graph.objects.get(name="animal-switch")
    suite = suites.suite_start(graph=graph, version=graph.latest_version, user=demo_user, concurrency=1)
    run_graph_task.apply(args=enqueued[0]["args"])  # runs the three cases in this thread
    suite.refresh_from_db()
    assert suite.status == SuiteRun.Status.PASSED and suite.passed == 3 and len(enqueued) == 1
    api = client_for(demo_user)
    for run_id in SuiteCaseResult.objects.filter(suite=suite).values_list("run", flat=True):
        listed = api.get(f"/api/runs/{run_id}/events/?format=json").json()
        types = [e["type"] for e in listed["events"]]
        assert [e["seq"] for e in listed["events"]] == list(range(1, len(types) + 1))
        assert types[:2] == ["run.queued", "run.started"] and types[-1] == "run.finished"
        assert "route.decided" in types and listed["finished"] is True
        resumed = api.get(f"/api/runs/{run_id}/events/?format=json&last_event_id=2").json()
        assert [e["seq"] for e in resumed["events"]] == list(range(3, len(types) + 1))
    suite_types = list(SuiteEvent.objects.filter(suite=suite).order_by("seq").values_list("type", flat=True))
    assert suite_types == ["suite.started", *["case.started", "case.finished"] * 3, "suite.finished"]


def test_the_thread_that_ran_a_case_judges_it_without_reading_its_run_back(
    demo_user: Any, enqueued: list[dict[str, Any]]
) -> None:
    graph = Graph.objects.get(name="animal-switch")
    suite = suites.suite_start(graph=graph, version=graph.latest_version, user=demo_user, concurrency=1)
    first = enqueued[0]["args"][0]
    assert worker.run_execute(run_id=first) == "done"
    with CaptureQueriesContext(connection) as queries:
        assert suites.suite_run_ended(run_id=first, take=True)[1] is not None
    read = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in read if 'FROM "execution_runevent"' in sql]
    assert not [sql for sql in read if 'FROM "execution_run" ' in sql and "JOIN" not in sql]
    assert SuiteCaseResult.objects.get(suite=suite, run=first).outcome == "passed"


@pytest.mark.parametrize("quiet", [False, True])
def test_a_chained_case_stores_its_events_with_its_ending(demo_user: Any, quiet: bool) -> None:
    """A case its thread chained (``quiet``): nobody has its run open yet, so a run shorter than the
    quiet window stores its events in one write, with its ending; any other run, step by step (its
    steps take 150 ms here, far beyond the 5 ms a live run's events are gathered for, so that a
    loaded machine that delays the writer does not merge them)."""
    graph = Graph.objects.select_related("latest_version").get(name="face-recognition")
    slow = None
    if not quiet:
        local = Environment.objects.get(name="local")
        slow = Environment.objects.create(
            name="slow-steps", visibility="shared", allow_loopback=True,
            url_template=local.url_template + ("&" if "?" in local.url_template else "?") + "latency_ms=150",
        )  # fmt: skip
    run = runs.run_create_claimed(
        graph=graph, version=graph.latest_version, user=demo_user, payload=CASES[0][1]["request"]["payload"],
        environment=slow,
    )  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        assert worker.run_claimed(run, quiet=quiet) == "done"
    inserts = [q for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "execution_runevent"')]
    assert (len(inserts) == 1) is quiet
    run.refresh_from_db()
    if not quiet:  # the slow steps were slow: three of them in a row on the critical path
        assert run.finished_at is not None and run.started_at is not None
        assert (run.finished_at - run.started_at).total_seconds() >= 0.45
    stored = list(RunEvent.objects.filter(run=run).order_by("seq").values_list("seq", "type"))
    assert [seq for seq, _ in stored] == list(range(1, len(stored) + 1))
    assert stored[-1][1] == "run.finished"
    finished = [t for _, t in stored].count("step.finished")  # 4 steps of the root, 2 of the Ensemble
    assert finished == 6 == run.steps.count() and not run.steps.filter(finished_at__isnull=True).exists()
