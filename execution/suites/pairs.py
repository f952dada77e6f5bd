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
) -> tuple[SuiteRun, SuiteRun]:
    """Start suite runs of every case on versions ``a`` and ``b`` with one seed (the same Splitter
    draws on both sides), for :func:`execution.suites.selectors.suite_compare`."""
    seed = runs.new_seed()
    first = suite_start(graph=graph, version=a, user=user, environment=environment, seed=seed)
    second = suite_start(graph=graph, version=b, user=user, environment=environment, seed=seed)
    return first, second
