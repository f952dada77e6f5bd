"""One user cannot starve the others: a user may have ``RUN_MAX_IN_FLIGHT_PER_USER`` runs and
``SUITE_MAX_IN_FLIGHT_PER_USER`` suite runs queued or running at once; past that a start answers
429 with Retry-After, naming the setting, and stores nothing. The check holds under concurrent
requests (no two take the last slot)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from execution.models import GraphCase, Run
from execution.services import fairshare
from execution.suites.models import SuiteCaseResult, SuiteRun
from tests.conftest import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_run_settings", "enqueued", "local_env")]


def _start(client: APIClient) -> Any:
    return client.post("/api/graphs/model-chainer/runs/", {"payload": {"instances": [[1]]}}, format="json")


def _assert_refused(response: Any, setting: str, cap: int, code: str) -> None:
    assert response.status_code == 429, response.json()
    assert int(response["Retry-After"]) > 0
    body = response.json()
    assert setting in body["detail"] and f"at most {cap}" in body["detail"]
    assert body["issues"] == [{"code": code, "severity": "error", "message": f"{setting} is {cap}"}]
    assert (body["limit"], body["setting"]) == (cap, setting)


def test_a_user_past_the_run_cap_is_refused_while_others_still_start(
    api: APIClient, bob_api: APIClient, graph: Any, settings: Any
) -> None:
    settings.RUN_MAX_IN_FLIGHT_PER_USER = 3
    ids = [_start(api).json()["id"] for _ in range(3)]
    refused = _start(api)
    _assert_refused(refused, "RUN_MAX_IN_FLIGHT_PER_USER", 3, "run.too-many-in-flight")
    assert refused.json()["in_flight"] == 3
    assert Run.objects.count() == 3  # nothing stored for the refused one
    rerun = api.post(f"/api/runs/{ids[0]}/rerun/")  # a rerun is a run like any other
    assert rerun.status_code == 429 and Run.objects.count() == 3
    assert _start(bob_api).status_code == 202  # another user is not held back
    # one finishes (or is cancelled): a slot is free again
    Run.objects.filter(pk=ids[0]).update(status=Run.Status.SUCCEEDED)
    assert api.post(f"/api/runs/{ids[1]}/cancel/").status_code == 202
    assert _start(api).status_code == 202 and _start(api).status_code == 202
    assert _start(api).status_code == 429


def test_a_suite_runs_cases_do_not_count_towards_the_run_cap(
    api: APIClient, user: Any, graph: Any, settings: Any
) -> None:
    settings.RUN_MAX_IN_FLIGHT_PER_USER = 1
    case_run = _start(api).json()["id"]
    suite = SuiteRun.objects.create(
        graph=graph, version=graph.latest_version, status="running", concurrency=1, seed=1,
        cases_digest="x", created_by=user, total=1,
    )  # fmt: skip
    SuiteCaseResult.objects.create(
        suite=suite, position=0, case_ref=1, name="c", document={}, outcome="running", run_id=case_run
    )
    assert _start(api).status_code == 202
    assert _start(api).status_code == 429


def test_zero_means_no_limit(api: APIClient, graph: Any, settings: Any) -> None:
    settings.RUN_MAX_IN_FLIGHT_PER_USER = 0
    assert all(_start(api).status_code == 202 for _ in range(10))


def _suite(client: APIClient) -> Any:
    return client.post("/api/graphs/model-chainer/suite-runs/", {"version": 1}, format="json")


def test_a_user_past_the_suite_run_cap_is_refused_and_a_comparison_starts_both_or_neither(
    api: APIClient, bob_api: APIClient, user: Any, graph: Any, settings: Any
) -> None:
    settings.SUITE_MAX_IN_FLIGHT_PER_USER = 2
    GraphCase.objects.create(
        graph=graph,
        name="one",
        created_by=user,
        document={"name": "one", "request": {"payload": {"instances": [[1]]}}},
    )
    first = _suite(api)
    assert first.status_code == 202 and first.json()["status"] == "running", str(first.json())[-900:]
    # a comparison needs two more: refused whole, nothing started
    compare = api.post("/api/graphs/model-chainer/suite-runs/compare/", {"a": 1, "b": 1}, format="json")
    _assert_refused(compare, "SUITE_MAX_IN_FLIGHT_PER_USER", 2, "suite.too-many-in-flight")
    assert SuiteRun.objects.count() == 1
    assert _suite(api).status_code == 202
    _assert_refused(_suite(api), "SUITE_MAX_IN_FLIGHT_PER_USER", 2, "suite.too-many-in-flight")
    assert SuiteRun.objects.count() == 2
    assert _suite(bob_api).status_code == 202
    assert api.post(f"/api/suite-runs/{first.json()['id']}/cancel/").status_code == 202
    assert _suite(api).status_code == 202


@pytest.mark.django_db(transaction=True)
def test_concurrent_starts_never_take_more_slots_than_the_cap(
    user: Any, graph: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight requests at once for three slots: three runs, five 429s. The count is slowed down so
    that every request has counted before any inserts, unless the check and the insert are one
    step (a check-then-act would let all eight through)."""
    settings.RUN_MAX_IN_FLIGHT_PER_USER = 3
    real = fairshare.runs_in_flight

    class SlowCount:
        def __init__(self, user: Any) -> None:
            self.qs = real(user)

        def count(self) -> int:
            n = self.qs.count()
            time.sleep(0.3)
            return n

    monkeypatch.setattr(fairshare, "runs_in_flight", SlowCount)
    codes: list[int] = []
    lock = threading.Lock()
    gate = threading.Barrier(8)

    def post() -> None:
        try:
            client = client_for(user)
            gate.wait()
            code = _start(client).status_code
            with lock:
                codes.append(code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(codes) == [202] * 3 + [429] * 5
    assert Run.objects.filter(created_by=user).count() == 3
