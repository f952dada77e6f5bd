"""The runs list reads its page from an index in order, whatever its filter: the filter is part of
the index's search (the rows it skips are never read), and the graph's runs are never sorted in a
temporary B-tree (SQLite's ``EXPLAIN QUERY PLAN``, after ``ANALYZE``; on PostgreSQL the planner's
choice depends on its own statistics, so this runs on SQLite only)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from execution import selectors
from execution.models import Environment, Run
from graphs import services as graphs

pytestmark = pytest.mark.django_db


def plan(qs: Any) -> list[str]:
    sql, params = qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return [str(row[-1]) for row in cursor.fetchall()]


def make_runs(graph: Any, user: Any, manifest: dict[str, Any]) -> list[Environment]:
    """500 runs of two graphs, over five versions, five environments and five statuses."""
    environments = [Environment.objects.create(name=f"env-{i}") for i in range(5)]
    other = graphs.graph_create(owner=user, manifest=manifest | {"metadata": {"name": "other"}})
    for number in range(2, 6):
        manifest["spec"]["nodes"]["root"]["steps"][0]["name"] = f"step-v{number}"
        graphs.graph_version_create(
            graph=graph, manifest=manifest, layout={}, author=user, message="", base_version=None
        )
    versions = list(graph.versions.all())
    Run.objects.bulk_create(
        Run(
            graph=graph if n % 2 else other,
            version=versions[n % 5] if n % 2 else other.latest_version,
            environment=environments[n % 5],
            environment_name=environments[n % 5].name,
            status=["failed", "succeeded", "error", "cancelled", "queued"][n % 5],
            seed=n,
            created_by=user,
        )
        for n in range(500)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the statistics a long-lived database has: the planner uses them
    return environments


@pytest.mark.parametrize(
    ("filters", "searched"),
    [
        ({}, "graph_id=?"),
        ({"status": "failed"}, "status=?"),
        ({"version": 2}, "version_id=?"),
        ({"environment": "env-1"}, "environment_name=?"),
        ({"environment": "the first one's id"}, "environment_id=?"),
    ],
    ids=["default", "status", "version", "environment-name", "environment-id"],
)
def test_the_runs_list_reads_an_index_in_order(
    filters: dict[str, Any], searched: str, graph: Any, user: Any, manifest: dict[str, Any]
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN is SQLite's")
    environments = make_runs(graph, user, manifest)
    if filters.get("environment") == "the first one's id":
        filters = {"environment": environments[0].pk}
    qs = selectors.run_list(graph=graph, user=user, **filters)
    for query in (qs[:50], qs.order_by()):  # the page, and what the paginator counts
        lines = plan(query)
        assert not [line for line in lines if "TEMP B-TREE" in line], lines
        runs = [line for line in lines if "execution_run" in line]
        # The filter is part of the index's search: the rows it skips are never read.
        assert runs and runs[0].startswith("SEARCH execution_run USING") and searched in runs[0], lines
