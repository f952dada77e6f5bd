"""Every write of the execution app: environments, starting, running, cancelling and reaping runs.

A run moves ``queued -> running -> succeeded | failed | cancelled`` only through conditional updates
(``filter(pk=…, status=…).update(…)``), so the web process, any number of workers and the reaper may
act on the same run at once: exactly one of them wins each transition, and the others see that
they lost and do nothing. Every transition writes a ``RunEvent`` in the same transaction.

Request headers are secret unless known to be harmless (:data:`SAFE_HEADERS`: Content-Type,
Accept, User-Agent, tracing ids…) and not marked secret by the run's environment; secret ones are
stored in the database redacted (``Bearer ***``). Their real values go to Redis under
``run:{id}:secret-headers`` with a TTL (``RUN_SECRET_HEADERS_TTL``, 1 hour) for the worker to pick
up; the Celery message carries the run id only. If they have expired when the worker starts (or
Redis lost them), the redacted headers are not sent at all, and the run's events say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import ipaddress
import json
import logging
import queue
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from config.exceptions import BadRequest, Conflict, Forbidden, TooDeep, is_database_busy
from config.nesting import nesting_exceeds
from execution import events
from execution import selectors as execution_selectors
from execution.engine import EngineConfig, GraphResult, TraceEvent, UrlGuard, make_client, run_graph
from execution.engine.config import REDACTED as ENGINE_REDACTED
from execution.engine.headers import PatternError, canonical_header_key, compile_go_pattern
from execution.models import KSERVE_URL_TEMPLATE, Environment, Run, RunEvent, RunStep
from graphs import services as graph_services
from graphs import spec
from graphs.models import Graph, GraphVersion

logger = logging.getLogger(__name__)
T = TypeVar("T")

LOCAL_ENVIRONMENT = "local"
# Request headers known to carry no secret (lower case). Every other header is stored redacted: a
# deny list by name let ``X-Credentials`` through. Content negotiation, client identification and
# the W3C Trace Context, B3 and request-id tracing headers that meshes such as Istio forward.
SAFE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "content-encoding",
        "content-language",
        "content-type",
        "user-agent",
        "x-request-id",
        "x-correlation-id",
        "traceparent",
        "tracestate",
        "b3",
        "x-b3-traceid",
        "x-b3-spanid",
        "x-b3-parentspanid",
        "x-b3-sampled",
        "x-b3-flags",
    }
)
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 token
REDACTED = ENGINE_REDACTED


# --- environments --------------------------------------------------------------------------------

ENVIRONMENT_FIELDS = (
    "name",
    "description",
    "service_urls",
    "url_template",
    "namespace",
    "propagate_headers",
    "step_timeout",
    "deadline",
    "allow_hosts",
    "allow_networks",
    "allow_loopback",
    "allow_private",
    "visibility",
    "secret_headers",
)


def _issue(path: str, message: str, code: str = "environment.invalid") -> dict[str, Any]:
    return {"code": code, "severity": "error", "path": path, "message": message}


def _check_url(path: str, url: str, issues: list[dict[str, Any]], *, template: bool = False) -> None:
    probe = url.replace("{name}", "model").replace("{namespace}", "default") if template else url
    if not re.match(r"^https?://[^/\s]+", probe, re.IGNORECASE):
        issues.append(_issue(path, f"{url!r} is not an http:// or https:// URL"))


def _header_pattern_problem(pattern: Any) -> str | None:
    """Why an environment's header pattern is refused, or None.

    The list becomes KServe's ``PROPAGATE_HEADERS`` (joined with commas, split on every comma,
    each entry compiled as a Go regexp). Two entries KServe would take are refused here because
    they cannot mean what they look like: an empty one (it matches every header name, so every
    client header, Authorization and Cookie included, would reach every step) and one with a
    comma (KServe would split it into two patterns).
    """
    if not isinstance(pattern, str):
        return "must be a string"
    if pattern == "":
        return (
            "an empty pattern matches every header name (KServe would forward every client header, "
            "Authorization and Cookie included); write '.*' if that is what you mean"
        )
    if "," in pattern:
        return (
            f"{pattern!r} contains a comma: KServe joins the patterns with commas and splits them "
            "again, so it would become two patterns; write them as separate entries"
        )
    try:
        compile_go_pattern(pattern)
    except PatternError as exc:
        return f"{pattern!r} is not a valid Go regular expression: {exc}"
    return None


def check_environment(values: Mapping[str, Any]) -> None:
    """Raise BadRequest listing every problem with the (merged) environment fields."""
    issues: list[dict[str, Any]] = []
    for name, url in (values.get("service_urls") or {}).items():
        if not isinstance(url, str):
            issues.append(_issue(f"service_urls.{name}", "must be a URL string"))
        else:
            _check_url(f"service_urls.{name}", url, issues)
    if "url_template" in values:
        _check_url("url_template", values["url_template"], issues, template=True)
    for index, pattern in enumerate(values.get("propagate_headers") or []):
        problem = _header_pattern_problem(pattern)
        if problem is not None:
            issues.append(_issue(f"propagate_headers[{index}]", problem))
    for index, cidr in enumerate(values.get("allow_networks") or []):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except (ValueError, TypeError):
            issues.append(_issue(f"allow_networks[{index}]", f"{cidr!r} is not a network (CIDR) address"))
    for index, name in enumerate(values.get("secret_headers") or []):
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            issues.append(_issue(f"secret_headers[{index}]", f"{name!r} is not a header name"))
    step_timeout, deadline = values.get("step_timeout"), values.get("deadline")
    limit = settings.RUN_MAX_DEADLINE
    for key, value in (("step_timeout", step_timeout), ("deadline", deadline)):
        if value is not None and not 0 < value <= limit:
            issues.append(_issue(key, f"must be more than 0 and at most {limit} seconds"))
    if issues:
        raise BadRequest(
            issues[0]["message"] if len(issues) == 1 else "The environment has errors.", issues=issues
        )


def _name_issues(name: Any) -> list[dict[str, Any]]:
    # Case-insensitively: ``Local`` next to ``local`` would be a lure in every environment picker.
    if isinstance(name, str) and name.lower() == LOCAL_ENVIRONMENT:
        return [
            _issue(
                "name",
                f"{LOCAL_ENVIRONMENT!r} is the name of the system's default environment",
                "environment.name-reserved",
            )
        ]
    return []


def _check_name(name: Any) -> None:
    issues = _name_issues(name)
    if issues:
        raise BadRequest(
            f"The name {name!r} is reserved for the system's default environment; choose another.",
            issues=issues,
        )


def _check_visibility(visibility: Any, actor: User) -> None:
    if visibility == Environment.Visibility.SHARED and not (actor.is_staff or actor.is_superuser):
        raise Forbidden(
            "Only staff may share an environment with every user; keep it private.",
            issues=[
                _issue("visibility", "only staff may share an environment", "environment.share-forbidden")
            ],
        )


def _audit_value(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | list | dict) or value is None else str(value)


def _environment_audit(actor: User | None, action: str, environment: Environment, **details: Any) -> None:
    graph_services.audit(
        actor, action, environment=environment.pk, environment_name=environment.name, **details
    )


def environment_create(*, owner: User, **values: Any) -> Environment:
    """Create an environment owned by ``owner`` and audit it (``environment.create``).

    Private unless ``visibility="shared"``, which only staff may ask for (Forbidden, 403). Raises
    BadRequest (400) for bad fields, the system default's name (``environment.name-reserved``) or
    a name already taken (``environment.name-taken``).
    """
    values = {k: v for k, v in values.items() if k in ENVIRONMENT_FIELDS}
    _check_name(values.get("name"))
    _check_visibility(values.get("visibility"), owner)
    check_environment(values)
    try:
        with transaction.atomic():
            environment = Environment.objects.create(owner=owner, **values)
            _environment_audit(
                owner,
                "environment.create",
                environment,
                values={k: _audit_value(getattr(environment, k)) for k in ENVIRONMENT_FIELDS},
            )
            return environment
    except IntegrityError as exc:
        raise BadRequest(
            f"An environment named {values.get('name')!r} already exists.",
            issues=[_issue("name", "already taken", "environment.name-taken")],
        ) from exc


def ensure_can_change_environment(environment: Environment, user: User) -> None:
    """Raise Forbidden (403) unless ``user`` is staff, or owns ``environment`` while it is private.

    A shared environment (the system's among them) is changed by staff only: everybody's runs may
    go there, so its owner must not be able to point it somewhere else afterwards.
    """
    if user.is_staff or user.is_superuser:
        return
    if environment.owner_id is not None and environment.owner_id == user.pk:
        if environment.visibility == Environment.Visibility.PRIVATE:
            return
        raise Forbidden(
            f"Environment {environment.name!r} is shared with every user: only staff may change it."
        )
    raise Forbidden(f"Only the owner of environment {environment.name!r} or staff may change it.")


def environment_update(*, environment: Environment, actor: User, **values: Any) -> Environment:
    """Change the fields given and audit what changed (``environment.update``, old and new values).

    Forbidden (403) unless the owner or staff, or when a non-staff user shares it; BadRequest (400)
    for bad fields, a taken or reserved name, or renaming the system default.
    """
    ensure_can_change_environment(environment, actor)
    values = {k: v for k, v in values.items() if k in ENVIRONMENT_FIELDS}
    if "visibility" in values and values["visibility"] != environment.visibility:
        _check_visibility(values["visibility"], actor)
    if environment.system and (
        values.get("name", environment.name) != environment.name
        or values.get("visibility", environment.visibility) != environment.visibility
    ):
        raise BadRequest(
            "The system's default environment keeps its name and stays shared.",
            issues=[
                _issue("name", "the system default cannot be renamed or made private", "environment.system")
            ],
        )
    if not environment.system and values.get("name", environment.name) != environment.name:
        _check_name(values["name"])
    merged = {key: getattr(environment, key) for key in ENVIRONMENT_FIELDS} | values
    check_environment(merged)
    changes = {
        key: [_audit_value(getattr(environment, key)), _audit_value(value)]
        for key, value in values.items()
        if getattr(environment, key) != value
    }
    for key, value in values.items():
        setattr(environment, key, value)
    try:
        with transaction.atomic():
            environment.save()
            if changes:
                _environment_audit(actor, "environment.update", environment, changes=changes)
    except IntegrityError as exc:
        raise BadRequest(
            f"An environment named {values.get('name')!r} already exists.",
            issues=[_issue("name", "already taken", "environment.name-taken")],
        ) from exc
    return environment


def environment_delete(*, environment: Environment, actor: User) -> None:
    """Delete it and audit it (``environment.delete``, with its last values); its runs keep their
    configuration snapshot and environment name. The system default cannot be deleted (403)."""
    ensure_can_change_environment(environment, actor)
    if environment.system:
        raise Forbidden(
            f"{environment.name!r} is the system's default environment; it cannot be deleted "
            "(staff may change its settings)."
        )
    with transaction.atomic():
        _environment_audit(
            actor,
            "environment.delete",
            environment,
            values={k: _audit_value(getattr(environment, k)) for k in ENVIRONMENT_FIELDS},
        )
        environment.delete()


def local_environment_values() -> dict[str, Any]:
    base = settings.MOCKMODELS_URL.rstrip("/")
    return {
        "description": "The built-in mock model server on this machine (python manage.py mockmodels).",
        "url_template": base + "/v1/models/{name}:predict",
        "service_urls": {},
        "propagate_headers": ["^X-Request-Id$", "^Authorization$"],
        "step_timeout": 30.0,
        "deadline": 60.0,
        "allow_loopback": True,
    }


def ensure_local_environment() -> tuple[Environment, bool]:
    """The system's default environment ``local`` (pointing at MOCKMODELS_URL); created when
    missing, owned by no user, shared, and audited with no actor. Idempotent and safe to run
    concurrently (the unique name and the one-system-environment constraint decide a race).

    Nobody can hold the name first: creating or renaming an environment to it is refused, and the
    migration that introduced visibility renamed a ``local`` an ordinary user had created.
    """
    environment = Environment.objects.filter(system=True).first()
    if environment is not None:
        _follow_mock_server(environment)
        return environment, False
    try:
        with transaction.atomic():
            environment = Environment.objects.create(
                name=LOCAL_ENVIRONMENT,
                owner=None,
                system=True,
                visibility=Environment.Visibility.SHARED,
                **local_environment_values(),
            )
            _environment_audit(None, "environment.create", environment, system=True)
    except IntegrityError:
        return Environment.objects.get(system=True), False
    return environment, True


# The URL template the seed writes: the mock model server on some loopback port.
_SEEDED_TEMPLATE = re.compile(r"http://(127\.0\.0\.1|localhost):\d+/v1/models/\{name\}:predict")


def _follow_mock_server(environment: Environment) -> None:
    """Point the system environment at MOCKMODELS_URL if it still holds a seeded mock address.

    ``make run`` may start the mock server on another port than last time (``MOCK_PORT``); a
    template the seed wrote for the old port is mended (audited, no actor). A template someone set
    to anything else is theirs and stays.
    """
    wanted = local_environment_values()["url_template"]
    current = environment.url_template
    if current == wanted or not _SEEDED_TEMPLATE.fullmatch(current):
        return
    updated = Environment.objects.filter(pk=environment.pk, url_template=current).update(url_template=wanted)
    if updated:
        environment.url_template = wanted
        _environment_audit(
            None, "environment.update", environment, changes={"url_template": [current, wanted]}
        )


def environment_config(environment: Environment) -> dict[str, Any]:
    """The snapshot a run keeps: what its worker needs, taken when the run is made."""
    return {
        "service_urls": dict(environment.service_urls or {}),
        "url_template": environment.url_template or KSERVE_URL_TEMPLATE,
        "namespace": environment.namespace,
        "propagate_headers": list(environment.propagate_headers or []),
        "step_timeout": environment.step_timeout,
        "deadline": environment.deadline,
        "allow_hosts": list(environment.allow_hosts or []),
        "allow_networks": list(environment.allow_networks or []),
        "allow_loopback": environment.allow_loopback,
        "allow_private": environment.allow_private,
    }


def guard_from_config(config: Mapping[str, Any]) -> UrlGuard:
    return UrlGuard(
        allow_hosts=tuple(config.get("allow_hosts") or ()),
        allow_networks=tuple(config.get("allow_networks") or ()),
        allow_loopback=bool(config.get("allow_loopback")),
        allow_private=bool(config.get("allow_private")),
    )


def engine_config(
    config: Mapping[str, Any], *, graph_namespace: str, redact: tuple[str, ...] = ()
) -> EngineConfig:
    return EngineConfig(
        service_urls=dict(config.get("service_urls") or {}),
        url_template=config.get("url_template") or KSERVE_URL_TEMPLATE,
        namespace=config.get("namespace") or graph_namespace,
        propagate_headers=tuple(config.get("propagate_headers") or ()),
        step_timeout=float(config.get("step_timeout") or 30.0),
        deadline=float(config.get("deadline") or 60.0),
        body_cap=settings.RUN_BODY_CAP,
        max_response_bytes=settings.RUN_MAX_RESPONSE_BYTES,
        max_run_bytes=settings.RUN_MAX_RUN_BYTES,
        guard=guard_from_config(config),
        redact_headers=tuple(sorted({*EngineConfig().redact_headers, *redact})),
    )


# --- starting runs -------------------------------------------------------------------------------


def is_secret_header(name: str, also_secret: Collection[str] = ()) -> bool:
    """Whether a request header's value is kept out of the database: every name but the harmless
    ones (:data:`SAFE_HEADERS`), and those too when ``also_secret`` (lower case) names them."""
    lowered = name.lower()
    return lowered not in SAFE_HEADERS or lowered in also_secret


def redact_value(value: str) -> str:
    """``Bearer abc`` -> ``Bearer ***``; anything else -> ``***`` (:data:`REDACTED`)."""
    scheme, sep, _ = value.partition(" ")
    if sep and scheme.isalpha() and len(scheme) <= 20:
        return f"{scheme} {REDACTED}"
    return REDACTED


def split_secret_headers(
    headers: Mapping[str, str], also_secret: Collection[str] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """(headers with secret values redacted, {name: real value} of the secret ones).

    ``also_secret``: lower-case names the environment marks secret although they are harmless.
    """
    stored: dict[str, str] = {}
    secrets: dict[str, str] = {}
    for name, value in headers.items():
        if is_secret_header(name, also_secret):
            stored[name] = redact_value(value)
            secrets[name] = value
        else:
            stored[name] = value
    return stored, secrets


def check_headers(headers: Mapping[str, Any]) -> dict[str, str]:
    issues = []
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            issues.append(
                _issue(f"headers.{name}", f"{name!r} is not a valid header name", "run.invalid-header")
            )
        elif not isinstance(value, str) or "\r" in value or "\n" in value:
            issues.append(
                _issue(f"headers.{name}", "a header value must be a single-line string", "run.invalid-header")
            )
    if issues:
        raise BadRequest(issues[0]["message"], issues=issues)
    return {str(k): str(v) for k, v in headers.items()}


def payload_text(payload: Any, content_type: str | None) -> tuple[str, str]:
    """(body text, content type) of a run's request.

    A string payload is the raw body, sent as-is (``text/plain`` unless it parses as JSON or a
    content type is given); any other JSON value is sent as compact JSON. A string that nests
    deeper than the JSON limit raises TooDeep (400) before anything parses it: the request body's
    own check cannot see into strings, and a Switch would read this one as JSON.
    """
    if isinstance(payload, str):
        if nesting_exceeds(payload):
            raise TooDeep("The payload (a raw request body)", path="payload")
        if content_type:
            return payload, content_type
        try:
            json.loads(payload)
            return payload, "application/json"
        except ValueError:
            return payload, "text/plain; charset=utf-8"
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False), content_type or "application/json"


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
) -> tuple[Run, bool]:
    """Queue a run of ``version`` and enqueue its task once the transaction commits.

    Returns ``(run, created)``. With an ``idempotency_key`` already used by ``user``, returns that
    run (created=False) if it is for the same graph and request, else raises Conflict (409). An
    invalid version raises NotDeployable (422) with its issues; nothing is stored then.
    Without ``environment`` the run goes to the system's default (created when missing); an
    environment ``user`` may not use (another user's private one) raises Forbidden (403).
    ``secrets`` (rerun) are real values for headers that ``headers`` carries redacted.
    """
    graph_services.ensure_deployable(graph, version, before="running it")
    if environment is None:
        environment, _ = ensure_local_environment()  # the system's default: shared with everyone
    execution_selectors.ensure_can_use_environment(environment, user)
    body, content_type = payload_text(payload, content_type)
    clean = check_headers(headers or {})
    stored_headers, new_secrets = split_secret_headers(clean, environment.secret_headers or ())
    secrets = {**new_secrets, **(secrets or {})}  # real values given (a rerun) win over redacted ones
    if idempotency_key:
        existing = _idempotent_replay(user, idempotency_key, graph, body)
        if existing is not None:
            return existing, False
    now = timezone.now()
    try:
        with transaction.atomic():
            run = Run.objects.create(
                graph=graph,
                version=version,
                environment=environment,
                environment_name=environment.name,
                config=environment_config(environment),
                request_body=body,
                request_content_type=content_type,
                request_headers=stored_headers,
                secret_header_names=sorted(secrets),
                seed=seed if seed is not None else new_seed(),
                created_by=user,
                idempotency_key=idempotency_key or None,
                rerun_of=rerun_of,
                enqueued_at=now,
            )
            events.emit(
                run.pk,
                "run.queued",
                {
                    "graph": graph.name,
                    "version": version.number,
                    "environment": environment.name,
                    "seed": run.seed,
                    "rerun_of": str(rerun_of.pk) if rerun_of else None,
                },
            )
            if secrets and not events.store_secret_headers(run.pk, dict(secrets)):
                logger.warning("run %s: secret headers could not be stored and will not be sent", run.pk)
            transaction.on_commit(lambda: enqueue(run))
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
        raise Conflict(
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
        secrets = events.load_secret_headers(run.pk) or {}
    environment = run.environment
    if environment is None:
        raise BadRequest(
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


def enqueue(run: Run) -> None:
    """Send the run's task to the broker. A broker failure is logged: the reaper re-sends later."""
    from execution.tasks import run_graph_task

    limit = float((run.config or {}).get("deadline") or settings.RUN_MAX_DEADLINE)
    try:
        run_graph_task.apply_async(
            args=[str(run.pk)],
            soft_time_limit=limit + settings.RUN_DEADLINE_GRACE,
            time_limit=limit + 2 * settings.RUN_DEADLINE_GRACE,
        )
    except Exception:  # kombu raises several unrelated types; the run stays queued either way
        logger.exception("could not enqueue run %s; the reaper will re-send it", run.pk)


# --- cancelling ----------------------------------------------------------------------------------


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
        raise Forbidden(
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
            _emit_ended_without_response(
                run, Run.Status.CANCELLED, "Cancelled before it started.", by=user.get_username()
            )
        elif Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, cancel_requested=False).update(
            cancel_requested=True
        ):
            events.emit(run.pk, "run.cancel_requested", {"by": user.get_username()})
            transaction.on_commit(lambda: events.publish_cancel(run.pk))
    run.refresh_from_db()
    return run


# --- executing a run (the Celery task's body) ----------------------------------------------------


def _dt(timestamp: float | None) -> datetime | None:
    return datetime.fromtimestamp(timestamp, tz=UTC) if timestamp is not None else None


_CANCEL = object()
_BATCH_WINDOW = 0.005  # seconds; adds at most this much to the live console's latency

# SQLite has one writer at a time, and a connection that finds the write lock taken sleeps in
# growing steps (up to 100 ms) before it retries. The worker's threads therefore take turns on a
# process-wide lock first: a thread waiting here wakes the moment the previous write commits.
_SQLITE_WRITES = threading.Lock()


def _write_turn() -> contextlib.AbstractContextManager[Any]:
    return _SQLITE_WRITES if connection.vendor == "sqlite" else contextlib.nullcontext()


# How long a worker keeps retrying a write that found the database busy (each try already waits
# SQLite's busy timeout, STUDIO_SQLITE_TIMEOUT). Kept under RUN_HEARTBEAT_TIMEOUT (20 s): a worker
# that stays silent longer than that is taken for dead and its run is requeued.
_BUSY_RETRY_SECONDS = 10.0


def _retry_while_busy(write: Callable[[], T]) -> T:
    """``write()``, tried again while the database answers "locked"/"busy", for a few seconds.

    ``write`` must be a whole transaction (or a single statement), so a failed try left nothing.
    Raises the last OperationalError once the time is up, and any other error at once.
    """
    deadline = time.monotonic() + _BUSY_RETRY_SECONDS
    pause = 0.05
    while True:
        try:
            return write()
        except OperationalError as exc:
            if not is_database_busy(exc) or time.monotonic() + pause > deadline:
                raise
            logger.warning("database busy (%s); trying again in %.2f s", exc, pause)
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


@dataclass
class _Outcome:
    kind: str  # done | cancelled | crashed
    result: GraphResult | None = None
    error: BaseException | None = None


@dataclass
class _Execution:
    """One attempt of one run on this worker: the engine on its own thread and event loop, this
    (the task's) thread persisting its events, beating the heartbeat and watching for a cancel.

    All database work stays on the task's thread; the engine thread only runs the event loop.
    """

    run: Run
    attempt: int
    events_q: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    pending_routes: dict[str, dict[str, Any]] = field(default_factory=dict)
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task[Any] | None = None
    started: threading.Event = field(default_factory=threading.Event)
    cancel_reason: str | None = None

    # -- engine thread ------------------------------------------------------------------------------

    def _engine_main(
        self, manifest: spec.Manifest, body: bytes, headers: list[tuple[str, str]], config: EngineConfig
    ) -> None:
        async def main() -> GraphResult:
            self.loop = asyncio.get_running_loop()
            self.task = asyncio.current_task()
            self.started.set()
            # One client per run (DESIGN rule 13): its pool is reused by every step of this run.
            async with make_client(
                timeout=config.step_timeout or 30.0,
                guard=config.guard,
                max_response_bytes=config.max_response_bytes,
                max_run_bytes=config.max_run_bytes,
            ) as client:
                return await run_graph(
                    manifest,
                    body,
                    headers,
                    config=config,
                    client=client,
                    on_event=self.events_q.put,
                    rng=random.Random(self.run.seed),
                    clock=time.time,
                    keep_trace=False,
                )

        try:
            self.events_q.put(_Outcome("done", asyncio.run(main())))
        except asyncio.CancelledError:
            self.events_q.put(_Outcome("cancelled"))
        except BaseException as exc:
            self.events_q.put(_Outcome("crashed", error=exc))
        finally:
            self.started.set()

    def cancel_engine(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.started.wait(5)
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            # RuntimeError: the loop closed in between, so the engine finished anyway.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)

    # -- task thread --------------------------------------------------------------------------------

    def execute(self) -> None:
        run = self.run
        manifest = spec.manifest_from_document(run.version.manifest)
        headers, redact, missing = self._headers()
        config = engine_config(run.config, graph_namespace=run.graph.namespace, redact=redact)
        if missing:
            events.emit(
                run.pk,
                "run.warning",
                {
                    "message": "The secret headers of this run expired or were lost "
                    "and are not sent: " + ", ".join(missing)
                },
            )
        listener = events.cancel_listener()
        if not listener.watch(run.pk, lambda: self.events_q.put(_CANCEL)):
            logger.warning("run %s: no live cancel listener; a cancel is seen by the heartbeat poll", run.pk)
        thread = threading.Thread(
            target=self._engine_main,
            name=f"run-{run.pk}",
            args=(manifest, run.request_body.encode("utf-8"), headers, config),
            daemon=True,
        )
        thread.start()
        hard_stop = time.monotonic() + float(config.deadline or 60.0) + settings.RUN_DEADLINE_GRACE
        next_beat = time.monotonic() + settings.RUN_HEARTBEAT_SECONDS
        outcome: _Outcome | None = None
        engine_finished: dict[str, Any] | None = None
        try:
            if Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
                self.cancel_engine("cancelled")  # asked before we subscribed
            while outcome is None:
                try:
                    item = self.events_q.get(timeout=max(0.0, min(next_beat, hard_stop) - time.monotonic()))
                except queue.Empty:
                    item = None
                batch = [item] if item is not None else []
                # Persist what arrives within a few ms in one transaction: the engine emits a step's
                # finish and the next step's start back to back, and every commit is a turn on the
                # database's single write lock (SQLite) or a round trip (PostgreSQL).
                window_end = time.monotonic() + _BATCH_WINDOW if isinstance(item, TraceEvent) else 0.0
                while True:
                    try:
                        wait = window_end - time.monotonic()
                        nxt = self.events_q.get(timeout=wait) if wait > 0 else self.events_q.get_nowait()
                    except queue.Empty:
                        break
                    batch.append(nxt)
                    if not isinstance(nxt, TraceEvent):
                        window_end = 0.0
                trace = [e for e in batch if isinstance(e, TraceEvent)]
                for e in trace:
                    if e.type == "run.finished":
                        engine_finished = dict(e.data)
                self._persist([e for e in trace if e.type != "run.finished"])
                for e in batch:
                    if e is _CANCEL:
                        self.cancel_engine("cancelled")
                    elif isinstance(e, _Outcome):
                        outcome = e
                now = time.monotonic()
                if outcome is None and now >= next_beat:
                    next_beat = now + settings.RUN_HEARTBEAT_SECONDS
                    self._heartbeat()
                if outcome is None and now >= hard_stop and self.cancel_reason is None:
                    self.cancel_engine("deadline")
                    hard_stop = now + settings.RUN_DEADLINE_GRACE  # then give up waiting
                elif outcome is None and now >= hard_stop:
                    outcome = _Outcome(
                        "crashed", error=TimeoutError("the engine did not stop after a cancel")
                    )
        finally:
            listener.unwatch(run.pk)
            if outcome is None:
                # Leaving without an outcome (a write failed for good): stop the engine first, so a
                # graph nobody records is never still calling models when the run is retried.
                self.cancel_engine("lost")
        thread.join(timeout=1.0)
        self._finish(outcome, engine_finished)

    def _headers(self) -> tuple[list[tuple[str, str]], tuple[str, ...], list[str]]:
        run = self.run
        secrets = events.load_secret_headers(run.pk) if run.secret_header_names else {}
        secrets = secrets or {}
        pairs: list[tuple[str, str]] = []
        missing = []
        for name, value in (run.request_headers or {}).items():
            if name in (run.secret_header_names or []):
                if name not in secrets:
                    missing.append(name)
                    continue
                value = secrets[name]
            pairs.append((name, value))
        if not any(name.lower() == "content-type" for name, _ in pairs):
            pairs.append(("Content-Type", run.request_content_type or "application/json"))
        redact = tuple(canonical_header_key(name) for name in (run.secret_header_names or []))
        return pairs, redact, missing

    def _heartbeat(self) -> None:
        run = self.run
        mine = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=self.attempt)
        try:
            with _write_turn():
                if mine.filter(cancel_requested=False).update(heartbeat_at=timezone.now()):
                    return
        except OperationalError as exc:
            if not is_database_busy(exc):
                raise
            # A busy database is not a dead run: skip this beat, the next one tries again (and the
            # reaper's timeout is several beats long).
            logger.warning("run %s: heartbeat skipped, the database is busy: %s", run.pk, exc)
            return
        if mine.exists():  # still ours, but a cancel was asked for (and its message missed)
            mine.update(heartbeat_at=timezone.now())
            self.cancel_engine("cancelled")
        else:  # the reaper gave the run up or to another attempt: stop, write nothing more
            self.cancel_engine("lost")

    def _persist(self, trace: list[TraceEvent]) -> None:
        if not trace:
            return
        routes = dict(self.pending_routes)

        def write() -> None:
            self.pending_routes = dict(routes)  # a failed try must not have consumed any
            with _write_turn(), transaction.atomic():
                for event in trace:
                    self._apply(event)
                events.emit_many(self.run.pk, [(event.type, self._event_data(event)) for event in trace])

        _retry_while_busy(write)

    def _event_data(self, event: TraceEvent) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "call_id": event.call_id,
            "parent_call_id": event.parent_call_id,
            "node": event.node,
            "step_index": event.step_index,
            "step_name": event.step_name,
            "target": event.target,
            "at": event.timestamp,
            **event.data,
        }

    def _apply(self, event: TraceEvent) -> None:
        """Fold one trace event into the RunStep rows (``update_or_create``: replays are harmless)."""
        data = event.data
        key: dict[str, Any] = {"run": self.run, "attempt": self.attempt, "call_id": event.call_id}
        common = {
            "parent_call_id": event.parent_call_id,
            "node": event.node or "",
            "step_index": event.step_index,
            "step_name": event.step_name,
            "target": event.target or "",
        }
        if event.type == "step.started":
            route = self.pending_routes.pop(event.call_id, None)
            defaults: dict[str, Any] = {
                **common,
                "order": event.seq,
                "kind": data.get("kind", ""),
                "request_headers": data.get("headers") or [],
                "request": data.get("request"),
                "condition": data.get("condition"),
                "started_at": _dt(event.timestamp),
                "outcome": RunStep.Outcome.PENDING,
            }
            if route is not None:
                defaults["route"] = route
            RunStep.objects.update_or_create(**key, defaults=defaults)
        elif event.type == "step.finished":
            finished = _dt(event.timestamp)
            defaults = {
                "status_code": data.get("status"),
                "response": data.get("response"),
                "content_type": data.get("content_type"),
                "outcome": data.get("outcome") or "error",
                "error": data.get("error") or "",
                "finished_at": finished,
                "duration_ms": data.get("duration_ms"),
            }
            RunStep.objects.update_or_create(
                **key,
                defaults=defaults,
                create_defaults={**defaults, **common, "order": event.seq, "started_at": finished},
            )
        elif event.type == "step.skipped":
            defaults = {
                **common,
                "order": event.seq,
                "outcome": RunStep.Outcome.SKIPPED,
                "error": data.get("reason") or "",
                "condition": data.get("condition"),
            }
            route = self.pending_routes.pop(event.call_id, None)
            if route is not None:
                defaults["route"] = route
            RunStep.objects.update_or_create(**key, defaults=defaults)
        elif event.type == "route.decided":
            index = data.get("chosen", data.get("step_index"))
            if index is None:
                return
            target = f"{event.call_id}/{index}"
            if not RunStep.objects.filter(run=self.run, attempt=self.attempt, call_id=target).update(
                route=dict(data)
            ):
                self.pending_routes[target] = dict(data)

    def _finish(self, outcome: _Outcome | None, engine_finished: dict[str, Any] | None) -> None:
        run = self.run
        now = timezone.now()
        started = run.started_at or now
        fields: dict[str, Any] = {
            "finished_at": now,
            "heartbeat_at": None,
            "duration_ms": round((now - started).total_seconds() * 1000, 3),
        }
        if self.cancel_reason == "lost":
            logger.warning(
                "run %s attempt %s: the run was taken over; nothing more is written", run.pk, self.attempt
            )
            return
        if outcome is not None and outcome.kind == "done" and outcome.result is not None:
            # Finished before it noticed a cancel: the answer it got is the truth.
            result = outcome.result
            body, encoding, truncated = _stored_body(result.body)
            status = Run.Status.SUCCEEDED if 200 <= result.status <= 299 else Run.Status.FAILED
            fields.update(
                status=status,
                response_status=result.status,
                response_content_type=result.content_type,
                response_body=body,
                response_encoding=encoding,
                response_size=len(result.body),
                response_truncated=truncated,
                error=result.error or "",
            )
            if engine_finished and engine_finished.get("duration_ms") is not None:
                fields["duration_ms"] = engine_finished["duration_ms"]
        elif self.cancel_reason == "cancelled" or (
            outcome is not None and outcome.kind == "cancelled" and self.cancel_reason != "deadline"
        ):
            fields.update(status=Run.Status.CANCELLED, error="Cancelled while running.")
        elif self.cancel_reason == "deadline":
            fields.update(
                status=Run.Status.FAILED,
                error="The run did not finish within its deadline "
                f"plus {settings.RUN_DEADLINE_GRACE} s and was stopped.",
            )
        else:
            error = outcome.error if outcome is not None else None
            logger.error("run %s crashed", run.pk, exc_info=error)
            fields.update(
                status=Run.Status.FAILED, error=f"Internal error while running the graph: {error!r}"
            )

        def write() -> None:
            with _write_turn(), transaction.atomic():
                if Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=self.attempt).update(
                    **fields
                ):
                    _close_pending_steps(run, self.attempt, fields["status"], fields.get("error", ""))
                    events.emit(run.pk, "run.finished", _finished_data(fields, self.attempt))

        _retry_while_busy(write)


