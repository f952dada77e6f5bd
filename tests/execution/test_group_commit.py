"""The writes of a worker's runs are committed together (execution/services/writes.py): whoever
gets the turn writes everything queued by then in one transaction, each write in a savepoint of
its own, and every caller gets its own result or error once the commit is done."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from execution import events
from execution.models import Run, RunEvent
from execution.services import writes
from graphs import services as graph_services

pytestmark = pytest.mark.django_db(transaction=True)  # the writers' own connections must see rows


@pytest.fixture
def run_ids(user: Any) -> list[str]:
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    graph = graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "grouped"},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "echo"}]}}},
        },
    )
    return [
        str(
            Run.objects.create(
                graph=graph,
                version=graph.latest_version,
                environment=environment,
                request_body="{}",
                seed=1,
                created_by=user,
            ).pk
        )
        for _ in range(4)
    ]


def _writers(group: writes.GroupCommit, works: list[Any]) -> tuple[list[threading.Thread], dict[int, Any]]:
    answers: dict[int, Any] = {}

    def call(i: int) -> None:
        try:
            answers[i] = ("ok", group.write(works[i]))
        except Exception as exc:
            answers[i] = ("error", exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(works))]
    return threads, answers


def test_writes_queued_meanwhile_are_committed_by_one_thread_in_one_transaction(run_ids: list[str]) -> None:
    group = writes.GroupCommit()
    done_by: list[tuple[int, bool]] = []

    def work(run_id: str) -> Any:
        def write() -> int:
            done_by.append((threading.get_ident(), transaction.get_connection().in_atomic_block))
            return events.emit(run_id, "run.warning", {"message": "grouped"}).seq

        return write

    threads, answers = _writers(group, [work(run_id) for run_id in run_ids])
    with group._turn:  # a commit in progress: the four writes queue up behind it
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(group._queued) < len(run_ids) and time.monotonic() < deadline:
            time.sleep(0.01)
    for thread in threads:
        thread.join(10)
    assert all(answers[i] == ("ok", 1) for i in range(len(run_ids))), answers
    assert len({ident for ident, _ in done_by}) == 1  # one leader wrote them all
    assert all(in_transaction for _, in_transaction in done_by)
    assert RunEvent.objects.filter(run_id__in=run_ids, type="run.warning").count() == len(run_ids)


def test_a_failing_write_is_rolled_back_alone_and_raised_in_its_own_thread(run_ids: list[str]) -> None:
    group = writes.GroupCommit()

    def good(run_id: str) -> Any:
        return lambda: events.emit(run_id, "run.warning", {"message": "kept"}).seq

    def bad() -> None:
        events.emit(run_ids[0], "run.warning", {"message": "rolled back"})
        raise ValueError("this write fails after its insert")

    threads, answers = _writers(group, [good(run_ids[1]), bad, good(run_ids[2])])
    with group._turn:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(group._queued) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    for thread in threads:
        thread.join(10)
    assert answers[0] == ("ok", 1) and answers[2] == ("ok", 1)
    assert answers[1][0] == "error" and isinstance(answers[1][1], ValueError)
    assert not RunEvent.objects.filter(run_id=run_ids[0]).exists()
    assert Run.objects.get(pk=run_ids[0]).event_seq == 0  # its counter update went with it


def test_events_are_published_only_after_their_commit(run_ids: list[str], monkeypatch: Any) -> None:
    published: list[tuple[int, bool]] = []

    def publish(created: Any) -> None:
        stored = RunEvent.objects.filter(run_id=run_ids[0], seq=created[0].seq).exists()
        published.append((created[0].seq, stored))

    monkeypatch.setattr(events, "_publish_all", publish)
    threads, _ = _writers(writes.GroupCommit(), [lambda: events.emit(run_ids[0], "run.warning", {})])
    threads[0].start()
    threads[0].join(10)
    assert published == [(1, True)]
