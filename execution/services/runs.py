"""Starting runs (new, rerun) and cancelling them. A new run is queued in one transaction and its
task is sent once that commits."""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from execution import bus, events
from execution.access import access_environment_for_run, access_run_for_cancel
from execution.errors import InvalidInput, StateConflict
from execution.models import Environment, Run
from execution.services import dispatch, endings, environments, fairshare, run_request, worker
from graphs import services as graph_services
from graphs.models import Graph, GraphVersion

logger = logging.getLogger(__name__)


def new_seed() -> int:
    return random.SystemRandom().randrange(2**53)  # fits a JSON number exactly


@dataclass(frozen=True)
class _Request:
    """What a new run is stored with, checked: the environment it goes to, its body, headers (the
    secret ones redacted) and the secrets' real values."""

    environment: Environment
    body: str
    content_type: str
    headers: dict[str, str]
    secrets: dict[str, str]


def _checked_request(
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    payload: Any,
    content_type: str | None,
    headers: Mapping[str, str] | None,
    environment: Environment | None,
    secrets: Mapping[str, str] | None = None,
) -> _Request:
    """Refuse what may not run (NotDeployable 422, an environment ``user`` may not use 400, bad
    headers or payload 400) before anything is written; without ``environment``, the system's
    default (created when missing)."""
    graph_services.ensure_deployable(graph, version, before="running it")
    if environment is None:
        environment, _ = environments.ensure_local_environment()  # the system's default: shared with everyone
    access_environment_for_run(user, environment)
    body, content_type = run_request.payload_text(payload, content_type)
    clean = run_request.check_headers(headers or {})
    stored_headers, new_secrets = run_request.split_secret_headers(clean, environment.secret_headers or ())
    # Real values given (a rerun) win over redacted ones.
    return _Request(environment, body, content_type, stored_headers, {**new_secrets, **(secrets or {})})


def _store(
    request: _Request,
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    seed: int | None,
    now: datetime,
    idempotency_key: str | None = None,
    rerun_of: Run | None = None,
    kserve_version: str | None = None,
    **fields: Any,
) -> tuple[Run, dict[str, Any]]:
    """Insert the run (in the caller's transaction) with its secrets; returns it and the data of
    its ``run.queued`` event; ``kserve_version`` runs it as another KServe release than its
    environment's (a suite run comparing releases)."""
    environment = request.environment
    run = Run.objects.create(
        graph=graph,
        version=version,
        environment=environment,
        environment_name=environment.name,
        config=environments.environment_config(environment, kserve_version=kserve_version),
        request_body=request.body,
        request_content_type=request.content_type,
        request_headers=request.headers,
        secret_header_names=sorted(request.secrets),
        seed=seed if seed is not None else new_seed(),
        created_by=user,
        idempotency_key=idempotency_key or None,
        rerun_of=rerun_of,
        enqueued_at=now,
        **fields,
    )
    if request.secrets and not bus.store_secret_headers(run.pk, dict(request.secrets)):
        logger.warning("run %s: secret headers could not be stored and will not be sent", run.pk)
    queued = {
        "graph": graph.name,
        "version": version.number,
        "environment": environment.name,
        "seed": run.seed,
        "rerun_of": str(rerun_of.pk) if rerun_of else None,
        "kserve_version": run.config["kserve_version"],
    }
    return run, queued


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
    capped: bool = False,
    kserve_version: str | None = None,
) -> tuple[Run, bool]:
    """Queue a run of ``version`` and enqueue its task once the transaction commits.

    Returns ``(run, created)``. With an ``idempotency_key`` already used by ``user``, returns that
    run (created=False) if it is for the same graph and request, else raises StateConflict (409). An
    invalid version raises NotDeployable (422) with its issues; nothing is stored then.
    Without ``environment`` the run goes to the system's default (created when missing); an
    environment ``user`` may not use (another user's private one) raises InvalidInput (400, the
    answer for an unknown environment: its existence is not disclosed).
    ``secrets`` (rerun) are real values for headers that ``headers`` carries redacted.
    ``capped`` (a run a user starts through the API, a rerun): refuse with TooManyInFlight (429)
    when ``user`` has ``RUN_MAX_IN_FLIGHT_PER_USER`` runs queued or running already, checked in the
    transaction that stores this one. A suite run's cases are not capped here: the suite runs have
    their own cap, ``SUITE_MAX_IN_FLIGHT_PER_USER``.
    """
    request = _checked_request(
        graph=graph,
        version=version,
        user=user,
        payload=payload,
        content_type=content_type,
        headers=headers,
        environment=environment,
        secrets=secrets,
    )
    if idempotency_key:
        existing = _idempotent_replay(user, idempotency_key, graph, request.body)
        if existing is not None:
            return existing, False
    try:
        with transaction.atomic():
            if capped:
                fairshare.ensure_run_slot(user)
            run, queued = _store(
                request,
                graph=graph,
                version=version,
                user=user,
                seed=seed,
                now=timezone.now(),
                idempotency_key=idempotency_key,
                kserve_version=kserve_version,
                rerun_of=rerun_of,
            )
            events.emit_many(run.pk, [("run.queued", queued)])
            transaction.on_commit(lambda: dispatch.enqueue(run))
    except IntegrityError:
        if idempotency_key:
            existing = _idempotent_replay(user, idempotency_key, graph, request.body)
            if existing is not None:
                return existing, False
        raise
    return run, True


def run_create_claimed(
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    payload: Any,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    environment: Environment | None = None,
    seed: int | None = None,
    kserve_version: str | None = None,
) -> Run:
    """Store a run already claimed for the calling worker thread, which must run it right after
    the caller's transaction commits (``worker.run_claimed``): no task is sent. It is stored
    running, attempt 1, its ``run.queued`` and ``run.started`` events written together. Should
    that thread die first, the run reaper sees a silent run. A suite run's next case
    (``execution.suites.services``); refused as :func:`run_create` refuses, never capped (suite
    runs have their own cap)."""
    request = _checked_request(
        graph=graph,
        version=version,
        user=user,
        payload=payload,
        content_type=content_type,
        headers=headers,
        environment=environment,
    )
    now = timezone.now()
    with transaction.atomic():
        run, queued = _store(
            request,
            graph=graph,
            version=version,
            user=user,
            seed=seed,
            now=now,
            kserve_version=kserve_version,
            status=Run.Status.RUNNING,
            attempt=1,
            started_at=now,
            heartbeat_at=now,
        )
        events.emit_many(run.pk, [("run.queued", queued), ("run.started", worker.started_data(run.attempt))])
    return run


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
        capped=True,
    )
    return new


def _without(headers: Mapping[str, str], secrets: Mapping[str, str], redacted: list[str]) -> dict[str, str]:
    """The stored headers, minus the ``redacted`` ones whose real value is not carried along."""
    return {k: v for k, v in headers.items() if k not in redacted or k in secrets}


def run_cancel(*, run: Run, user: User) -> Run:
    """Cancel a run: a queued one at once; a running one by flagging it and telling its worker.

    Idempotent: cancelling a cancelled or finished run changes nothing and returns it.
    """
    access_run_for_cancel(user, run)
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
