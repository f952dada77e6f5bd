"""Environments: where runs send their calls, and with which limits. Created, changed and deleted
only here, each change audited; the system's default ``local`` is seeded on demand."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from execution.engine import EngineConfig, UrlGuard
from execution.engine.config import DEFAULT_DEADLINE_S, DEFAULT_URL_TEMPLATE
from execution.engine.headers import PatternError, compile_go_pattern
from execution.errors import InvalidInput, NotPermitted
from execution.models import DEFAULT_STEP_TIMEOUT, Environment
from execution.services.run_request import HEADER_NAME, issue
from graphs import services as graph_services

LOCAL_ENVIRONMENT = "local"


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


def _check_url(path: str, url: str, issues: list[dict[str, Any]], *, template: bool = False) -> None:
    probe = url.replace("{name}", "model").replace("{namespace}", "default") if template else url
    if not re.match(r"^https?://[^/\s]+", probe, re.IGNORECASE):
        issues.append(issue(path, f"{url!r} is not an http:// or https:// URL"))


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
    """Raise InvalidInput listing every problem with the (merged) environment fields."""
    issues: list[dict[str, Any]] = []
    for name, url in (values.get("service_urls") or {}).items():
        if not isinstance(url, str):
            issues.append(issue(f"service_urls.{name}", "must be a URL string"))
        else:
            _check_url(f"service_urls.{name}", url, issues)
    if "url_template" in values:
        _check_url("url_template", values["url_template"], issues, template=True)
    for index, pattern in enumerate(values.get("propagate_headers") or []):
        problem = _header_pattern_problem(pattern)
        if problem is not None:
            issues.append(issue(f"propagate_headers[{index}]", problem))
    for index, cidr in enumerate(values.get("allow_networks") or []):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except (ValueError, TypeError):
            issues.append(issue(f"allow_networks[{index}]", f"{cidr!r} is not a network (CIDR) address"))
    for index, name in enumerate(values.get("secret_headers") or []):
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
            issues.append(issue(f"secret_headers[{index}]", f"{name!r} is not a header name"))
    step_timeout, deadline = values.get("step_timeout"), values.get("deadline")
    limit = settings.RUN_MAX_DEADLINE
    for key, value in (("step_timeout", step_timeout), ("deadline", deadline)):
        if value is not None and not 0 < value <= limit:
            issues.append(issue(key, f"must be more than 0 and at most {limit} seconds"))
    if issues:
        raise InvalidInput(
            issues[0]["message"] if len(issues) == 1 else "The environment has errors.", issues=issues
        )


def _name_issues(name: Any) -> list[dict[str, Any]]:
    # Case-insensitively: ``Local`` next to ``local`` would be a lure in every environment picker.
    if isinstance(name, str) and name.lower() == LOCAL_ENVIRONMENT:
        return [
            issue(
                "name",
                f"{LOCAL_ENVIRONMENT!r} is the name of the system's default environment",
                "environment.name-reserved",
            )
        ]
    return []


def _check_name(name: Any) -> None:
    issues = _name_issues(name)
    if issues:
        raise InvalidInput(
            f"The name {name!r} is reserved for the system's default environment; choose another.",
            issues=issues,
        )


def _check_visibility(visibility: Any, actor: User) -> None:
    if visibility == Environment.Visibility.SHARED and not (actor.is_staff or actor.is_superuser):
        raise NotPermitted(
            "Only staff may share an environment with every user; keep it private.",
            issues=[
                issue("visibility", "only staff may share an environment", "environment.share-forbidden")
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

    Private unless ``visibility="shared"``, which only staff may ask for (NotPermitted, 403). Raises
    InvalidInput (400) for bad fields, the system default's name (``environment.name-reserved``) or
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
        raise InvalidInput(
            f"An environment named {values.get('name')!r} already exists.",
            issues=[issue("name", "already taken", "environment.name-taken")],
        ) from exc


def ensure_can_change_environment(environment: Environment, user: User) -> None:
    """Raise NotPermitted (403) unless ``user`` is staff, or owns ``environment`` while it is private.

    A shared environment (the system's among them) is changed by staff only: everybody's runs may
    go there, so its owner must not be able to point it somewhere else afterwards.
    """
    if user.is_staff or user.is_superuser:
        return
    if environment.owner_id is not None and environment.owner_id == user.pk:
        if environment.visibility == Environment.Visibility.PRIVATE:
            return
        raise NotPermitted(
            f"Environment {environment.name!r} is shared with every user: only staff may change it."
        )
    raise NotPermitted(f"Only the owner of environment {environment.name!r} or staff may change it.")


def environment_update(*, environment: Environment, actor: User, **values: Any) -> Environment:
    """Change the fields given and audit what changed (``environment.update``, old and new values).

    NotPermitted (403) unless the owner or staff, or when a non-staff user shares it; InvalidInput (400)
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
        raise InvalidInput(
            "The system's default environment keeps its name and stays shared.",
            issues=[
                issue("name", "the system default cannot be renamed or made private", "environment.system")
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
        raise InvalidInput(
            f"An environment named {values.get('name')!r} already exists.",
            issues=[issue("name", "already taken", "environment.name-taken")],
        ) from exc
    return environment


def environment_delete(*, environment: Environment, actor: User) -> None:
    """Delete it and audit it (``environment.delete``, with its last values); its runs keep their
    configuration snapshot and environment name. The system default cannot be deleted (403)."""
    ensure_can_change_environment(environment, actor)
    if environment.system:
        raise NotPermitted(
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
        "step_timeout": DEFAULT_STEP_TIMEOUT,
        "deadline": DEFAULT_DEADLINE_S,
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
        "url_template": environment.url_template or DEFAULT_URL_TEMPLATE,
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
        url_template=config.get("url_template") or DEFAULT_URL_TEMPLATE,
        namespace=config.get("namespace") or graph_namespace,
        propagate_headers=tuple(config.get("propagate_headers") or ()),
        step_timeout=float(config.get("step_timeout") or DEFAULT_STEP_TIMEOUT),
        deadline=float(config.get("deadline") or DEFAULT_DEADLINE_S),
        body_cap=settings.RUN_BODY_CAP,
        max_response_bytes=settings.RUN_MAX_RESPONSE_BYTES,
        max_run_bytes=settings.RUN_MAX_RUN_BYTES,
        guard=guard_from_config(config),
        redact_headers=tuple(sorted({*EngineConfig().redact_headers, *redact})),
    )
