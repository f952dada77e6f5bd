"""Every read of the graph store, with its access rule: any logged-in user may read any graph."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from config.params import LATEST, VersionRef
from graphs.errors import NoSuchGraph
from graphs.models import AuditEvent, Graph, GraphMember, GraphVersion


def graph_list(
    *, user: User, search: str = "", archived: bool = False, mine: bool = False
) -> QuerySet[Graph]:
    """Graphs for the list, by name. The latest version's manifest, layout and issues are not
    loaded (a list entry carries its summary columns only)."""
    qs = (
        Graph.objects.select_related("owner", "latest_version", "latest_version__author")
        .defer("latest_version__manifest", "latest_version__layout", "latest_version__issues")
        .prefetch_related("members__user")
    )
    qs = qs.filter(archived_at__isnull=not archived)
    if search:
        qs = qs.filter(Q(name__icontains=search) | Q(description__icontains=search))
    if mine:
        qs = qs.filter(Q(owner=user) | Q(members__user=user)).distinct()
    return qs.order_by("name")


def graph_get(*, name: str, user: User, latest_manifest: bool = True) -> Graph:
    """The graph called ``name``, archived or not; NoSuchGraph (404) when there is none.

    ``latest_manifest=False`` leaves the latest version's manifest and layout unread, for a
    request that only needs the graph (a list of its versions or runs: its cost must not grow with
    the graph's size). The latest version's parent is read for its number only.
    """
    qs = Graph.objects.select_related(
        "owner", "latest_version", "latest_version__author", "latest_version__parent"
    ).defer(
        "latest_version__parent__manifest", "latest_version__parent__layout", "latest_version__parent__issues"
    )
    if not latest_manifest:
        qs = qs.defer("latest_version__manifest", "latest_version__layout")
    graph = qs.prefetch_related("members__user").filter(name=name).first()
    if graph is None:
        raise NoSuchGraph(f"There is no graph named {name!r}.")
    return graph


def version_list(*, graph: Graph) -> QuerySet[GraphVersion]:
    """The graph's versions, newest first, as history rows: neither their manifests and layouts
    nor their parents' are loaded (a row's cost must not grow with the graph's size)."""
    return (
        GraphVersion.objects.filter(graph=graph)
        .select_related("author", "parent")
        .defer("manifest", "layout", "parent__manifest", "parent__layout", "parent__issues")
        .order_by("-number")
    )


def version_number(*, graph: Graph, number: VersionRef) -> int:
    """``number`` itself, or for ``latest`` the graph's newest version number; NoSuchGraph (404)
    for ``latest`` of a graph without versions."""
    if number != LATEST:
        return int(number)
    latest = (
        GraphVersion.objects.filter(graph=graph).order_by("-number").values_list("number", flat=True).first()
    )
    if latest is None:
        raise NoSuchGraph(f"Graph {graph.name!r} has no versions yet.")
    return latest


def version_get(*, graph: Graph, number: VersionRef) -> GraphVersion:
    """Version ``number`` (or ``latest``) of ``graph``; NoSuchGraph (404) when there is none."""
    number = version_number(graph=graph, number=number)
    version = (
        GraphVersion.objects.filter(graph=graph, number=number).select_related("author", "parent").first()
    )
    if version is None:
        latest = graph.latest_version.number if graph.latest_version else 0
        raise NoSuchGraph(f"Graph {graph.name!r} has no version {number} (the latest is {latest}).")
    return version


def member_list(*, graph: Graph) -> QuerySet[GraphMember]:
    """The graph's members with their users, in the order they were added."""
    return GraphMember.objects.filter(graph=graph).select_related("user").order_by("pk")


def user_by_name(username: str) -> User | None:
    """The user called ``username``, or None: whom a graph is shared with."""
    return User.objects.filter(username=username).first()


def audit_list(*, graph: Graph | None = None) -> QuerySet[AuditEvent]:
    qs = AuditEvent.objects.select_related("actor")
    if graph is not None:
        qs = qs.filter(graph_name=graph.name)
    return qs
