"""Who may do what to a graph: the one place the graph store's access rules are written.

Every signed-in user may read and run every graph. Saving a version, rolling back, changing the
settings and the test cases, and forcing an export past the test gate take an editor: the owner,
a superuser or a member with the ``editor`` role (a ``viewer`` may not). Archiving, restoring and
managing members take the owner (or a superuser).

The ``can_*`` functions answer the question; the ``access_graph_for_*`` functions are what a
service calls before it changes anything: they raise ``NotPermitted`` (403) with a message that
says who may. Views never decide who may do what: they call services, and services call these.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from graphs.errors import NotPermitted
from graphs.models import Graph, GraphMember

AnyUser = User | AnonymousUser


def is_owner(graph: Graph, user: AnyUser) -> bool:
    """Whether ``user`` owns ``graph`` or is a superuser: who may archive, restore and share it."""
    return graph.owner_id == user.pk or bool(getattr(user, "is_superuser", False))


def can_edit(graph: Graph, user: AnyUser) -> bool:
    """Whether ``user`` may change ``graph``: save versions, roll back, change its settings and test
    cases, force an export. Its owner, a superuser, or a member with the ``editor`` role."""
    if is_owner(graph, user):
        return True
    if user.pk is None:
        return False
    return GraphMember.objects.filter(graph=graph, user_id=user.pk, role=GraphMember.Role.EDITOR).exists()


def access_graph_for_owner(user: AnyUser, graph: Graph, detail: str | None = None) -> Graph:
    """``graph`` when ``user`` owns it; NotPermitted (403) otherwise, ``detail`` saying what they
    may not do (default: who the owner is)."""
    if not is_owner(graph, user):
        raise NotPermitted(
            detail or f"Only the owner of {graph.name!r} ({graph.owner.get_username()}) may do that."
        )
    return graph


def access_graph_for_edit(user: AnyUser, graph: Graph, detail: str | None = None) -> Graph:
    """``graph`` when ``user`` may change it (:func:`can_edit`); NotPermitted (403) otherwise."""
    if not can_edit(graph, user):
        raise NotPermitted(
            detail
            or f"You may read and run graph {graph.name!r} but not change it: ask its owner to make you an editor."
        )
    return graph


def can_cancel(user: AnyUser, *, graph: Graph, started_by_id: int | None) -> bool:
    """Whether ``user`` may cancel something started on ``graph`` by user ``started_by_id`` (a run,
    a suite run): whoever started it, staff, and whoever may change the graph."""
    return (
        (started_by_id is not None and started_by_id == user.pk)
        or bool(getattr(user, "is_staff", False))
        or can_edit(graph, user)
    )
