"""The step rows a worker stores for an attempt: which of them are still in flight, so that a run's
ending closes them (and skips that update when none is)."""

from __future__ import annotations

from typing import Any

import pytest

from execution.devtools import demo
from execution.engine import TraceEvent
from execution.models import Run, RunStep
from execution.services import endings, runs
from execution.services.steps import StepRecorder
from graphs.models import Graph

pytestmark = pytest.mark.django_db


def event(type_: str, seq: int, call_id: str, **data: Any) -> TraceEvent:
    return TraceEvent(type_, seq, call_id, "root", "root", 0, "classify", "http://x", 1.0 + seq, data)


@pytest.fixture
def run(db: Any) -> Run:
    list(demo.seed())
    graph = Graph.objects.get(name="animal-switch")
    created, _ = runs.run_create(graph=graph, version=graph.latest_version, user=graph.owner, payload={})
    return created


def test_a_step_stored_started_is_pending_until_its_finish_is_stored(run: Run) -> None:
    steps = StepRecorder(run, 1)
    steps.store([event("step.started", 1, "root/0", kind="http")])
    assert steps.pending == {"root/0"}
    before = steps.saved()
    steps.store([event("step.finished", 2, "root/0", status=200, outcome="ok")])
    assert steps.pending == set()
    steps.restore(before)  # a write tried again starts from the state before it
    assert steps.pending == {"root/0"}


def test_a_step_started_and_finished_in_one_batch_is_not_pending(run: Run) -> None:
    steps = StepRecorder(run, 1)
    steps.store(
        [event("step.started", 1, "root/0", kind="http"), event("step.finished", 2, "root/0", outcome="ok")]
    )
    assert steps.pending == set()
    assert RunStep.objects.get(run=run, call_id="root/0").outcome == "ok"


def test_what_is_pending_is_what_the_ending_closes(run: Run) -> None:
    steps = StepRecorder(run, 1)
    steps.store([event("step.started", 1, "root/0", kind="http"), event("step.started", 2, "root/1")])
    steps.store([event("step.finished", 3, "root/1", outcome="ok")])
    assert steps.pending == {"root/0"}
    assert set(RunStep.objects.filter(run=run, outcome="pending").values_list("call_id", flat=True)) == {
        "root/0"
    }
    endings.close_pending_steps(run, 1, Run.Status.FAILED, "stopped")
    assert RunStep.objects.get(run=run, call_id="root/0").outcome == "error"
