"""A test case's headers in a real suite run (API -> Redis -> Celery worker -> engine -> a step
server that records what it got): a header its environment marks secret is stored redacted and
never sent as ``***``; the harmless ones are sent; an ordinary run in the same environment keeps
the same header redacted in the database and hands its real value to the worker."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from runhelpers import wait_for_run
from stepserver import Reply, StepServer

from execution.models import Environment, GraphCase, Run
from execution.suites.models import SuiteRun
from tests.conftest import client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

MANIFEST = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "vaulted"},
    "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceName": "a"}]}}},
}
HEADERS = {"X-Request-Id": "tenant-42", "X-Correlation-Id": "c-1"}


def test_an_environments_secret_header_is_applied_to_a_cases_run(worker: Any, run_settings: None) -> None:
    user = get_user_model().objects.create_user("vault-owner")
    api = client_for(user)
    with StepServer() as server:
        server.route("/a", Reply(json={"says": "meow"}))
        Environment.objects.create(
            name="vault",
            owner=user,
            url_template=server.url("/") + "{name}",
            allow_loopback=True,
            propagate_headers=["X-Request-Id", "X-Correlation-Id"],
            secret_headers=["x-request-id"],
        )
        assert api.post("/api/graphs/", {"manifest": MANIFEST}, format="json").status_code == 201
        case = {
            "name": "c",
            "environment": "vault",
            "request": {"payload": {"x": 1}, "headers": HEADERS},
            "expectations": [{"status": 200}],
        }
        created = api.post("/api/graphs/vaulted/tests/", case, format="json")
        assert created.status_code == 201, created.json()
        assert GraphCase.objects.get().document["request"]["headers"] == {
            "X-Request-Id": "***",
            "X-Correlation-Id": "c-1",
        }

        started = api.post("/api/graphs/vaulted/suite-runs/", {"version": 1}, format="json")
        assert started.status_code == 202, started.json()
        deadline = time.monotonic() + 30
        while (body := api.get(f"/api/suite-runs/{started.json()['id']}/").json())["status"] in (
            "queued",
            "running",
        ):
            assert time.monotonic() < deadline, body
            time.sleep(0.05)
        assert body["status"] == "passed", body["results"]
        (got,) = server.received("/a")
        assert got.header("X-Correlation-Id") == ["c-1"]
        assert got.header("X-Request-Id") == []  # redacted in the case: left out, never "***"
        case_run = Run.objects.get(pk=body["results"][0]["run"])
        assert "tenant-42" not in str(case_run.request_headers)

        # An ordinary run in the same environment: stored redacted, the real value to the worker.
        response = api.post(
            "/api/graphs/vaulted/runs/",
            {"payload": {"x": 1}, "headers": HEADERS, "environment": "vault"},
            format="json",
        )
        assert response.status_code == 202, response.json()
        run = wait_for_run(response.json()["id"])
        assert run.request_headers["X-Request-Id"] == "***"
        assert server.received("/a")[-1].header("X-Request-Id") == ["tenant-42"]


PATHOLOGICAL = "([ab]{1,100})" * 269 + "!"


def test_a_suite_run_on_the_workers_refuses_what_costs_too_much(
    worker: Any, demo_graphs: list, settings: Any
) -> None:
    """A case saved under looser bounds with the pathological regex is an error at once (naming
    the program bound), and a case over its CPU budget is an error naming that bound: neither
    holds a worker thread."""
    from execution.devtools import demo

    api = client_for(get_user_model().objects.get(username=demo.DEMO_USER))
    graph = "animal-switch"
    costly = {
        "name": "costly regex",
        "request": {"payload": {"instances": [{"animal": "cat", "image": "ab" * 8192}]}},
        "expectations": [{"status": 200}, {"path": "predictions.0", "matches": PATHOLOGICAL}],
    }
    settings.GRAPH_TEST_REGEX_MAX_PROGRAM = 100_000  # as a case saved before the bound was lowered
    created = api.post(f"/api/graphs/{graph}/tests/", costly, format="json")
    assert created.status_code == 201, created.json()
    settings.GRAPH_TEST_REGEX_MAX_PROGRAM = 2000
    started = time.monotonic()
    suite = api.post(
        f"/api/graphs/{graph}/suite-runs/", {"version": 1, "cases": [created.json()["id"]]}, format="json"
    )
    assert suite.status_code == 202, suite.json()
    while (body := api.get(f"/api/suite-runs/{suite.json()['id']}/").json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() - started < 30, body
        time.sleep(0.05)
    (result,) = body["results"]
    assert result["outcome"] == "error"
    assert "GRAPH_TEST_REGEX_MAX_PROGRAM" in result["error"]

    settings.GRAPH_TEST_CASE_JUDGE_SECONDS = 0.0
    suite = api.post(f"/api/graphs/{graph}/suite-runs/", {"version": 1}, format="json")
    assert suite.status_code == 202, suite.json()
    while (body := api.get(f"/api/suite-runs/{suite.json()['id']}/").json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() - started < 60, body
        time.sleep(0.05)
    judged = [r for r in body["results"] if r["error"] and "GRAPH_TEST_CASE_JUDGE_SECONDS" in r["error"]]
    assert judged, body["results"]
    assert SuiteRun.objects.get(pk=body["id"]).judge_seconds > 0
