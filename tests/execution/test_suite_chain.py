"""How a suite run passes its slots from case to case: the worker thread whose run ended starts
the next case and runs it itself, without sending it to the broker (execution/suites/chain.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from execution.devtools import demo
from execution.models import Run
from execution.services import worker
from execution.suites import chain
from execution.suites import services as suites
from execution.suites.models import SuiteCaseResult, SuiteRun
from execution.tasks.runs import run_graph_task
from graphs.models import Graph

pytestmark = pytest.mark.django_db(transaction=True)

GRAPH = "animal-switch"  # three demo cases: cat, dog, neither


@pytest.fixture
def start(db: Any, mock_server: Any) -> Any:
    list(demo.seed())
    user = get_user_model().objects.get(username=demo.DEMO_USER)
    graph = Graph.objects.get(name=GRAPH)

    def start(concurrency: int) -> SuiteRun:
        return suites.suite_start(
            graph=graph, version=graph.versions.get(number=1), user=user, concurrency=concurrency
        )

    return start


def runs_of(suite: SuiteRun) -> list[str]:
    return [
        str(pk)
        for pk in SuiteCaseResult.objects.filter(suite=suite, run__isnull=False).values_list("run", flat=True)
    ]


def test_two_cases_ending_together_start_the_next_case_exactly_once(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    suite = start(concurrency=2)  # three cases: two start, one waits
    first, second = runs_of(suite)
    assert len(enqueued) == 2
    for run_id in (first, second):  # both end before either moves the suite run along
        assert worker.run_execute(run_id=run_id) == "done"
    kept: dict[str, Run | None] = {}

    def ended(run_id: str) -> None:
        try:
            kept[run_id] = suites.suite_run_ended(run_id=run_id, take=True)[1]
        finally:
            connection.close()

    threads = [threading.Thread(target=ended, args=(run_id,)) for run_id in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    taken = [run for run in kept.values() if run is not None]
    assert len(kept) == 2 and len(taken) == 1  # one of them runs the third case; the other, nothing
    assert Run.objects.count() == 3 and len(set(runs_of(suite))) == 3
    assert len(enqueued) == 2  # the third case's run was kept, not sent
    third = Run.objects.get(pk=taken[0].pk)  # claimed for the thread in the verdict's transaction
    assert (third.status, third.attempt, taken[0].attempt) == (Run.Status.RUNNING, 1, 1)
    assert list(third.events.values_list("type", flat=True)) == ["run.queued", "run.started"]
    assert worker.run_execute(run_id=str(third.pk)) == "not-claimed"  # a stray message finds it taken
    assert worker.run_claimed(taken[0]) == "done"
    assert suites.suite_run_ended(run_id=third.pk, take=True) == (True, None)  # nothing left
    suite.refresh_from_db()
    assert suite.status == SuiteRun.Status.PASSED and suite.passed == 3


def test_a_finished_run_of_a_cancelled_suite_starts_nothing(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    suite = start(concurrency=1)
    (first,) = runs_of(suite)
    assert worker.run_execute(run_id=first) == "done"  # ended, not yet moved along
    suites.suite_cancel(suite=suite, user=suite.created_by)
    assert suites.suite_run_ended(run_id=first, take=True) == (True, None)
    assert Run.objects.count() == 1 and len(enqueued) == 1
    suite.refresh_from_db()
    assert suite.status == SuiteRun.Status.CANCELLED and (suite.passed, suite.cancelled) == (1, 2)


def test_the_thread_that_ran_a_case_runs_the_next_ones_itself(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    suite = start(concurrency=1)
    run_graph_task.apply(args=enqueued[0]["args"])  # then runs the other two cases itself
    assert len(enqueued) == 1 and Run.objects.filter(status__in=Run.TERMINAL).count() == 3
    suite.refresh_from_db()
    assert suite.status == SuiteRun.Status.PASSED and suite.passed == 3


def test_a_stopping_worker_sends_the_next_case_to_the_broker(
    start: Any, enqueued: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chain, "STOPPING", threading.Event())
    chain.stop_chaining()
    suite = start(concurrency=1)
    run_graph_task.apply(args=enqueued[0]["args"])
    assert len(enqueued) == 2  # the second case was sent, not run here
    second = enqueued[1]["args"][0]
    assert Run.objects.get(pk=second).status == Run.Status.QUEUED
    assert SuiteCaseResult.objects.filter(suite=suite, outcome="running").count() == 1


def test_a_thread_past_its_chaining_time_sends_the_next_case_to_the_broker(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    suite = start(concurrency=1)
    (first,) = runs_of(suite)
    assert worker.run_execute(run_id=first) == "done"
    assert chain.case_run_ended(first, seconds=0) == 0  # ran nothing here
    assert len(enqueued) == 2 and Run.objects.get(pk=enqueued[1]["args"][0]).status == Run.Status.QUEUED


def add_a_fourth_case() -> None:
    """A copy of the graph's first case: four cases, two rounds at concurrency 2."""
    extra = Graph.objects.get(name=GRAPH).test_cases.order_by("pk").first()
    assert extra is not None
    extra.pk, extra.name = None, "cat again"
    extra.save()


def test_a_chaining_thread_leaves_an_ended_cases_slot_to_the_thread_judging_it(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    add_a_fourth_case()
    suite = start(concurrency=2)
    first, second = runs_of(suite)
    for run_id in (first, second):  # both end before either moves the suite run along
        assert worker.run_execute(run_id=run_id) == "done"
    _, third = suites.suite_run_ended(run_id=first, take=True)
    # The second case's slot is its own thread's to pass on: nothing was sent to the broker.
    assert third is not None and len(enqueued) == 2 and Run.objects.count() == 3
    _, fourth = suites.suite_run_ended(run_id=second, take=True)
    assert fourth is not None and len(enqueued) == 2 and Run.objects.count() == 4
    for run in (third, fourth):
        assert worker.run_claimed(run) == "done"
        assert suites.suite_run_ended(run_id=run.pk, take=True) == (True, None)
    suite.refresh_from_db()
    assert suite.status == SuiteRun.Status.PASSED and suite.passed == 4


def test_a_caller_that_does_not_chain_fills_an_ended_cases_slot_at_once(
    start: Any, enqueued: list[dict[str, Any]]
) -> None:
    add_a_fourth_case()
    suite = start(concurrency=2)
    first, second = runs_of(suite)
    for run_id in (first, second):
        assert worker.run_execute(run_id=run_id) == "done"
    assert suites.suite_run_ended(run_id=first) == (True, None)
    assert len(enqueued) == 4  # both slots refilled through the broker


def test_a_failure_after_the_run_leaves_the_run_and_its_suite_for_the_reaper(
    start: Any, enqueued: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run task calls the case's ending itself; when that fails, the run's outcome stands and
    the reaper's pass moves the suite run along."""

    def broken(run_id: str, **_: Any) -> int:
        raise RuntimeError("the database went away")

    suite = start(concurrency=1)
    with monkeypatch.context() as patched:
        patched.setattr(chain, "case_run_ended", broken)
        assert run_graph_task.apply(args=enqueued[0]["args"]).get() == "done"
    assert Run.objects.get(pk=enqueued[0]["args"][0]).status == Run.Status.SUCCEEDED
    assert SuiteCaseResult.objects.filter(suite=suite, outcome="running").count() == 1
    assert suites.suite_reap() == [str(suite.pk)]
    assert SuiteCaseResult.objects.filter(suite=suite, outcome="passed").count() == 1