def _stored_body(body: bytes) -> tuple[str, str, bool]:
    import base64

    cap = settings.RUN_BODY_CAP
    head, truncated = body[:cap], len(body) > cap
    try:
        return head.decode("utf-8"), "utf-8", truncated
    except UnicodeDecodeError:
        if truncated:
            for trim in range(1, 4):
                try:
                    return head[:-trim].decode("utf-8"), "utf-8", truncated
                except UnicodeDecodeError:
                    continue
        return base64.b64encode(head).decode("ascii"), "base64", truncated


def _finished_data(fields: Mapping[str, Any], attempt: int) -> dict[str, Any]:
    return {
        "status": fields["status"],
        "status_code": fields.get("response_status"),
        "content_type": fields.get("response_content_type"),
        "error": fields.get("error", ""),
        "duration_ms": fields.get("duration_ms"),
        "attempt": attempt,
    }


def _emit_ended_without_response(run: Run, status: str, error: str, **extra: Any) -> None:
    """The final ``run.finished`` event of a run that ended before its graph answered."""
    events.emit(
        run.pk,
        "run.finished",
        {"status": status, "status_code": None, "error": error, "attempt": run.attempt, **extra},
    )


def _close_pending_steps(run: Run, attempt: int, status: str, error: str) -> None:
    """Steps still in flight when a run ends are marked as the run ended (cancelled or error)."""
    outcome = RunStep.Outcome.CANCELLED if status == Run.Status.CANCELLED else RunStep.Outcome.ERROR
    RunStep.objects.filter(run=run, attempt=attempt, outcome=RunStep.Outcome.PENDING).update(
        outcome=outcome, error=error, finished_at=timezone.now()
    )


