"""Every read of load tests: one, a graph's list, and the comparison of two.

A load test is readable by whoever may read a run in its environment
(``execution.selectors.runs_visible_to``: a shared environment's by every signed-in user, a private
one's by its owner, one whose environment was deleted by its starter; staff read all); to anybody
else it, its events and its comparisons do not exist (404).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet

from config.exceptions import BadRequest, NotFound
from execution.engine.load import compare_summaries
from execution.loadtests.models import LoadTest
from execution.selectors import runs_visible_to
from graphs.models import Graph


def _loads(user: User) -> QuerySet[LoadTest]:
    return LoadTest.objects.select_related("graph", "version", "created_by").filter(runs_visible_to(user))


def load_get(*, load_id: uuid.UUID | str, user: User) -> LoadTest:
    """Load test ``load_id`` if ``user`` may read it; NotFound (404) otherwise, as if there were none."""
    load = _loads(user).filter(pk=load_id).first()
    if load is None:
        raise NotFound(f"There is no load test {load_id}.")
    return load


def load_exists(*, load_id: uuid.UUID | str, user: User) -> bool:
    return LoadTest.objects.filter(runs_visible_to(user), pk=load_id).exists()


def load_list(*, graph: Graph, user: User, version: int | None = None) -> QuerySet[LoadTest]:
    """The graph's load tests ``user`` may read, newest first (``version``: one version's)."""
    qs = _loads(user).filter(graph=graph)
    if version is not None:
        qs = qs.filter(version__number=version)
    return qs.order_by("-created_at")


def load_compare(*, a: uuid.UUID, b: uuid.UUID, user: User) -> tuple[LoadTest, LoadTest, dict[str, Any]]:
    """Load tests ``a`` and ``b`` of one graph and their summaries side by side, step by step
    (``execution.engine.load.compare_summaries``); BadRequest (400) when they test two graphs."""
    first, second = load_get(load_id=a, user=user), load_get(load_id=b, user=user)
    if first.graph_id != second.graph_id:
        raise BadRequest(
            f"Load tests a and b test two graphs ({first.graph.name!r}, {second.graph.name!r}); "
            "compare load tests of one graph."
        )
    return first, second, compare_summaries(first.summary or {}, second.summary or {})
