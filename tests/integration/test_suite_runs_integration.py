"""Suite runs end to end through the real pieces: API -> Redis broker -> Celery worker (threads) ->
engine -> mock model server, each case a real run; the suite's events over Redis pub/sub and SSE;
cancel; the comparison of two versions; the export gate."""

from __future__ import annotations

import time
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient
from runhelpers import parse_sse, run_testgraph

from execution.devtools import demo, mockmodels
from execution.models import Environment, Run
from execution.suites.models import SuiteRun
from graphs import services as graph_services
from graphs.models import AuditEvent
from tests.conftest import client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SWITCH_CASE_COUNT = 3  # execution/devtools/demotests/animal-switch.tests.yaml


def demo_api() -> APIClient:
    return client_for(get_user_model().objects.get(username=demo.DEMO_USER))


def start_suite(api: APIClient, graph: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/graphs/{graph}/suite-runs/", body, format="json")
    assert response.status_code == 202, response.json()
    return dict(response.json())


def wait_for_suite(api: APIClient, suite_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body = api.get(f"/api/suite-runs/{suite_id}/").json()
        if body["status"] not in ("queued", "running"):
            return dict(body)
        if time.monotonic() > deadline:
            raise AssertionError(f"suite run {suite_id} is still {body['status']}: {body['counts']}")
        time.sleep(0.05)


def stream(api: APIClient, suite_id: str, **headers: Any) -> list[dict[str, Any]]:
    response = api.get(f"/api/suite-runs/{suite_id}/events/", HTTP_ACCEPT="text/event-stream", **headers)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    return [e for e in parse_sse(response.streaming_content) if "data" in e]


def slow_env(mock: mockmodels.MockModelServer, name: str, latency_ms: int) -> Environment:
    return Environment.objects.create(
        name=name,
        visibility="shared",
        url_template=mock.url + "/v1/models/{name}:predict?latency_ms=" + str(latency_ms),
        allow_loopback=True,
    )


def many_cases(api: APIClient, graph: str, count: int, **extra: Any) -> None:
    cases = [
        {
            "name": f"case {i:03d}",
            "request": {"payload": {"instances": [{"animal": "cat", "image": f"{i}.jpg"}]}},
            "expectations": [{"status": 200}, {"route": "root", "took": "cat"}],
            **extra,
        }
        for i in range(count)
    ]
    text = yaml.safe_dump({"kind": "InferenceGraphTest", "graph": graph, "cases": cases})
    response = api.post(
        f"/api/graphs/{graph}/tests/import/?mode=replace", text, content_type="application/yaml"
    )
    assert response.status_code == 201, response.json()


def test_every_demo_suite_is_green_through_the_workers_with_a_run_per_case(
    worker: Any, demo_graphs: list, settings: Any
) -> None:
    settings.SUITE_MAX_IN_FLIGHT_PER_USER = len(demo.DEMO_GRAPHS)  # one user starts them all at once
    api = demo_api()
    started = {
        name: start_suite(
            api, name, version=api.get(f"/api/graphs/{name}/").json()["latest_version"]["number"]
        )
        for name in demo.DEMO_GRAPHS
    }
    for name, suite in started.items():
        assert suite["graph"] == name and suite["environment"] == "local"
        done = wait_for_suite(api, suite["id"])
        assert done["status"] == "passed", (name, done["results"])
        counts = done["counts"]
        assert counts["total"] == counts["passed"] == counts["finished"] == len(done["results"]) > 0
        assert done["duration_ms"] > 0 and done["finished_at"] is not None
        for result in done["results"]:
            assert result["outcome"] == "passed" and result["failures"] == [] and result["error"] is None
            run = Run.objects.get(pk=result["run"])  # a real run: the console shows its trace
            assert run.response_status is not None and run.events.filter(type="run.finished").exists()
    # The version now shows its green state, the graph which version last passed.
    graph = api.get("/api/graphs/face-recognition/").json()
    tests = graph["latest_version"]["tests"]
    assert tests["status"] == "passed" and tests["current"] is True and tests["environment"] == "local"
    assert tests["suite_run"] == started["face-recognition"]["id"]
    assert graph["last_passing_version"] == graph["latest_version"]["number"]
    listed = api.get("/api/graphs/").json()["results"]
    assert {g["name"]: g["latest_version"]["tests"]["status"] for g in listed} == {
        name: "passed" for name in demo.DEMO_GRAPHS
    }
    history = api.get("/api/graphs/face-recognition/versions/").json()["results"]
    assert history[0]["tests"]["suite_run"] == started["face-recognition"]["id"]
    summaries = api.get("/api/graphs/face-recognition/suite-runs/?version=1").json()
    assert summaries["count"] == 1 and "results" not in summaries["results"][0]


def test_fifty_cases_run_in_parallel_and_the_events_arrive_in_order(
    worker: Any, demo_graphs: list, mock_server: Any, settings: Any
) -> None:
    settings.SUITE_CONCURRENCY = 4  # the test worker has 4 threads
    slow_env(mock_server, "slow", 60)
    api = demo_api()
    many_cases(api, "animal-switch", 50)
    suite = start_suite(api, "animal-switch", version=1, environment="slow")
    events = stream(api, suite["id"])  # live: opened while the suite runs, ends with suite.finished
    done = wait_for_suite(api, suite["id"])
    assert done["status"] == "passed" and done["counts"]["passed"] == 50

    seqs = [int(e["id"]) for e in events]
    assert seqs == list(range(1, len(events) + 1))
    types = [e["event"] for e in events]
    assert types[0] == "suite.started" and events[0]["data"]["data"] == {"total": 50}
    assert types[-1] == "suite.finished" and types.count("suite.finished") == 1
    assert types.count("case.started") == types.count("case.finished") == 50
    finished = [e["data"]["data"] for e in events if e["event"] == "case.finished"]
    assert [f["counts"]["finished"] for f in finished] == list(range(1, 51))
    started_at = {e["data"]["data"]["run"]: e["id"] for e in events if e["event"] == "case.started"}
    for item in finished:  # a case finishes after it started, with its run
        assert int(started_at[item["run"]]) < seqs[-1] and item["outcome"] == "passed"

    # Parallel, and never more at once than the suite's concurrency.
    runs = list(Run.objects.filter(pk__in=[r["run"] for r in done["results"]]))
    moments = sorted([(r.started_at, 1) for r in runs] + [(r.finished_at, -1) for r in runs])
    peak = level = 0
    for _, step in moments:
        level += step
        peak = max(peak, level)
    assert 2 <= peak <= 4
    # Resuming from Last-Event-ID replays only what came after.
    tail = stream(api, suite["id"], HTTP_LAST_EVENT_ID=str(seqs[-3]))
    assert [int(e["id"]) for e in tail] == seqs[-2:]


def test_cancel_mid_suite_stops_the_rest_and_says_how_many_finished(
    worker: Any, demo_graphs: list, mock_server: Any, settings: Any
) -> None:
    settings.SUITE_CONCURRENCY = 2
    slow_env(mock_server, "slower", 400)
    api = demo_api()
    many_cases(api, "animal-switch", 12)
    suite = start_suite(api, "animal-switch", version=1, environment="slower")
    deadline = time.monotonic() + 20
    while api.get(f"/api/suite-runs/{suite['id']}/").json()["counts"]["finished"] < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    cancelled = api.post(f"/api/suite-runs/{suite['id']}/cancel/")
    assert cancelled.status_code == 202
    done = wait_for_suite(api, suite["id"])
    assert done["status"] == "cancelled"
    finished = done["counts"]["finished"]
    assert 2 <= finished < 12 and finished + done["counts"]["cancelled"] == 12
    outcomes = [r["outcome"] for r in done["results"]]
    assert outcomes.count("passed") == finished and set(outcomes) <= {"passed", "cancelled"}
    assert all(Run.objects.get(pk=r["run"]).is_terminal for r in done["results"] if r["run"])
    last = stream(api, suite["id"])[-1]
    assert last["event"] == "suite.finished" and last["data"]["data"]["status"] == "cancelled"
    assert last["data"]["data"]["counts"]["finished"] == finished
    again = api.post(f"/api/suite-runs/{suite['id']}/cancel/")  # idempotent
    assert again.status_code == 202 and again.json()["counts"] == done["counts"]


def test_the_red_demo_version_fails_and_the_comparison_names_the_changed_step(
    worker: Any, demo_graphs: list
) -> None:
    api = demo_api()
    started = api.post(f"/api/graphs/{demo.BROKEN_DEMO}/suite-runs/compare/", {"a": 3, "b": 2}, format="json")
    assert started.status_code == 202, started.json()
    ids = started.json()
    green, red = wait_for_suite(api, ids["a"]), wait_for_suite(api, ids["b"])
    assert green["status"] == "passed" and red["status"] == "failed"
    failed = [r for r in red["results"] if r["outcome"] == "failed"]
    assert [r["name"] for r in failed] == ["a dog gets its breed"]
    failure = next(f for f in failed[0]["failures"] if f["kind"] == "step")
    assert failure["expected"] == 200 and failure["actual"] == "skipped"

    compared = api.get(ids["compare_url"])
    assert compared.status_code == 200, compared.json()
    body = compared.json()
    assert body["a"]["version"] == 3 and body["b"]["version"] == 2
    assert body["manifest_diff"]["from"] == 3 and body["manifest_diff"]["to"] == 2
    by_name = {c["name"]: c for c in body["cases"]}
    dog = by_name["a dog gets its breed"]
    assert dog["changed"] is True and dog["a"]["outcome"] == "passed" and dog["b"]["outcome"] == "failed"
    changed_steps = {s["label"]: s["changed"] for s in dog["comparison"]["steps"] if s["changed"]}
    assert "root/breed" in changed_steps, dog["comparison"]["steps"]
    assert by_name["a cat stops after the classifier"]["changed"] is False


def test_the_export_gate_opens_after_a_green_run_and_closes_when_the_cases_change(
    worker: Any, demo_graphs: list
) -> None:
    api = demo_api()
    name = "animal-switch"
    assert api.patch(f"/api/graphs/{name}/", {"require_passing_tests": True}, format="json").json()[
        "require_passing_tests"
    ]
    refused = api.get(f"/api/graphs/{name}/versions/1/export/")
    assert refused.status_code == 409
    assert refused.json()["code"] == "tests_required" and refused.json()["last_passing_version"] is None
    export = f"/api/graphs/{name}/versions/1/export/"
    assert api.post(export, {"force": True}, format="json").status_code == 400  # no reason
    forced = api.post(export, {"force": True, "reason": "hotfix for prod"}, format="json")
    assert forced.status_code == 200 and b"kind: InferenceGraph" in forced.content
    audit = AuditEvent.objects.filter(action="version.export_forced").get()
    assert audit.details == {"reason": "hotfix for prod"} and audit.version_number == 1

    suite = start_suite(api, name, version=1)
    assert wait_for_suite(api, suite["id"])["status"] == "passed"
    assert api.get(export).status_code == 200
    # the worker that finished the suite run recorded the verdict that opens the gate
    opened = AuditEvent.objects.get(action="version.tests_passed", graph_name=name)
    assert opened.details["suite_run"] == suite["id"] and opened.version_number == 1
    assert api.get(f"/api/graphs/{name}/").json()["last_passing_version"] == 1

    case = api.get(f"/api/graphs/{name}/tests/").json()["results"][0]
    document = {**case["document"], "description": "edited"}
    assert api.put(f"/api/graphs/{name}/tests/{case['id']}/", document, format="json").status_code == 200
    stale = api.get(f"/api/graphs/{name}/versions/1/export/")
    assert stale.status_code == 409 and stale.json()["last_passing_version"] is None
    tests = api.get(f"/api/graphs/{name}/versions/1/").json()["tests"]
    assert tests["status"] == "passed" and tests["current"] is False


def test_a_catastrophic_regex_is_judged_in_bounded_time(worker: Any, demo_graphs: list) -> None:
    api = demo_api()
    graph = "animal-switch"
    evil = {
        "name": "evil regex",
        "request": {"payload": {"instances": [{"animal": "cat", "image": "a" * 50_000 + "!"}]}},
        "expectations": [{"path": "predictions.0", "matches": "^(a+)+$"}, {"status": 200}],
    }
    created = api.post(f"/api/graphs/{graph}/tests/", evil, format="json")
    assert created.status_code == 201, created.json()
    suite = start_suite(api, graph, version=1, cases=[created.json()["id"]])
    done = wait_for_suite(api, suite["id"], timeout=30)
    assert done["status"] == "failed"  # the breed name is not all a's; RE2 answers in linear time
    (result,) = done["results"]
    assert [f["kind"] for f in result["failures"]] == ["path"]


def test_a_worker_that_dies_mid_suite_does_not_leave_it_running(
    demo_graphs: list, monkeypatch: Any, settings: Any
) -> None:
    """No worker takes the runs (enqueue sends nothing); one is then left running with a stale
    heartbeat, as a worker killed mid-run leaves it. The reaper's pass ends the suite run."""
    from execution.services import dispatch
    from execution.tasks import reaper

    monkeypatch.setattr(dispatch, "enqueue", lambda run: None)
    api = demo_api()
    case = api.get("/api/graphs/animal-switch/tests/").json()["results"][0]
    suite = start_suite(api, "animal-switch", version=1, cases=[case["id"]])
    run = Run.objects.get(pk=suite["results"][0]["run"])
    stale = run.created_at.replace(year=run.created_at.year - 1)
    Run.objects.filter(pk=run.pk).update(status="running", attempt=1, started_at=stale, heartbeat_at=stale)
    report = reaper.reap_runs_task()
    assert report["failed"] == [str(run.pk)] and report["suites"] == [suite["id"]]
    done = api.get(f"/api/suite-runs/{suite['id']}/").json()
    assert done["status"] == "error" and done["counts"]["error"] == 1
    assert "died" in done["results"][0]["error"]
    assert SuiteRun.objects.get(pk=suite["id"]).finished_at is not None


def test_a_non_member_runs_suites_but_cannot_change_or_open_the_gate(
    worker: Any, demo_graphs: list, other_user: Any
) -> None:
    bob = client_for(other_user)
    assert bob.patch("/api/graphs/canary/", {"require_passing_tests": True}, format="json").status_code == 403
    suite = start_suite(bob, "canary", version=1)
    assert wait_for_suite(bob, suite["id"])["status"] == "passed"
    owner_graph = graph_services.Graph.objects.get(name="canary")
    assert owner_graph.require_passing_tests is False
    # a non-member's verdict is shown, but the gate does not trust it
    graph = bob.get("/api/graphs/canary/").json()
    assert graph["latest_version"]["tests"]["gate"] is False and graph["last_passing_version"] is None


def test_testgraph_with_workers_records_a_suite_run_and_writes_junit(
    worker: Any, demo_graphs: list, tmp_path: Any
) -> None:
    report = tmp_path / "red.xml"
    out, code = run_testgraph(demo.BROKEN_DEMO, "--version", "2", "--workers", "--junit", str(report))
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0].startswith(f"{demo.BROKEN_DEMO} v2: suite run ") and lines[0].endswith("on the workers")
    assert any(line.startswith("FAIL  a dog gets its breed") for line in lines)
    assert any(line.startswith("PASS  a cat stops after the classifier") for line in lines)
    assert lines[-1].startswith("2 cases: 1 passed, 1 failed, 0 errors")
    suite = SuiteRun.objects.get()
    assert suite.status == "failed" and suite.created_by.username == demo.DEMO_USER
    junit = ElementTree.parse(report).getroot()
    assert junit.tag == "testsuites" and junit.find("testsuite").get("failures") == "1"

    out, code = run_testgraph(demo.BROKEN_DEMO, "--version", "1", "--workers", "--concurrency", "1")
    assert code == 0, out
    graph = demo_api().get(f"/api/graphs/{demo.BROKEN_DEMO}/").json()
    assert graph["last_passing_version"] == 1
    assert graph["since_last_passing"]["from"] == 1 and graph["since_last_passing"]["to"] == 3
    assert run_testgraph(demo.BROKEN_DEMO, "--workers")[1] == 0
    graph = demo_api().get(f"/api/graphs/{demo.BROKEN_DEMO}/").json()
    assert graph["last_passing_version"] == 3 and graph["since_last_passing"] is None
    assert run_testgraph(demo.BROKEN_DEMO, "--workers", "--against", "1")[1] == 2
    assert run_testgraph(demo.BROKEN_DEMO, "--workers", "--user", "nobody")[1] == 2
    assert run_testgraph(demo.BROKEN_DEMO, "--workers", "--case", "no such case")[1] == 2


def test_testgraph_with_workers_reports_the_suite_runs_budget_verdict_in_junit(
    worker: Any, demo_graphs: list, tmp_path: Any
) -> None:
    graph_services.Graph.objects.filter(name=demo.BROKEN_DEMO).update(latency_budgets={"graph_p95_ms": 0.001})
    report = tmp_path / "budgets.xml"
    out, code = run_testgraph(demo.BROKEN_DEMO, "--version", "1", "--workers", "--junit", str(report))
    assert code == 1, out  # the cases pass; the budget does not hold
    assert any(
        line.startswith("budget graph: p95 ") and line.endswith(": EXCEEDED") for line in out.splitlines()
    )
    assert SuiteRun.objects.get().budgets["passed"] is False
    suite = ElementTree.parse(report).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert suite.get("failures") == "1" and len(cases) == 3
    assert cases["latency budget: p95 of graph within 0.00 ms"].find("failure") is not None