# The runs this process is executing (run id -> attempt), for :func:`worker_stopping`.
_IN_FLIGHT: dict[str, int] = {}
_IN_FLIGHT_LOCK = threading.Lock()
STOP_ANNOUNCED = "run.worker_stopping"


def worker_stopping(*, reason: str) -> list[str]:
    """Record that this worker process was asked to stop, on every run it is executing.

    Called when the worker receives a shutdown signal (Celery's ``worker_shutting_down``: SIGTERM,
    SIGINT, SIGQUIT). Whatever happens to those attempts next (the warm shutdown lets them finish,
    or the operator's SIGKILL follows) was done to the run, not by it, so the reaper may run them
    again; a worker that dies without this record may have been crashed by its run, and its runs
    are not retried (see :func:`reap_runs`). Writes one ``run.worker_stopping`` event per run;
    returns their ids. Never raises: a failure is logged, and the reaper then treats the runs as
    crashed (the safe side).
    """
    with _IN_FLIGHT_LOCK:
        running = dict(_IN_FLIGHT)
    marked = []
    for run_id, attempt in running.items():
        try:
            with _write_turn(), transaction.atomic():
                events.emit(run_id, STOP_ANNOUNCED, {"attempt": attempt, "reason": reason})
            marked.append(run_id)
        except Exception:  # shutting down: the database may be gone too; never block the exit
            logger.exception("run %s: could not record that its worker is stopping", run_id)
    return marked


