"""A list costs the same number of queries whatever its length: the versions list and the graph
list show each version's green state (``tests``) and each graph's last passing version from a
fixed number of queries per page, not a few per row (bench/bench_scale.py measures the time)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from execution.cases.models import GraphCase
from graphs import services
from graphs.models import Graph
from tests.suitekit import judged

pytestmark = pytest.mark.django_db


def _graph(user: Any, manifest: dict[str, Any], name: str, versions: int) -> Graph:
    doc = copy.deepcopy(manifest)
    doc["metadata"]["name"] = name
    graph = services.graph_create(owner=user, manifest=doc)
    for number in range(2, versions + 1):
        doc["spec"]["nodes"]["root"]["steps"][0]["name"] = f"step-v{number}"
        services.graph_version_create(
            graph=graph, manifest=doc, layout={}, author=user, message="", base_version=None
        )
    GraphCase.objects.create(graph=graph, name="a case", document={}, created_by=user)
    return graph


def _queries(api: Any, url: str) -> tuple[int, dict[str, Any]]:
    with CaptureQueriesContext(connection) as captured:
        response = api.get(url)
    assert response.status_code == 200, response.content
    return len(captured), response.json()


def test_the_versions_list_costs_the_same_queries_for_3_or_12_versions(
    api: Any, user: Any, manifest: dict[str, Any]
) -> None:
    short = _graph(user, manifest, "short-history", 3)
    long = _graph(user, manifest, "long-history", 12)
    for graph in (short, long):
        judged(graph, 2, "failed", 30, user=user)
        judged(graph, 2, "passed", 10, user=user)  # the latest suite run of version 2 is this one
        judged(graph, 1, "passed", 5, user=user, digest="0" * 64)  # on another case set: not current
    few, body_few = _queries(api, "/api/graphs/short-history/versions/")
    many, body_many = _queries(api, "/api/graphs/long-history/versions/")
    assert len(body_many["results"]) == 12
    assert many == few
    for body in (body_few, body_many):
        tests = {row["number"]: row["tests"] for row in body["results"]}
        assert tests[3] is None
        assert (tests[2]["status"], tests[2]["current"], tests[2]["counts"]["passed"]) == ("passed", True, 1)
        assert (tests[1]["status"], tests[1]["current"]) == ("passed", False)


def test_the_graph_list_costs_the_same_queries_for_2_or_8_graphs(
    api: Any, user: Any, manifest: dict[str, Any]
) -> None:
    for index in range(2):
        graph = _graph(user, manifest, f"graph-{index}", 3)
        judged(graph, 3, "passed", 20, user=user)
        judged(graph, 2, "passed", 10, user=user)
    few, _ = _queries(api, "/api/graphs/")
    for index in range(2, 8):
        graph = _graph(user, manifest, f"graph-{index}", 3)
        judged(graph, 2, "passed", 20, user=user)
        judged(graph, 3, "failed", 10, user=user)
    many, body = _queries(api, "/api/graphs/")
    assert len(body["results"]) == 8
    assert many == few
    entries = {row["name"]: row for row in body["results"]}
    assert entries["graph-0"]["last_passing_version"] == 3
    assert entries["graph-0"]["latest_version"]["tests"]["status"] == "passed"
    assert entries["graph-5"]["last_passing_version"] == 2
    assert entries["graph-5"]["latest_version"]["tests"]["status"] == "failed"


def test_the_versions_list_never_loads_a_manifest_or_layout(
    api: Any, user: Any, manifest: dict[str, Any]
) -> None:
    # A history row is a summary: reading its version's (or its parent's) whole manifest made the
    # page cost grow with the graph's size as well as with the page.
    _graph(user, manifest, "big-history", 3)
    with CaptureQueriesContext(connection) as captured:
        body = api.get("/api/graphs/big-history/versions/").json()
    assert [(row["number"], row["parent"]) for row in body["results"]] == [(3, 2), (2, 1), (1, None)]
    assert body["results"][0]["issues"] == []
    for query in captured.captured_queries:
        assert '"manifest"' not in query["sql"] and '"layout"' not in query["sql"], query["sql"]


def test_the_runs_list_reads_neither_manifests_nor_bodies(
    api: Any, user: Any, manifest: dict[str, Any]
) -> None:
    # A runs row shows the version's number and the response's status; each row used to read its
    # version's whole manifest and the run's request and response bodies as well.
    from execution.models import Run

    graph = _graph(user, manifest, "many-runs", 2)
    for number in (1, 2, 2):
        Run.objects.create(
            graph=graph,
            version=graph.versions.get(number=number),
            seed=1,
            created_by=user,
            status="succeeded",
            request_body='{"big": "request"}',
            response_body='{"big": "response"}',
            response_status=200,
            response_content_type="application/json",
        )
    few, _ = _queries(api, "/api/graphs/many-runs/runs/?page_size=1")
    with CaptureQueriesContext(connection) as captured:
        body = api.get("/api/graphs/many-runs/runs/").json()
    assert len(captured) == few
    assert [row["version"] for row in body["results"]] == [2, 2, 1]
    assert body["results"][0]["response"] == {"status_code": 200, "content_type": "application/json"}
    for query in captured.captured_queries:
        for column in ('"manifest"', '"layout"', '"request_body"', '"response_body"'):
            assert column not in query["sql"], query["sql"]
