"""execution.access: who sees and uses environments, reads runs, and cancels runs and suite runs."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from execution import access
from execution.errors import InvalidInput, NotPermitted
from execution.models import Environment, Run
from execution.suites.models import SuiteRun
from graphs.models import Graph, GraphMember


@pytest.fixture
def staff(db: Any) -> Any:
    return get_user_model().objects.create_user("sam", password="sam-password-1", is_staff=True)


@pytest.fixture
def private(user: Any) -> Environment:
    return Environment.objects.create(name="alice-lab", owner=user, visibility=Environment.Visibility.PRIVATE)


@pytest.fixture
def shared(user: Any) -> Environment:
    return Environment.objects.create(name="staging", owner=user, visibility=Environment.Visibility.SHARED)


def _run(graph: Graph, environment: Environment | None, by: Any) -> Run:
    assert graph.latest_version is not None
    return Run.objects.create(
        graph=graph, version=graph.latest_version, environment=environment, seed=1, created_by=by
    )


def test_environments_are_used_by_their_owner_everybody_when_shared_and_staff(
    user: Any, other_user: Any, staff: Any, private: Environment, shared: Environment
) -> None:
    for who, expected in (
        (user, {"alice-lab", "staging"}),
        (other_user, {"staging"}),
        (staff, {"alice-lab", "staging"}),
    ):
        usable = set(
            Environment.objects.filter(access.environments_usable_by(who)).values_list("name", flat=True)
        )
        assert usable == expected
        assert {e.name for e in (private, shared) if access.can_use_environment(e, who)} == expected
    with pytest.raises(InvalidInput, match="There is no environment") as refused:
        access.access_environment_for_run(other_user, private)
    assert refused.value.issues[0]["code"] == "run.environment-unknown"
    assert "alice-lab" not in refused.value.detail  # not even the name is disclosed
    assert access.access_environment_for_run(other_user, shared) is shared


def test_only_the_owner_of_a_private_environment_or_staff_change_it(
    user: Any, other_user: Any, staff: Any, private: Environment, shared: Environment
) -> None:
    assert access.access_environment_for_change(user, private) is private
    with pytest.raises(NotPermitted, match="only staff may change it"):
        access.access_environment_for_change(user, shared)
    with pytest.raises(NotPermitted, match="Only the owner of environment 'alice-lab'"):
        access.access_environment_for_change(other_user, private)
    assert access.access_environment_for_change(staff, shared) is shared


def test_runs_are_read_by_whoever_sees_their_environment(
    graph: Graph, user: Any, other_user: Any, staff: Any, private: Environment, shared: Environment
) -> None:
    in_private, in_shared = _run(graph, private, user), _run(graph, shared, user)
    orphan = _run(graph, None, user)  # its environment was deleted

    def visible(who: Any) -> set[Run]:
        return set(Run.objects.filter(access.runs_visible_to(who)))

    assert visible(user) == {in_private, in_shared, orphan}
    assert visible(other_user) == {in_shared}
    assert visible(staff) == {in_private, in_shared, orphan}
    assert set(Run.objects.exclude(access.runs_hidden_from(other_user))) == {in_shared}
    assert set(Run.objects.exclude(access.environment_hidden_from(other_user))) == {in_shared, orphan}


def test_suite_runs_are_hidden_when_any_environment_is(
    graph: Graph, user: Any, other_user: Any, private: Environment, shared: Environment
) -> None:
    assert graph.latest_version is not None
    open_suite = SuiteRun.objects.create(
        graph=graph, version=graph.latest_version, environment=shared, created_by=user, concurrency=1, seed=1
    )
    closed = SuiteRun.objects.create(
        graph=graph, version=graph.latest_version, environment=private, created_by=user, concurrency=1, seed=1
    )
    assert set(SuiteRun.objects.filter(access.suites_visible_to(other_user))) == {open_suite}
    assert set(SuiteRun.objects.filter(access.suites_visible_to(user))) == {open_suite, closed}


def test_cancelling_is_for_the_starter_the_graph_editors_and_staff(
    graph: Graph, user: Any, other_user: Any, staff: Any, shared: Environment
) -> None:
    mine = _run(graph, shared, user)
    with pytest.raises(NotPermitted, match="Only the person who started the run"):
        access.access_run_for_cancel(other_user, mine)
    assert access.access_run_for_cancel(staff, mine) is mine
    GraphMember.objects.create(graph=graph, user=other_user, role=GraphMember.Role.EDITOR)
    assert access.access_run_for_cancel(other_user, mine) is mine

    assert graph.latest_version is not None
    suite = SuiteRun.objects.create(
        graph=graph, version=graph.latest_version, environment=shared, created_by=user, concurrency=1, seed=1
    )
    GraphMember.objects.filter(user=other_user).update(role=GraphMember.Role.VIEWER)
    with pytest.raises(NotPermitted, match="Only the person who started the suite run"):
        access.access_suite_for_cancel(other_user, suite)
    assert access.access_suite_for_cancel(user, suite) is suite
