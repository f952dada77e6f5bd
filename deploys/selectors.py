"""Every read of deploy targets and deployments, with its access rule.

A target is seen and used by its owner while private, by everyone when shared, and by staff
always; any other user is answered as if it did not exist. A graph's deployments are read by
whoever may read the graph (every signed-in user): they name the target, never its URL's secrets.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from deploys.errors import InvalidTarget, NoSuchTarget
from deploys.models import Deployment, DeployTarget
from graphs.models import Graph


def _usable_by(user: User) -> Q:
    if user.is_staff or user.is_superuser:
        return Q()
    return Q(visibility=DeployTarget.Visibility.SHARED) | Q(owner_id=user.pk)


def target_list(*, user: User) -> QuerySet[DeployTarget]:
    return DeployTarget.objects.select_related("owner").filter(_usable_by(user)).order_by("name")


def target_get(*, pk: int, user: User) -> DeployTarget:
    target = DeployTarget.objects.select_related("owner").filter(_usable_by(user), pk=pk).first()
    if target is None:
        raise NoSuchTarget(f"There is no deploy target {pk}.")
    return target


def target_find(*, ref: int | str, user: User) -> DeployTarget:
    """A target by id or name for a deploy; InvalidTarget (400) when there is none the user may use."""
    qs = DeployTarget.objects.filter(_usable_by(user))
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        target = qs.filter(pk=int(ref)).first()
    else:
        target = qs.filter(name=ref).first()
    if target is None:
        raise InvalidTarget(
            f"There is no deploy target {ref!r} you may use.",
            issues=[
                {
                    "code": "deploy.target-unknown",
                    "severity": "error",
                    "path": "target",
                    "message": f"no deploy target {ref!r}",
                }
            ],
        )
    return target


def deployment_list(*, graph: Graph) -> QuerySet[Deployment]:
    return (
        Deployment.objects.filter(graph=graph)
        .select_related("version", "created_by", "graph")
        .defer("content", "drift_content", "version__manifest", "version__layout", "version__issues")
        .order_by("-created_at", "-id")
    )


def deployment_get(*, graph: Graph, pk: int) -> Deployment:
    deployment = (
        Deployment.objects.select_related("graph", "version", "target").filter(graph=graph, pk=pk).first()
    )
    if deployment is None:
        raise NoSuchTarget(f"Graph {graph.name!r} has no deployment {pk}.")
    return deployment


def live_list(*, user: User) -> QuerySet[Deployment]:
    """What is live where, for every graph that is not archived: the pushed deployments."""
    return (
        Deployment.objects.filter(status=Deployment.Status.PUSHED, graph__archived_at__isnull=True)
        .select_related("version", "created_by", "graph")
        .defer("content", "drift_content", "version__manifest", "version__layout", "version__issues")
        .order_by("graph__name", "target_name")
    )
