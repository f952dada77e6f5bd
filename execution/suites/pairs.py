"""Starting the two suite runs a comparison of two versions needs (``execution.suites.selectors.suite_compare``)."""

from __future__ import annotations

from django.contrib.auth.models import User

from execution.models import Environment
from execution.services import runs
from execution.suites.models import SuiteRun
from execution.suites.services import suite_start
from graphs.models import Graph, GraphVersion


def suite_start_pair(
    *,
    graph: Graph,
    a: GraphVersion,
    b: GraphVersion,
    user: User,
    environment: Environment | None = None,
    releases: tuple[str | None, str | None] = (None, None),
) -> tuple[SuiteRun, SuiteRun]:
    """Start suite runs of every case on versions ``a`` and ``b`` with one seed (the same Splitter
    draws on both sides), for :func:`execution.suites.selectors.suite_compare`. ``releases`` runs
    either side as another KServe release than its environment's (the release as the changed
    variable: ``a`` and ``b`` may then be one version).

    The first start checks that ``user`` may have both in flight (``SUITE_MAX_IN_FLIGHT_PER_USER``,
    TooManyInFlight otherwise, nothing started); the second is not checked again, so that a pair
    is never left half started. (A start of the same user's that slips between the two may take
    the second's place: then that user has one suite run over the cap, never more.)"""
    seed = runs.new_seed()
    first = suite_start(
        graph=graph,
        version=a,
        user=user,
        environment=environment,
        seed=seed,
        slots=2,
        kserve_version=releases[0],
    )
    second = suite_start(
        graph=graph,
        version=b,
        user=user,
        environment=environment,
        seed=seed,
        slots=0,
        kserve_version=releases[1],
    )
    return first, second