def _stop_announced(run: Run) -> bool:
    return RunEvent.objects.filter(run_id=run.pk, type=STOP_ANNOUNCED, data__attempt=run.attempt).exists()


def run_execute(*, run_id: str) -> str:
    """Claim and run a queued run; the body of the ``execution.run_graph`` task.

    Receiving it twice is harmless: only a QUEUED run can be claimed (the conditional update makes
    exactly one caller win); a running or finished run returns at once. Returns what happened
    (``done``, or why nothing was done), for logs and tests.
    """
    now = timezone.now()
    with _write_turn(), transaction.atomic():
        claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED, cancel_requested=False).update(
            status=Run.Status.RUNNING,
            attempt=F("attempt") + 1,
            started_at=now,
            heartbeat_at=now,
        )
        if not claimed:
            return "not-claimed"
        run = Run.objects.select_related("version", "graph").get(pk=run_id)
        events.emit(run.pk, "run.started", {"attempt": run.attempt, "worker": socket.gethostname()})
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT[str(run.pk)] = run.attempt
    try:
        _Execution(run=run, attempt=run.attempt).execute()
    finally:
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.pop(str(run.pk), None)
        _return_freed_memory()
    return "done"


def _return_freed_memory() -> None:
    """Free what a finished run left in reference cycles, now rather than at some later collection.

    A failed step's exception keeps its traceback, whose frames keep the bodies they were reading;
    those cycles wait for Python's cycle collector, which a worker that allocates little between
    runs may not run for a long time. Measured on a 40 x 9 MiB Ensemble stopped by its budget
    (tests/reliability/test_run_memory.py): the worker stayed 73 MiB above its start after the run
    without this, 6 to 12 MiB with it. A full collection takes milliseconds, once per run.
    """
    gc.collect()


