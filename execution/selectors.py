"""Every read of the execution app, filtered by its access rules (``execution.access``): another
user's private environment, and the runs made in it, are answered as if they did not exist."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, QuerySet, Subquery

from config.params import int_param
from execution.access import environments_usable_by, runs_visible_to, unknown_environment
from execution.errors import NoSuchThing
from execution.eventschema import RUN_EVENTS
from execution.models import Environment, Run, RunEvent, RunStep
from graphs.models import Graph, GraphVersion


def environment_list(*, user: User) -> QuerySet[Environment]:
    """The environments ``user`` may use, by name."""
    return Environment.objects.select_related("owner").filter(environments_usable_by(user)).order_by("name")


def environment_get(*, pk: int, user: User) -> Environment:
    """The environment ``pk`` if ``user`` may use it; NoSuchThing (404) otherwise, as if there were
    none (another user's private environment is not disclosed)."""
    environment = (
        Environment.objects.select_related("owner").filter(environments_usable_by(user), pk=pk).first()
    )
    if environment is None:
        raise NoSuchThing(f"There is no environment {pk}.")
    return environment


def environment_find(*, ref: int | str, user: User) -> Environment:
    """An environment by id (a number) or by name, for a run that ``user`` starts.

    Raises InvalidInput (400, ``run.environment-unknown``) when there is none, and the same when it
    is another user's private environment (its existence is not disclosed).
    """
    usable = Environment.objects.filter(environments_usable_by(user))
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isascii() and ref.isdigit()):
        environment = usable.filter(pk=int_param(str(ref), "environment")).first()
    else:
        environment = usable.filter(name=ref).first()
    if environment is None:
        raise unknown_environment(ref)
    return environment


def _runs(user: User) -> QuerySet[Run]:
    return Run.objects.select_related("graph", "version", "environment", "created_by").filter(
        runs_visible_to(user)
    )


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
    """The graph's runs ``user`` may read (``runs_visible_to``), newest first; ``environment`` is an
    id (int) or a name (str): one ``user`` may not see lists nothing, as one that never was. List rows:
    the runs' bodies, headers and settings and their versions' manifests are not read (a page's
    cost must not grow with the graph's size or the runs' responses)."""
    qs = (
        Run.objects.select_related("graph", "version", "created_by")
        .defer(*_LIST_DEFERRED)
        .filter(runs_visible_to(user), graph=graph)
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
    """Run ``run_id`` if ``user`` may read it (``runs_visible_to``); NoSuchThing (404) otherwise,
    as if there were none. ``with_steps``: with its first steps and their counts
    (:func:`with_first_steps`)."""
    run = _runs(user).filter(pk=run_id).first()
    if run is None:
        raise NoSuchThing(f"There is no run {run_id}.")
    return with_first_steps(run) if with_steps else run


def with_first_steps(run: Run) -> Run:
    """``run`` with its first ``RUN_DETAIL_STEPS`` steps in trace order (``first_steps``) and how
    many steps ended each way (``step_counts``, outcome -> count): two queries however many steps
    the run stored (one when the first page holds them all)."""
    limit = max(0, settings.RUN_DETAIL_STEPS)
    first = list(run_steps(run_id=run.pk)[: limit + 1])
    if len(first) <= limit:
        counts: dict[str, int] = {}
        for step in first:
            counts[step.outcome] = counts.get(step.outcome, 0) + 1
    else:
        counts = step_counts(run_id=run.pk)
    run.first_steps = first[:limit]  # type: ignore[attr-defined]
    run.step_counts = counts  # type: ignore[attr-defined]
    return run


def run_steps(*, run_id: uuid.UUID | str) -> QuerySet[RunStep]:
    """A run's steps in trace order (attempt, then the order they began): what its detail embeds
    the first of, and ``/api/runs/{id}/steps/`` pages through."""
    return RunStep.objects.filter(run_id=run_id).order_by("attempt", "order", "id")


def step_counts(*, run_id: uuid.UUID | str) -> dict[str, int]:
    """How many of a run's steps ended each way (outcome -> count), in one grouped query."""
    rows = RunStep.objects.filter(run_id=run_id).values_list("outcome").annotate(n=Count("id")).order_by()
    return {outcome: n for outcome, n in rows}


def run_exists(*, run_id: uuid.UUID | str, user: User) -> bool:
    """Whether run ``run_id`` exists and ``user`` may read it."""
    return Run.objects.filter(runs_visible_to(user), pk=run_id).exists()


@dataclass(frozen=True)
class EventLog:
    """A page of a run's stored events after some ``seq``, in order: whether more are stored after
    it, how many the run has stored in all (``total``, the last ``seq``), and whether its terminal
    one is stored."""

    events: list[RunEvent]
    finished: bool
    more: bool = False
    total: int = 0


def run_event_log(
    *, run_id: uuid.UUID | str, user: User, after: int = 0, limit: int | None = None
) -> EventLog:
    """The stored events of a run after ``after``, at most ``limit`` of them (default
    ``RUN_EVENTS_PAGE_SIZE``, never more than ``RUN_EVENTS_PAGE_MAX``); NoSuchThing for no such run.
    Three queries, whatever the size of the run."""
    total = Run.objects.filter(pk=run_id).values_list("event_seq", flat=True).first()
    if total is None:
        raise NoSuchThing(f"There is no run {run_id}.")
    size = page_size(limit)
    stored = RunEvent.objects.filter(run_id=run_id)
    page = list(stored.filter(seq__gt=after).order_by("seq")[: size + 1])
    finished = stored.filter(type=RUN_EVENTS.terminal).exists()
    return EventLog(events=page[:size], finished=finished, more=len(page) > size, total=total)


def page_size(limit: int | None) -> int:
    """How many events a page of an event log holds when ``limit`` are asked for."""
    return max(1, min(limit or settings.RUN_EVENTS_PAGE_SIZE, settings.RUN_EVENTS_PAGE_MAX))


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
