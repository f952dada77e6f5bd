"""The migration that made environments a permission: who owns and sees what afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("execution", "0001_initial"), ("graphs", "0001_initial")]
AFTER = [("execution", "0002_environment_visibility")]


@pytest.fixture
def executor(transactional_db: Any) -> Any:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    yield executor
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_existing_environments_get_owners_and_visibility_and_a_squatted_local_is_moved_aside(
    executor: Any,
) -> None:
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    Environment = old.get_model("execution", "Environment")
    mallory = User.objects.create(username="mallory")
    admin = User.objects.create(username="admin", is_staff=True)
    squat = Environment.objects.create(name="local", owner=mallory)
    lab = Environment.objects.create(name="lab", owner=mallory, allow_loopback=True)
    staging = Environment.objects.create(name="staging", owner=admin)
    legacy = Environment.objects.create(name="legacy")

    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    Environment = new.get_model("execution", "Environment")
    AuditEvent = new.get_model("graphs", "AuditEvent")

    def row(pk: int) -> tuple[str, Any, str, bool]:
        environment = Environment.objects.get(pk=pk)
        return environment.name, environment.owner_id, environment.visibility, environment.system

    assert row(squat.pk) == (f"local-squatted-{squat.pk}", mallory.pk, "private", False)
    assert row(lab.pk) == ("lab", mallory.pk, "private", False)
    assert row(staging.pk) == ("staging", admin.pk, "shared", False)
    assert row(legacy.pk) == ("legacy", None, "shared", False)
    assert not Environment.objects.filter(system=True).exists()  # created again on first use
    events = AuditEvent.objects.filter(action="environment.migrate")
    assert sorted(e.details["environment"] for e in events) == sorted(
        [squat.pk, lab.pk, staging.pk, legacy.pk]
    )


def test_a_local_owned_by_staff_or_nobody_becomes_the_system_default(executor: Any) -> None:
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    demo = User.objects.create(username="demo", is_staff=True)
    local = old.get_model("execution", "Environment").objects.create(name="local", owner=demo)

    executor.loader.build_graph()
    executor.migrate(AFTER)
    Environment = executor.loader.project_state(AFTER).apps.get_model("execution", "Environment")
    environment = Environment.objects.get(pk=local.pk)
    assert (environment.name, environment.owner_id, environment.visibility, environment.system) == (
        "local",
        None,
        "shared",
        True,
    )
