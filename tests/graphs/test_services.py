"""The write path of the graph store: numbering, idempotency and races."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest
from django.db import connection

from config.exceptions import BadRequest, Conflict
from graphs import access, services
from graphs.errors import NotDeployable, StaleVersion
from graphs.models import Graph, GraphVersion


@pytest.mark.django_db
def test_versions_are_numbered_per_graph(user: Any, manifest: dict) -> None:
    a = services.graph_create(owner=user, manifest=manifest)
    b = services.graph_create(owner=user, name="other")
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    result = services.graph_version_create(
        graph=a, manifest=changed, layout={}, author=user, message="", base_version=1
    )
    assert result.created and result.version.number == 2
    assert b.latest_version is not None and b.latest_version.number == 1


@pytest.mark.django_db
def test_an_identical_save_from_a_stale_base_returns_the_latest(user: Any, manifest: dict) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    services.graph_version_create(
        graph=graph, manifest=changed, layout={}, author=user, message="", base_version=1
    )
    again = services.graph_version_create(
        graph=graph, manifest=changed, layout={}, author=user, message="", base_version=1
    )
    assert not again.created and again.version.number == 2


@pytest.mark.django_db
def test_a_layout_change_alone_is_a_new_version_with_the_same_hash(user: Any, manifest: dict) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    result = services.graph_version_create(
        graph=graph,
        manifest=manifest,
        layout={"nodes": {"root": {"x": 5}}},
        author=user,
        message="moved",
        base_version=1,
    )
    assert result.created
    assert result.version.spec_hash == GraphVersion.objects.get(number=1).spec_hash


@pytest.mark.django_db
def test_a_save_to_an_archived_graph_is_refused(user: Any, manifest: dict) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    services.graph_archive(graph=graph, actor=user)
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    with pytest.raises(BadRequest):
        services.graph_version_create(
            graph=graph, manifest=changed, layout={}, author=user, message="", base_version=1
        )
    assert GraphVersion.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_saves_racing_from_the_same_base_one_wins_one_conflicts(user: Any, manifest: dict) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    barrier = threading.Barrier(2)
    outcomes: list[Any] = []

    def save(step_name: str) -> None:
        edited = copy.deepcopy(manifest)
        edited["spec"]["nodes"]["root"]["steps"][0]["name"] = step_name
        barrier.wait()
        try:
            result = services.graph_version_create(
                graph=Graph.objects.get(pk=graph.pk),
                manifest=edited,
                layout={},
                author=user,
                message=step_name,
                base_version=1,
            )
            outcomes.append(("saved", result.version.number, step_name))
        except Conflict as exc:
            outcomes.append(("conflict", exc.extra["latest_version"], step_name))
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(n,)) for n in ("mine", "theirs")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    kinds = sorted(o[0] for o in outcomes)
    assert kinds == ["conflict", "saved"], outcomes
    winner = next(o for o in outcomes if o[0] == "saved")
    assert winner[1] == 2
    assert list(
        GraphVersion.objects.filter(graph=graph).values_list("number", flat=True).order_by("number")
    ) == [1, 2]
    assert GraphVersion.objects.get(graph=graph, number=2).message == winner[2]


@pytest.mark.django_db
def test_a_save_from_a_stale_base_raises_stale_version_with_the_latest_and_the_diff(
    user: Any, manifest: dict
) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    theirs = copy.deepcopy(manifest)
    theirs["spec"]["nodes"]["root"]["steps"].pop()
    services.graph_version_create(
        graph=graph, manifest=theirs, layout={}, author=user, message="", base_version=1
    )
    mine = copy.deepcopy(manifest)
    mine["spec"]["nodes"]["root"]["steps"][0]["dependency"] = "Hard"
    with pytest.raises(StaleVersion) as stale:
        services.graph_version_create(
            graph=graph, manifest=mine, layout={}, author=user, message="", base_version=1
        )
    assert stale.value.latest is not None and stale.value.latest.number == 2
    assert stale.value.base_version == 1
    assert stale.value.changes is not None and stale.value.changes["nodes"]["changed"][0]["node"] == "root"
    with pytest.raises(StaleVersion) as missing:
        services.graph_version_create(
            graph=graph, manifest=mine, layout={}, author=user, message="", base_version=9
        )
    assert missing.value.changes is None
    assert missing.value.detail == "Graph 'model-chainer' has no version 9; the latest is 2."
    assert GraphVersion.objects.count() == 2


@pytest.mark.django_db
def test_only_the_owner_or_a_superuser_is_the_owner(user: Any, other_user: Any, manifest: dict) -> None:
    graph = services.graph_create(owner=user, manifest=manifest)
    assert access.is_owner(graph, user)
    assert not access.is_owner(graph, other_user)
    other_user.is_superuser = True
    assert access.is_owner(graph, other_user)


@pytest.mark.django_db
def test_an_invalid_version_is_neither_exported_nor_run(user: Any, manifest: dict) -> None:
    manifest["spec"]["nodes"]["root"]["routerType"] = "Chain"
    graph = services.graph_create(owner=user, manifest=manifest)
    version = graph.latest_version
    assert version is not None and not version.valid
    with pytest.raises(NotDeployable, match="fix them and save before exporting"):
        services.version_export(graph=graph, version=version, fmt="yaml")
    with pytest.raises(NotDeployable, match="fix them and save before running it") as refused:
        services.ensure_deployable(graph, version, before="running it")
    assert refused.value.issues == version.issues
