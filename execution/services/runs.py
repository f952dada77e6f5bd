"""Starting runs (new, rerun) and cancelling them. A new run is queued in one transaction and its
task is sent once that commits."""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from execution import bus, events
from execution import selectors as execution_selectors
from execution.errors import InvalidInput, NotPermitted, StateConflict
from execution.models import Environment, Run
from execution.services import endings, environments, run_request, worker
from execution.tasks import runs as run_tasks
from graphs import services as graph_services
from graphs.models import Graph, GraphVersion

logger = logging.getLogger(__name__)


def new_seed() -> int:
    return random.SystemRandom().randrange(2**53)  # fits a JSON number exactly


def run_create(
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    payload: Any,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    environment: Environment | None = None,
    seed: int | None = None,
    idempotency_key: str | None = None,
    rerun_of: Run | None = None,
    secrets: Mapping[str, str] | None = None,
    claim_here: bool = False,
) -> tuple[Run, bool]:
    """Queue a run of ``version`` and enqueue its task once the transaction commits.

    Returns ``(run, created)``. With an ``idempotency_key`` already used by ``user``, returns that
    run (created=False) if it is for the same graph and request, else raises StateConflict (409). An
    invalid version raises NotDeployable (422) with its issues; nothing is stored then.
    Without ``environment`` the run goes to the system's default (created when missing); an
    environment ``user`` may not use (another user's private one) raises NotPermitted (403).
    ``secrets`` (rerun) are real values for headers that ``headers`` carries redacted.
    ``claim_here``: no task is sent; the run is stored already claimed for the calling worker thread
    (running, attempt 1, its ``run.queued`` and ``run.started`` events written together), which must
    run it right after the commit (``worker.run_claimed``; a suite run's next case:
    ``execution.suites.services``). Should that thread die first, the run reaper sees a silent run.
    """
    graph_services.ensure_deployable(graph, version, before="running it")
    if environment is None:
        environment, _ = environments.ensure_local_environment()  # the system's default: shared with everyone
    execution_selectors.ensure_can_use_environment(environment, user)
    body, content_type = run_request.payload_text(payload, content_type)
    clean = run_request.check_headers(headers or {})
    stored_headers, new_secrets = run_request.split_secret_headers(clean, environment.secret_headers or ())
    secrets = {**new_secrets, **(secrets or {})}  # real values given (a rerun) win over redacted ones
    if idempotency_key:
        existing = _idempotent_replay(user, idempotency_key, graph, body)
        if existing is not None:
            return existing, False
    now = timezone.now()
    claimed: dict[str, Any] = (
        {"status": Run.Status.RUNNING, "attempt": 1, "started_at": now, "heartbeat_at": now}
        if claim_here
        else {}
    )
    try:
        with transaction.atomic():
            run = Run.objects.create(
                graph=graph,
                version=version,
                environment=environment,
                environment_name=environment.name,
                config=environments.environment_config(environment),
                request_body=body,
                request_content_type=content_type,
                request_headers=stored_headers,
                secret_header_names=sorted(secrets),
                seed=seed if seed is not None else new_seed(),
                created_by=user,
                idempotency_key=idempotency_key or None,
                rerun_of=rerun_of,
                enqueued_at=now,
                **claimed,
            )
            queued = {
                "graph": graph.name,
                "version": version.number,
                "environment": environment.name,
                "seed": run.seed,
                "rerun_of": str(rerun_of.pk) if rerun_of else None,
            }
            items = [("run.queued", queued)]
            if claim_here:
                items.append(("run.started", worker.started_data(run.attempt)))
            events.emit_many(run.pk, items)
            if secrets and not bus.store_secret_headers(run.pk, dict(secrets)):
                logger.warning("run %s: secret headers could not be stored and will not be sent", run.pk)
            if not claim_here:
                transaction.on_commit(lambda: run_tasks.enqueue(run))
    except IntegrityError:
        if idempotency_key:
            existing = _idempotent_replay(user, idempotency_key, graph, body)
            if existing is not None:
                return existing, False
        raise
    return run, True


def _idempotent_replay(user: User, key: str, graph: Graph, body: str) -> Run | None:
    existing = Run.objects.filter(created_by=user, idempotency_key=key).first()
    if existing is None:
        return None
    if existing.graph_id != graph.pk or existing.request_body != body:
        raise StateConflict(
            f"The Idempotency-Key {key!r} was already used for a different request "
            f"(run {existing.pk}); use a new key for a new run.",
            extra={"run": str(existing.pk)},
        )
    return existing


def run_rerun(*, run: Run, user: User) -> Run:
    """A new run with the same version, request, environment and seed as ``run``.

    The secret headers travel along only for the run's own creator (and only while Redis still
    holds them): nobody else may replay someone's credentials.
    """
    secrets: dict[str, str] = {}
    if run.secret_header_names and run.created_by_id == user.pk:
        secrets = bus.load_secret_headers(run.pk) or {}
    environment = run.environment
    if environment is None:
        raise InvalidInput(
            f"The environment {run.environment_name!r} of run {run.pk} was deleted; "
            "start a new run in another environment."
        )
    new, _ = run_create(
        graph=run.graph,
        version=run.version,
        user=user,
        payload=run.request_body,
        content_type=run.request_content_type,
        headers=_without(run.request_headers, secrets, run.secret_header_names or []),
        environment=environment,
        seed=run.seed,
        rerun_of=run,
        secrets=secrets,
    )
    return new


def _without(headers: Mapping[str, str], secrets: Mapping[str, str], redacted: list[str]) -> dict[str, str]:
    """The stored headers, minus the ``redacted`` ones whose real value is not carried along."""
    return {k: v for k, v in headers.items() if k not in redacted or k in secrets}


def can_cancel(run: Run, user: User) -> bool:
    return (
        run.created_by_id == user.pk
        or getattr(user, "is_staff", False)
        or graph_services.can_write(run.graph, user)
    )


def run_cancel(*, run: Run, user: User) -> Run:
    """Cancel a run: a queued one at once; a running one by flagging it and telling its worker.

    Idempotent: cancelling a cancelled or finished run changes nothing and returns it.
    """
    if not can_cancel(run, user):
        raise NotPermitted(
            "Only the person who started the run, the graph's owner or editors, or staff may cancel it."
        )
    now = timezone.now()
    with transaction.atomic():
        if Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
            status=Run.Status.CANCELLED,
            cancel_requested=True,
            finished_at=now,
            error="Cancelled before it started.",
        ):
            endings.emit_ended_without_response(
                run, Run.Status.CANCELLED, "Cancelled before it started.", by=user.get_username()
            )
        elif Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, cancel_requested=False).update(
            cancel_requested=True
        ):
            events.emit(run.pk, "run.cancel_requested", {"by": user.get_username()})
            transaction.on_commit(lambda: bus.publish_cancel(run.pk))
    run.refresh_from_db()
    return run
