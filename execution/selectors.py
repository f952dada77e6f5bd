"""Every read of the execution app, with its access rules.

Runs and their events: any logged-in user may read them (graphs are readable by all; so are their
test runs). Environments: a user sees and uses the shared ones (the system default among them),
their own private ones, and staff all of them (``environment_usable``); any other environment is
answered as if it did not exist when read, and refused (403) when a run names it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Prefetch, Q, QuerySet, Subquery

from config.params import int_param
from execution.errors import InvalidInput, NoSuchThing, NotPermitted
from execution.eventschema import RUN_EVENTS
from execution.models import Environment, Run, RunEvent, RunStep
from graphs.models import Graph, GraphVersion


def _usable_by(user: User) -> Q:
    """The environments ``user`` may see and use: the one access rule, as a filter."""
    if user.is_staff or user.is_superuser:
        return Q()
    return Q(visibility=Environment.Visibility.SHARED) | Q(owner_id=user.pk)


def environment_usable(environment: Environment, user: User) -> bool:
    """Whether ``user`` may see ``environment`` and start runs in it (``_usable_by`` for one row)."""
    return (
        user.is_staff
        or user.is_superuser
        or environment.visibility == Environment.Visibility.SHARED
        or (environment.owner_id is not None and environment.owner_id == user.pk)
    )


def environment_list(*, user: User) -> QuerySet[Environment]:
    """The environments ``user`` may use, by name."""
    return Environment.objects.select_related("owner").filter(_usable_by(user)).order_by("name")


def environment_get(*, pk: int, user: User) -> Environment:
    """The environment ``pk`` if ``user`` may use it; NoSuchThing (404) otherwise, as if there were
    none (another user's private environment is not disclosed)."""
    environment = Environment.objects.select_related("owner").filter(_usable_by(user), pk=pk).first()
    if environment is None:
        raise NoSuchThing(f"There is no environment {pk}.")
    return environment


def environment_find(*, ref: int | str, user: User) -> Environment:
    """An environment by id (a number) or by name, for a run that ``user`` starts.

    Raises InvalidInput (400, ``run.environment-unknown``) when there is none and NotPermitted (403,
    ``run.environment-forbidden``) when it is another user's private environment.
    """
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isascii() and ref.isdigit()):
        environment = Environment.objects.filter(pk=int_param(str(ref), "environment")).first()
    else:
        environment = Environment.objects.filter(name=ref).first()
    if environment is not None:
        ensure_can_use_environment(environment, user)
    if environment is None:
        raise InvalidInput(
            f"There is no environment {ref!r}.",
            issues=[
                {
                    "code": "run.environment-unknown",
                    "severity": "error",
                    "path": "environment",
                    "message": f"no environment {ref!r}",
                }
            ],
        )
    return environment


def ensure_can_use_environment(environment: Environment, user: User) -> None:
    """Raise NotPermitted (403) unless ``user`` may start runs in ``environment``."""
    if not environment_usable(environment, user):
        raise NotPermitted(
            f"You may not use environment {environment.name!r}: it is private to its owner. "
            "Use a shared environment or one of your own.",
            issues=[
                {
                    "code": "run.environment-forbidden",
                    "severity": "error",
                    "path": "environment",
                    "message": f"environment {environment.name!r} is private to its owner",
                }
            ],
        )


def _runs() -> QuerySet[Run]:
    return Run.objects.select_related("graph", "version", "environment", "created_by")


_LIST_DEFERRED = (
    "request_body",
    "request_headers",
    "secret_header_names",
    "response_body",
    "config",
    "version__manifest",
    "version__layout",
    "version__issues",
)


def run_list(
    *,
    graph: Graph,
    user: User,
    version: int | None = None,
    status: str | None = None,
    environment: int | str | None = None,
) -> QuerySet[Run]:
    """The graph's runs, newest first; ``environment`` is an id (int) or a name (str). List rows:
    the runs' bodies, headers and settings and their versions' manifests are not read (a page's
    cost must not grow with the graph's size or the runs' responses)."""
    qs = (
        Run.objects.select_related("graph", "version", "created_by")
        .defer(*_LIST_DEFERRED)
        .filter(graph=graph)
    )
    if version is not None:  # by the version's id, so that the (version, created_at) index serves
        number = GraphVersion.objects.filter(graph=graph, number=version).values("pk")[:1]
        qs = qs.filter(version_id=Subquery(number))
    if status:
        qs = qs.filter(status=status)
    if isinstance(environment, int):
        qs = qs.filter(environment_id=environment)
    elif environment:
        qs = qs.filter(environment_name=environment)
    return qs.order_by("-created_at")


def run_get(*, run_id: uuid.UUID | str, user: User, with_steps: bool = True) -> Run:
    qs = _runs()
    if with_steps:
        qs = qs.prefetch_related(
            Prefetch("steps", queryset=RunStep.objects.order_by("attempt", "order", "id"))
        )
    run = qs.filter(pk=run_id).first()
    if run is None:
        raise NoSuchThing(f"There is no run {run_id}.")
    return run


def run_exists(*, run_id: uuid.UUID | str, user: User) -> bool:
    return Run.objects.filter(pk=run_id).exists()


@dataclass(frozen=True)
class EventLog:
    """A run's stored events after some ``seq``, in order, and whether its terminal one is stored."""

    events: list[RunEvent]
    finished: bool


def run_event_log(*, run_id: uuid.UUID | str, user: User, after: int = 0) -> EventLog:
    """The stored events of a run after ``after`` (NoSuchThing for no such run)."""
    if not run_exists(run_id=run_id, user=user):
        raise NoSuchThing(f"There is no run {run_id}.")
    stored = RunEvent.objects.filter(run_id=run_id)
    return EventLog(
        events=list(stored.filter(seq__gt=after).order_by("seq")),
        finished=stored.filter(type=RUN_EVENTS.terminal).exists(),
    )


# --- the catalog of services ----------------------------------------------------------------------

# The most names the catalog answers (the most used first): a palette lists them all.
SERVICE_CATALOG_LIMIT = 500


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    graph_count: int
    environments: list[str]


@dataclass(frozen=True)
class ServiceCatalog:
    services: list[CatalogEntry]
    truncated: bool


def service_catalog(*, user: User, limit: int = SERVICE_CATALOG_LIMIT) -> ServiceCatalog:
    """The serviceNames the studio knows, for ``user``'s palette: those the latest versions of the
    graphs that are not archived call (with how many graphs call each), and those mapped in the
    service maps of the environments ``user`` may use (with which environments map each).

    The most used first (then by name), at most ``limit`` of them. Two queries, whatever the number
    of graphs: the latest versions' ``service_names`` summary column, never their manifests.
    """
    graph_counts: dict[str, int] = {}
    called = Graph.objects.filter(archived_at__isnull=True, latest_version__isnull=False).values_list(
        "latest_version__service_names", flat=True
    )
    for names in called:
        for name in names if isinstance(names, list) else ():
            if isinstance(name, str) and name:
                graph_counts[name] = graph_counts.get(name, 0) + 1
    mapped: dict[str, list[str]] = {}
    for env_name, service_urls in environment_list(user=user).values_list("name", "service_urls"):
        for name in service_urls if isinstance(service_urls, dict) else ():
            if isinstance(name, str) and name:
                mapped.setdefault(name, []).append(env_name)
    names = sorted(graph_counts.keys() | mapped.keys(), key=lambda name: (-graph_counts.get(name, 0), name))
    services = [CatalogEntry(name, graph_counts.get(name, 0), mapped.get(name, [])) for name in names[:limit]]
    return ServiceCatalog(services=services, truncated=len(names) > limit)
