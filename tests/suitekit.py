"""A finished suite run made directly in the database, for the tests of what is read from suite
verdicts (green state, list query counts) without running any case."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from execution.services.environments import ensure_local_environment
from execution.suites.models import SuiteRun
from execution.suites.services import current_cases_digest
from graphs.models import Graph


def judged(
    graph: Graph, number: int, status: str, minutes_ago: int, *, user: Any, digest: str | None = None
) -> SuiteRun:
    """Version ``number`` of ``graph`` judged ``status`` by one case ``minutes_ago`` minutes ago, on
    the graph's current cases unless another ``digest`` is given, in the system's default
    environment (where the export gate trusts a verdict of the graph's owner or editors)."""
    finished = timezone.now() - timedelta(minutes=minutes_ago)
    local, _ = ensure_local_environment()
    suite = SuiteRun.objects.create(
        environment=local,
        environment_name=local.name,
        graph=graph,
        version=graph.versions.get(number=number),
        status=status,
        concurrency=1,
        seed=1,
        cases_digest=digest if digest is not None else current_cases_digest(graph),
        created_by=user,
        finished_at=finished,
        passed=1 if status == "passed" else 0,
        failed=1 if status == "failed" else 0,
        total=1,
    )
    SuiteRun.objects.filter(pk=suite.pk).update(created_at=finished)
    return suite