# --- the reaper ----------------------------------------------------------------------------------


@dataclass
class ReapReport:
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "requeued": self.requeued,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "resent": self.resent,
        }


def reap_runs(*, now: datetime | None = None) -> ReapReport:
    """Make sure no run stays running or queued forever. Safe to run anywhere, any number of times.

    - RUNNING with no heartbeat for ``RUN_HEARTBEAT_TIMEOUT`` s (its worker died): cancelled if a
      cancel was asked for. Else, if its worker had been asked to stop during this attempt
      (:func:`worker_stopping`: an operator's SIGTERM, a deploy, a scale-down), re-queued while
      attempts < ``RUN_MAX_ATTEMPTS`` (the next claim is the next attempt, with its own steps),
      then failed. A worker that died *unannounced* (a crash, the OOM killer, a bare SIGKILL) may
      have been killed by the run itself (a poison run); the run is failed at once with the reason,
      never requeued into the same crash. This is Kubernetes' Job rule with a pod failure policy:
      a disruption does not count against the retries, a crash fails the Job (backoffLimit 0);
      not Celery's ``reject_on_worker_lost``, which redelivers a poison message forever.
    - QUEUED since ``RUN_QUEUED_TIMEOUT`` s (its message was lost): re-sent once, then failed.

    Each change is conditional on the row still being what was read, so a worker that beats its
    heartbeat in between keeps its run.
    """
    now = now or timezone.now()
    report = ReapReport()
    stale = now - timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT)
    dead = Run.objects.filter(status=Run.Status.RUNNING).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    )
    for run in dead.only("pk", "attempt", "heartbeat_at", "cancel_requested", "started_at", "config"):
        same = Run.objects.filter(
            pk=run.pk, status=Run.Status.RUNNING, attempt=run.attempt, heartbeat_at=run.heartbeat_at
        )
        silent = f"no heartbeat for over {settings.RUN_HEARTBEAT_TIMEOUT:g} s"
        with transaction.atomic():
            if run.cancel_requested:
                reason = f"Cancelled; its worker had stopped responding ({silent})."
                if same.update(status=Run.Status.CANCELLED, finished_at=now, heartbeat_at=None, error=reason):
                    _close_pending_steps(run, run.attempt, Run.Status.CANCELLED, reason)
                    _emit_ended_without_response(run, Run.Status.CANCELLED, reason)
                    report.cancelled.append(str(run.pk))
            elif not _stop_announced(run):
                reason = (
                    f"The worker running this run died during attempt {run.attempt} ({silent}) "
                    "without being asked to stop; not retried, since the run itself may have "
                    "crashed it. Rerun it to try again."
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, heartbeat_at=None, error=reason):
                    _close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    _emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
            elif run.attempt < settings.RUN_MAX_ATTEMPTS:
                reason = (
                    f"The worker running attempt {run.attempt} was asked to stop and then "
                    f"stopped responding ({silent})."
                )
                if same.update(status=Run.Status.QUEUED, heartbeat_at=None, enqueued_at=now):
                    _close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    events.emit(
                        run.pk,
                        "run.requeued",
                        {"reason": reason, "attempt": run.attempt, "next_attempt": run.attempt + 1},
                    )
                    transaction.on_commit(functools.partial(enqueue, run))
                    report.requeued.append(str(run.pk))
            else:
                reason = (
                    f"The worker running attempt {run.attempt} was asked to stop and then "
                    f"stopped responding ({silent}); giving up after {run.attempt} attempts."
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, heartbeat_at=None, error=reason):
                    _close_pending_steps(run, run.attempt, Run.Status.FAILED, reason)
                    _emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
    waited = now - timedelta(seconds=settings.RUN_QUEUED_TIMEOUT)
    for run in Run.objects.filter(status=Run.Status.QUEUED, enqueued_at__lt=waited).only(
        "pk", "requeues", "enqueued_at", "attempt", "config"
    ):
        same = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED, enqueued_at=run.enqueued_at)
        with transaction.atomic():
            if run.requeues < 1:
                if same.update(requeues=F("requeues") + 1, enqueued_at=now):
                    events.emit(
                        run.pk,
                        "run.requeued",
                        {
                            "reason": f"No worker started it within {settings.RUN_QUEUED_TIMEOUT:g} s; "
                            "sent again.",
                            "attempt": run.attempt,
                            "next_attempt": run.attempt + 1,
                        },
                    )
                    transaction.on_commit(functools.partial(enqueue, run))
                    report.resent.append(str(run.pk))
            else:
                reason = (
                    f"No worker started the run (waited twice {settings.RUN_QUEUED_TIMEOUT:g} s); "
                    "is a Celery worker running?"
                )
                if same.update(status=Run.Status.FAILED, finished_at=now, error=reason):
                    _emit_ended_without_response(run, Run.Status.FAILED, reason)
                    report.failed.append(str(run.pk))
    return report
