"""The migration that added the version summary counts fills them in for existing versions."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("graphs", "0002_member_roles")]
AFTER = [("graphs", "0003_version_summary")]


def test_existing_versions_get_their_node_step_and_issue_counts(transactional_db: Any) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    author = old.get_model("auth", "User").objects.create(username="author")
    graph = old.get_model("graphs", "Graph").objects.create(name="g", owner=author)
    manifest = {
        "spec": {
            "nodes": {
                "root": {"routerType": "Sequence", "steps": [{"serviceUrl": "http://a"}, {"nodeName": "b"}]},
                "b": {"routerType": "Ensemble", "steps": [{"serviceUrl": "http://c"}]},
                "odd": "not a node",
            }
        }
    }
    issues = [{"severity": "error"}, {"severity": "warning"}, {"severity": "warning"}]
    version = old.get_model("graphs", "GraphVersion").objects.create(
        graph=graph, number=1, manifest=manifest, spec_hash="x", issues=issues, author=author
    )
    try:
        executor.loader.build_graph()
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        row = new.get_model("graphs", "GraphVersion").objects.get(pk=version.pk)
        assert (row.node_count, row.step_count, row.error_count, row.warning_count) == (3, 3, 1, 2)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
