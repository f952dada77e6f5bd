"""The migration that renamed the saved case model (TestCase to GraphCase) keeps every case and
the suite results and load tests that point at one."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("execution", "0013_loadtest_secret_header_names")]
AFTER = [("execution", "0014_rename_testcase_graphcase")]


def test_saved_cases_and_what_points_at_them_survive_the_rename(transactional_db: Any) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    author = old.get_model("auth", "User").objects.create(username="author")
    graph = old.get_model("graphs", "Graph").objects.create(name="g", owner=author)
    document = {"name": "cat", "request": {"payload": {"x": 1}}, "expect": {"status": 200}}
    case = old.get_model("execution", "TestCase").objects.create(
        graph=graph, name="cat", document=document, created_by=author, revision=3
    )
    try:
        executor.loader.build_graph()
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        row = new.get_model("execution", "GraphCase").objects.get(pk=case.pk)
        assert (row.graph_id, row.name, row.document, row.revision) == (graph.pk, "cat", document, 3)
        assert "execution_graphcase" in connection.introspection.table_names()
        assert "execution_testcase" not in connection.introspection.table_names()
        load_case = new.get_model("execution", "LoadTest")._meta.get_field("test_case").related_model
        assert load_case._meta.object_name == "GraphCase"
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
