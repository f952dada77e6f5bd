"""The suite runs API without a worker: what it refuses (and how), the bounded concurrency (each
enqueued run is executed here, in order, through the task's own body), the green state, the
gate's setting, and hostile inputs (10,000 case ids, a 10 MB expectation). The real worker runs
them in tests/integration/test_suite_runs_integration.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from execution.devtools import demo
from execution.models import Environment, GraphCase, Run
from execution.suites.models import SuiteEvent, SuiteRun
from execution.tasks.runs import run_graph_task
from graphs.models import AuditEvent, Graph, GraphMember
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

GRAPH = "animal-switch"  # three demo cases: cat, dog, neither


@pytest.fixture
def demo_api(db: Any, mock_server: Any) -> APIClient:
    list(demo.seed())
    return client_for(get_user_model().objects.get(username=demo.DEMO_USER))


def start(api: APIClient, graph: str = GRAPH, **body: Any) -> Any:
    return api.post(f"/api/graphs/{graph}/suite-runs/", {"version": 1, **body}, format="json")


def case_ids(api: APIClient, graph: str = GRAPH) -> list[int]:
    return [c["id"] for c in api.get(f"/api/graphs/{graph}/tests/").json()["results"]]


def issue_paths(response: Any) -> list[str]:
    return [issue["path"] for issue in response.json()["issues"]]


def test_what_a_suite_run_refuses(demo_api: APIClient, user: Any) -> None:
    from graphs import services as graph_services

    graph_services.graph_create(
        owner=user, manifest=demo.demo_manifest(GRAPH) | {"metadata": {"name": "bare"}}
    )
    no_cases = start(demo_api, "bare")
    assert no_cases.status_code == 409 and "no test cases" in no_cases.json()["detail"]
    unknown_version = start(demo_api, version=9)
    assert unknown_version.status_code == 400 and issue_paths(unknown_version) == ["version"]
    assert "no version 9" in unknown_version.json()["detail"]
    unknown_env = start(demo_api, environment="nowhere")
    assert unknown_env.status_code == 400 and issue_paths(unknown_env) == ["environment"]
    ids = case_ids(demo_api)
    unknown_case = start(demo_api, cases=[ids[0], 999_999])
    assert unknown_case.status_code == 400 and issue_paths(unknown_case) == ["cases[1]"]
    assert start(demo_api, cases=[]).status_code == 400
    not_ids = start(demo_api, cases=["cat"])
    assert not_ids.status_code == 400 and "cases" in json.dumps(not_ids.json())
    assert start(demo_api, "no-such-graph").status_code == 404
    assert demo_api.post(f"/api/graphs/{GRAPH}/suite-runs/", {}, format="json").status_code == 400
    assert not SuiteRun.objects.exists() and not Run.objects.exists()  # nothing half-started


def test_ten_thousand_case_ids_are_refused_with_the_limit(demo_api: APIClient) -> None:
    response = start(demo_api, cases=list(range(1, 10_001)))
    assert response.status_code == 400
    assert "at most 1000" in response.json()["detail"] and issue_paths(response) == ["cases"]
    assert not SuiteRun.objects.exists()


def test_a_ten_megabyte_expectation_is_refused_and_nothing_is_lost(
    demo_api: APIClient, settings: Any
) -> None:
    before = list(GraphCase.objects.order_by("pk").values("pk", "name", "document"))
    huge = {
        "name": "huge",
        "request": {"payload": {"instances": [{"animal": "cat"}]}},
        "expectations": [{"body": {"blob": "x" * 10_000_000}}],
    }
    too_big = demo_api.post(f"/api/graphs/{GRAPH}/tests/", huge, format="json")
    assert too_big.status_code == 413
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 32 * 1024 * 1024  # past the body limit: the case limit answers
    refused = demo_api.post(f"/api/graphs/{GRAPH}/tests/", huge, format="json")
    assert refused.status_code == 400
    assert refused.json()["issues"][0]["expectation"] == 0
    assert list(GraphCase.objects.order_by("pk").values("pk", "name", "document")) == before
    assert start(demo_api).status_code == 202  # the suite still runs on what was there


@pytest.mark.django_db(transaction=True)
def test_cases_start_as_slots_free_up_and_each_is_judged_from_its_run(
    demo_api: APIClient, settings: Any, enqueued: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SUITE_CONCURRENCY = 2
    extra = [
        {"name": f"cat {i}", "request": {"payload": {"instances": [{"animal": "cat"}]}},
         "expectations": [{"status": 200}, {"route": "root", "took": "cat"}]}
        for i in range(3)
    ] + [
        {"name": "wrong on purpose", "request": {"payload": {"instances": [{"animal": "dog"}]}},
         "expectations": [{"route": "root", "took": "cat"}, {"path": "predictions.0", "equals": "poodle"}]}
    ]  # fmt: skip
    text = yaml.safe_dump({"kind": "InferenceGraphTest", "graph": GRAPH, "cases": extra})
    imported = demo_api.post(f"/api/graphs/{GRAPH}/tests/import/", text, content_type="application/yaml")
    assert imported.status_code == 201, imported.json()
    response = start(demo_api)
    assert response.status_code == 202, response.json()
    suite = response.json()
    assert suite["status"] == "running" and suite["counts"]["total"] == 7
    assert [r["outcome"] for r in suite["results"]].count("running") == 2 and len(enqueued) == 2
    # Each finished run starts the next case, which the same thread runs at once (not sent): never
    # more than 2 queued or running when a run starts.
    from execution.services import worker

    claimed: list[int] = []
    real_run = worker.run_claimed

    def counted(run: Run, **options: Any) -> str:
        claimed.append(Run.objects.filter(status__in=("queued", "running")).count())
        return real_run(run, **options)

    monkeypatch.setattr(worker, "run_claimed", counted)
    for message in list(enqueued):
        run_graph_task.apply(args=message["args"])
    assert len(enqueued) == 2 and len(claimed) == 7 and max(claimed) <= 2  # 5 never sent
    assert Run.objects.count() == 7 and not Run.objects.exclude(status__in=Run.TERMINAL).exists()
    done = demo_api.get(f"/api/suite-runs/{suite['id']}/").json()
    assert done["status"] == "failed"
    assert done["counts"] == {"total": 7, "passed": 6, "failed": 1, "error": 0, "cancelled": 0, "finished": 7}
    (wrong,) = [r for r in done["results"] if r["outcome"] == "failed"]
    assert wrong["name"] == "wrong on purpose" and wrong["status_code"] == 200
    route, path = wrong["failures"]
    assert (route["kind"], route["expected"], route["actual"]) == ("route", "cat", "dog")
    assert path["kind"] == "path" and path["expected"] == "poodle" and path["diff"]
    events = list(SuiteEvent.objects.filter(suite_id=suite["id"]).values_list("seq", "type"))
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert events[0][1] == "suite.started" and events[-1][1] == "suite.finished"
    # The stored events as one JSON document, as the stream sends them
    listed = demo_api.get(f"/api/suite-runs/{suite['id']}/events/?format=json").json()
    assert listed["suite"] == suite["id"] and listed["finished"] is True
    assert [(e["seq"], e["type"]) for e in listed["events"]] == events
    final = listed["events"][-1]
    assert final["data"]["status"] == "failed" and final["data"]["counts"]["finished"] == 7
    after = demo_api.get(f"/api/suite-runs/{suite['id']}/events/?format=json&last_event_id={len(events) - 1}")
    assert [e["seq"] for e in after.json()["events"]] == [len(events)]
    # the green state: failed, on the current case set; nothing passed yet
    graph = demo_api.get(f"/api/graphs/{GRAPH}/").json()
    assert graph["latest_version"]["tests"]["status"] == "failed"
    assert graph["latest_version"]["tests"]["current"] is True
    assert graph["last_passing_version"] is None and graph["require_passing_tests"] is False


@pytest.mark.django_db(transaction=True)
def test_a_case_whose_environment_is_gone_errors_and_the_others_run(
    demo_api: APIClient, enqueued: list[dict[str, Any]]
) -> None:
    Environment.objects.create(name="gone-soon", visibility="shared")
    case = GraphCase.objects.filter(graph__name=GRAPH).order_by("name").first()
    assert case is not None
    GraphCase.objects.filter(pk=case.pk).update(document={**case.document, "environment": "gone-soon"})
    Environment.objects.filter(name="gone-soon").delete()
    suite = start(demo_api).json()
    assert suite["environment"] == "local"  # every case that runs, runs there
    errored = [r for r in suite["results"] if r["outcome"] == "error"]
    assert [r["name"] for r in errored] == [case.name]
    assert "'gone-soon' does not exist" in errored[0]["error"] and errored[0]["run"] is None
    for item in list(enqueued):
        run_graph_task.apply(args=item["args"])
    done = demo_api.get(f"/api/suite-runs/{suite['id']}/").json()
    assert done["status"] == "error" and done["counts"]["passed"] == 2 and done["counts"]["error"] == 1


def test_lists_reads_and_compares_answer_clearly(
    demo_api: APIClient, bob_api: APIClient, settings: Any
) -> None:
    settings.SUITE_MAX_IN_FLIGHT_PER_USER = 3  # three suite runs of one user in flight here
    first = start(demo_api).json()
    second = start(demo_api, cases=case_ids(demo_api)[:1]).json()
    listed = demo_api.get(f"/api/graphs/{GRAPH}/suite-runs/?version=1").json()
    assert listed["count"] == 2 and [s["id"] for s in listed["results"]] == [second["id"], first["id"]]
    assert "results" not in listed["results"][0] and listed["results"][0]["counts"]["total"] == 1
    assert demo_api.get(f"/api/graphs/{GRAPH}/suite-runs/?version=2").json()["count"] == 0
    assert demo_api.get(f"/api/graphs/{GRAPH}/suite-runs/?version=x").status_code == 400
    assert first["cases_digest"] != second["cases_digest"]
    assert demo_api.get("/api/suite-runs/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert demo_api.get("/api/suite-runs/00000000-0000-0000-0000-000000000000/events/").status_code == 404

    pending = demo_api.get(f"/api/suite-runs/compare/?a={first['id']}&b={second['id']}")
    assert pending.status_code == 202 and pending.json()["status"] == "pending"
    assert pending.json()["a"]["id"] == first["id"]
    bad = demo_api.get(f"/api/suite-runs/compare/?a=nope&b={second['id']}")
    assert bad.status_code == 400 and issue_paths(bad) == ["a"]
    other = start(demo_api, "canary").json()
    two_graphs = demo_api.get(f"/api/suite-runs/compare/?a={first['id']}&b={other['id']}")
    assert two_graphs.status_code == 400 and "one graph" in two_graphs.json()["detail"]
    bad_version = demo_api.post(f"/api/graphs/{GRAPH}/suite-runs/compare/", {"a": 1, "b": 7}, format="json")
    assert bad_version.status_code == 400 and issue_paths(bad_version) == ["b"]

    # Bob neither started it nor may edit the graph: he reads it but may not cancel it.
    assert bob_api.get(f"/api/suite-runs/{first['id']}/").status_code == 200
    assert bob_api.post(f"/api/suite-runs/{first['id']}/cancel/").status_code == 403
    cancelled = demo_api.post(f"/api/suite-runs/{first['id']}/cancel/")
    assert cancelled.status_code == 202
    body = cancelled.json()  # nothing was running on a worker: it ends at once
    assert body["status"] == "cancelled" and body["counts"]["finished"] == 0
    assert body["counts"]["cancelled"] == body["counts"]["total"]
    assert Run.objects.filter(status="cancelled").count() >= 1


def test_the_gate_setting_is_the_editors_and_the_gate_says_why(
    demo_api: APIClient, bob_api: APIClient, other_user: Any
) -> None:
    assert demo_api.get(f"/api/graphs/{GRAPH}/versions/1/export/").status_code == 200  # off by default
    assert (
        bob_api.patch(f"/api/graphs/{GRAPH}/", {"require_passing_tests": True}, format="json").status_code
        == 403
    )
    bad = demo_api.patch(f"/api/graphs/{GRAPH}/", {"require_passing_tests": "maybe"}, format="json")
    assert bad.status_code == 400
    GraphMember.objects.create(graph=Graph.objects.get(name=GRAPH), user=other_user, role="editor")
    on = bob_api.patch(f"/api/graphs/{GRAPH}/", {"require_passing_tests": True}, format="json")
    assert on.status_code == 200 and on.json()["require_passing_tests"] is True
    assert AuditEvent.objects.filter(action="graph.settings", actor=other_user).exists()
    refused = demo_api.get(f"/api/graphs/{GRAPH}/versions/1/export/?format=json")
    assert refused.status_code == 409
    assert refused.json() == {
        "detail": refused.json()["detail"],
        "code": "tests_required",
        "last_passing_version": None,
    }
    assert "no passing suite run" in refused.json()["detail"]
    blank = demo_api.post(
        f"/api/graphs/{GRAPH}/versions/1/export/", {"force": True, "reason": "   "}, format="json"
    )
    assert blank.status_code == 400 and issue_paths(blank) == ["reason"]
    assert not AuditEvent.objects.filter(action="version.export_forced").exists()


def test_every_suite_endpoint_is_in_the_schema_with_examples(api: APIClient) -> None:
    schema = yaml.safe_load(api.get("/api/schema/?format=json").content)
    paths = schema["paths"]
    operations = {
        ("/api/graphs/{name}/suite-runs/", "get"): None,
        ("/api/graphs/{name}/suite-runs/", "post"): "202",
        ("/api/graphs/{name}/suite-runs/compare/", "post"): "202",
        ("/api/suite-runs/compare/", "get"): "200",
        ("/api/suite-runs/{suite_id}/", "get"): "200",
        ("/api/suite-runs/{suite_id}/cancel/", "post"): None,
        ("/api/suite-runs/{suite_id}/events/", "get"): "200",
        ("/api/graphs/{name}/", "patch"): None,
        ("/api/graphs/{name}/versions/{number}/export/", "get"): "409",
        ("/api/graphs/{name}/versions/{number}/export/", "post"): "409",
    }
    for (path, method), example_status in operations.items():
        operation = paths[path][method]
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            assert body.get("examples"), (path, method)
        if example_status is not None:
            answer = operation["responses"][example_status]["content"]
            assert any(media.get("examples") for media in answer.values()), (path, method, example_status)
    version = schema["components"]["schemas"]["VersionOutput"]["properties"]
    assert "tests" in version
    graph = schema["components"]["schemas"]["GraphOutput"]["properties"]
    assert {"require_passing_tests", "last_passing_version"} <= set(graph)


def test_a_misspelt_graph_setting_is_refused_not_ignored(demo_api: APIClient) -> None:
    response = demo_api.patch(f"/api/graphs/{GRAPH}/", {"require_passing_test": True}, format="json")
    assert response.status_code == 400 and "require_passing_test" in json.dumps(response.json())
    assert Graph.objects.get(name=GRAPH).require_passing_tests is False
