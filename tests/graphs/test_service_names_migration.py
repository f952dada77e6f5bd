"""The migration that added each version's service_names fills them in for existing versions."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("graphs", "0004_require_passing_tests")]
AFTER = [("graphs", "0005_version_service_names")]


def test_existing_versions_get_the_service_names_they_call(transactional_db: Any) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    author = old.get_model("auth", "User").objects.create(username="author")
    graph = old.get_model("graphs", "Graph").objects.create(name="g", owner=author)
    manifest = {
        "spec": {
            "nodes": {
                "root": {
                    "routerType": "Sequence",
                    "steps": [{"serviceName": "zeta"}, {"nodeName": "b"}, {"serviceName": ""}, "odd"],
                },
                "b": {"routerType": "Ensemble", "steps": [{"serviceName": "alpha"}, {"serviceName": "zeta"}]},
                "odd": "not a node",
            }
        }
    }
    version = old.get_model("graphs", "GraphVersion").objects.create(
        graph=graph, number=1, manifest=manifest, spec_hash="x", author=author
    )
    try:
        executor.loader.build_graph()
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        row = new.get_model("graphs", "GraphVersion").objects.get(pk=version.pk)
        assert row.service_names == ["alpha", "zeta"]
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
