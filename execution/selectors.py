"""Every read of the execution app, with its access rule: any logged-in user may read
environments, runs and their events (graphs are readable by all; so are their test runs)."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet

from config.exceptions import BadRequest, NotFound
from execution.models import Environment, Run, RunStep
from graphs.models import Graph


def environment_list(*, user: User) -> QuerySet[Environment]:
    return Environment.objects.select_related("owner").order_by("name")


def environment_get(*, pk: int, user: User) -> Environment:
    environment = Environment.objects.select_related("owner").filter(pk=pk).first()
    if environment is None:
        raise NotFound(f"There is no environment {pk}.")
    return environment


def environment_find(*, ref: int | str, user: User) -> Environment:
    """An environment by id (a number) or by name."""
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        environment = Environment.objects.filter(pk=int(ref)).first()
    else:
        environment = Environment.objects.filter(name=ref).first()
    if environment is None:
        raise BadRequest(
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


def _runs() -> QuerySet[Run]:
    return Run.objects.select_related("graph", "version", "environment", "created_by")


def run_list(
    *,
    graph: Graph,
    user: User,
    version: str | None = None,
    status: str | None = None,
    environment: str | None = None,
) -> QuerySet[Run]:
    qs = _runs().filter(graph=graph)
    if version:
        if not version.isdigit():
            raise BadRequest(f"version must be a version number, got {version!r}.")
        qs = qs.filter(version__number=int(version))
    if status:
        if status not in Run.Status.values:
            raise BadRequest(f"status must be one of {', '.join(Run.Status.values)}, got {status!r}.")
        qs = qs.filter(status=status)
    if environment:
        qs = (
            qs.filter(environment_id=int(environment))
            if environment.isdigit()
            else qs.filter(environment_name=environment)
        )
    return qs.order_by("-created_at")


def run_get(*, run_id: uuid.UUID | str, user: User, with_steps: bool = True) -> Run:
    qs = _runs()
    if with_steps:
        qs = qs.prefetch_related(
            Prefetch("steps", queryset=RunStep.objects.order_by("attempt", "order", "id"))
        )
    run = qs.filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"There is no run {run_id}.")
    return run


def run_exists(*, run_id: uuid.UUID | str, user: User) -> bool:
    return Run.objects.filter(pk=run_id).exists()
