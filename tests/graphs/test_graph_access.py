"""graphs.access: who may change, own and cancel on a graph, and the services that ask it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from graphs import access, services
from graphs.errors import NotPermitted
from graphs.models import Graph, GraphMember, GraphVersion


@pytest.fixture
def carol(db: Any) -> Any:
    return get_user_model().objects.create_user("carol", password="carol-password-1")


@pytest.mark.django_db
def test_the_owner_and_superusers_own_a_graph(graph: Graph, user: Any, other_user: Any) -> None:
    assert access.is_owner(graph, user)
    assert not access.is_owner(graph, other_user)
    assert not access.is_owner(graph, AnonymousUser())
    other_user.is_superuser = True
    assert access.is_owner(graph, other_user)
    assert access.access_graph_for_owner(other_user, graph) is graph


@pytest.mark.django_db
def test_editors_may_change_a_graph_and_viewers_may_not(graph: Graph, user: Any, other_user: Any) -> None:
    assert access.can_edit(graph, user)
    assert not access.can_edit(graph, other_user)
    assert not access.can_edit(graph, AnonymousUser())
    GraphMember.objects.create(graph=graph, user=other_user, role=GraphMember.Role.VIEWER)
    assert not access.can_edit(graph, other_user)
    with pytest.raises(NotPermitted, match="ask its owner to make you an editor"):
        access.access_graph_for_edit(other_user, graph)
    GraphMember.objects.filter(graph=graph, user=other_user).update(role=GraphMember.Role.EDITOR)
    assert access.access_graph_for_edit(other_user, graph) is graph
    with pytest.raises(NotPermitted, match=r"Only the owner of 'model-chainer' \(alice\)"):
        access.access_graph_for_owner(other_user, graph)


@pytest.mark.django_db
def test_who_may_cancel(graph: Graph, user: Any, other_user: Any, carol: Any) -> None:
    assert access.can_cancel(other_user, graph=graph, started_by_id=other_user.pk)
    assert not access.can_cancel(other_user, graph=graph, started_by_id=carol.pk)
    assert not access.can_cancel(other_user, graph=graph, started_by_id=None)
    assert access.can_cancel(user, graph=graph, started_by_id=carol.pk)  # the owner
    carol.is_staff = True
    assert access.can_cancel(carol, graph=graph, started_by_id=other_user.pk)


@pytest.mark.django_db
def test_every_changing_service_asks_first(
    graph: Graph, user: Any, other_user: Any, manifest: dict[str, Any]
) -> None:
    """A service refuses a user without the right on its own: no view has to ask before it."""
    with pytest.raises(NotPermitted):
        services.graph_version_create(
            graph=graph,
            manifest=manifest,
            layout={"moved": 1},
            author=other_user,
            message="",
            base_version=None,
        )
    with pytest.raises(NotPermitted):
        services.graph_version_rollback(graph=graph, number=1, author=other_user, base_version=None)
    with pytest.raises(NotPermitted):
        services.graph_archive(graph=graph, actor=other_user)
    with pytest.raises(NotPermitted):
        services.graph_restore(graph=graph, actor=other_user)
    with pytest.raises(NotPermitted):
        services.graph_member_add(graph=graph, user=other_user, actor=other_user)
    with pytest.raises(NotPermitted):
        services.graph_settings_update(graph=graph, actor=other_user, require_passing_tests=True)
    assert GraphVersion.objects.filter(graph=graph).count() == 1
    graph.refresh_from_db()
    assert graph.archived_at is None and not graph.require_passing_tests
    assert not GraphMember.objects.filter(graph=graph).exists()

    services.graph_member_add(graph=graph, user=other_user, actor=user)
    saved = services.graph_version_create(
        graph=graph, manifest=manifest, layout={"moved": 1}, author=other_user, message="", base_version=None
    )
    assert saved.created and saved.version.number == 2
    with pytest.raises(NotPermitted):  # an editor still does not own it
        services.graph_archive(graph=graph, actor=other_user)
    assert services.graph_archive(graph=graph, actor=user).archived_at is not None
