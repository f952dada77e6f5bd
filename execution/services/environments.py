"""Environments: where runs send their calls, and with which limits. Created, changed and deleted
only here, each change audited; the system's default ``local`` is seeded on demand."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from execution.access import access_environment_for_change
from execution.engine import EngineConfig, UrlGuard
from execution.engine.config import DEFAULT_DEADLINE_S, DEFAULT_URL_TEMPLATE
from execution.engine.headers import PatternError, compile_go_pattern, is_exact_header_name
from execution.engine.tracecontext import TraceContext
from execution.errors import InvalidInput, NotPermitted
from execution.models import DEFAULT_STEP_TIMEOUT, Environment
from execution.services.run_request import HEADER_NAME, issue
from graphs import services as graph_services
from graphs.language.releases import UnknownRelease, get_release

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
    "kserve_version",
    "allow_hosts",
    "allow_networks",
    "allow_loopback",
    "allow_private",
    "trace_propagation",
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
        compiled = compile_go_pattern(pattern)
    except PatternError as exc:
        return f"{pattern!r} is not a valid Go regular expression: {exc}"
    # Every client header name is searched with every pattern on every step call, in the run's
    # event loop: RE2's time per byte grows with the program's size, so a huge one is refused.
    if compiled.programsize > settings.HEADER_PATTERN_MAX_PROGRAM:
        return (
            f"the pattern compiles to {compiled.programsize} RE2 instructions, more than the "
            f"{settings.HEADER_PATTERN_MAX_PROGRAM} allowed (HEADER_PATTERN_MAX_PROGRAM); counted "
            "repetitions such as {1,100} and long alternations multiply it"
        )
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
    if "kserve_version" in values:
        try:
            release = get_release(values["kserve_version"])
        except UnknownRelease as exc:
            issues.append(issue("kserve_version", str(exc)))
        else:
            for index, pattern in enumerate(values.get("propagate_headers") or []):
                if (
                    release.header_matching == "exact"
                    and isinstance(pattern, str)
                    and not is_exact_header_name(pattern)
                ):
                    issues.append(
                        issue(
                            f"propagate_headers[{index}]",
                            f"KServe {release.name} compares header names exactly (patterns came in "
                            f"v0.12.0): {pattern!r} would propagate nothing; write the header's "
                            f"canonical name, such as X-Request-Id",
                        )
                    )
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
    _canonical_release(values)
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


def _canonical_release(values: dict[str, Any]) -> None:
    """Store a release by its canonical name (``v0.17.1`` is the ``v0.16.0`` router)."""
    if "kserve_version" in values:
        values["kserve_version"] = get_release(values["kserve_version"]).name


def environment_update(*, environment: Environment, actor: User, **values: Any) -> Environment:
    """Change the fields given and audit what changed (``environment.update``, old and new values).

    NotPermitted (403) unless the owner or staff, or when a non-staff user shares it; InvalidInput (400)
    for bad fields, a taken or reserved name, or renaming the system default.
    """
    access_environment_for_change(actor, environment)
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
    _canonical_release(values)
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
    access_environment_for_change(actor, environment)
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


# The services the demo's real model server (models/server.py) answers; with LOCAL_MODELS_URL set,
# the `local` environment sends them there and every other name to the mock model server.
REAL_MODEL_SERVICES: Final = (
    "face-detector",
    "feature-extractor",
    "face-db-employees",
    "face-db-visitors",
    "result-merger",
    "cat-face-detector",
)


def real_model_urls() -> dict[str, str]:
    """The ``local`` environment's service map: the real models' v1 URLs, or none."""
    base = settings.LOCAL_MODELS_URL.rstrip("/")
    if not base:
        return {}
    return {name: f"{base}/v1/models/{name}:predict" for name in REAL_MODEL_SERVICES}


def model_server_hosts() -> list[str]:
    """The hosts of MOCKMODELS_URL and LOCAL_MODELS_URL that loopback does not cover, by name.

    Under docker-compose the model servers are services (``mockmodels``, ``models``) whose names
    resolve to the compose network's private addresses, which the guard refuses by default; the
    operator named these hosts for ``local``, so ``local`` may call them, and no other private host.
    """
    hosts = set()
    for url in (settings.MOCKMODELS_URL, settings.LOCAL_MODELS_URL):
        host = (urlsplit(url).hostname or "").lower()
        if host and host != "localhost" and not _is_loopback(host):
            hosts.add(host)
    return sorted(hosts)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_environment_values() -> dict[str, Any]:
    base = settings.MOCKMODELS_URL.rstrip("/")
    real = real_model_urls()
    description = "The built-in mock model server on this machine (python manage.py mockmodels)."
    if real:
        description = (
            "The demo's real models on KServe's model server (models/server.py) for "
            + ", ".join(real)
            + "; every other service on the built-in mock model server."
        )
    return {
        "description": description,
        "url_template": base + "/v1/models/{name}:predict",
        "service_urls": real,
        "propagate_headers": ["^X-Request-Id$", "^Authorization$"],
        "step_timeout": DEFAULT_STEP_TIMEOUT,
        "deadline": DEFAULT_DEADLINE_S,
        "allow_loopback": True,
        "allow_hosts": model_server_hosts(),
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
        _follow_model_hosts(environment)
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
    """Point the system environment at MOCKMODELS_URL (and its services at LOCAL_MODELS_URL) if it
    still holds seeded addresses.

    ``make run`` may start the mock server on another port than last time (``MOCK_PORT``), and the
    real models on another port or not at all (``MODELS_PORT``, ``MODELS=0``); a template or service
    map the seed wrote is mended (audited, no actor). One someone set to anything else is theirs and
    stays.
    """
    _follow_real_models(environment)
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


_SEEDED_MODEL_URL = re.compile(r"http://(127\.0\.0\.1|localhost):\d+/v1/models/([a-z-]+):predict")


def _seeded_model_map(urls: Any) -> bool:
    """Is this service map one the seed wrote (empty, or the real models on some loopback port)?"""
    if not isinstance(urls, dict):
        return False
    for name, url in urls.items():
        found = _SEEDED_MODEL_URL.fullmatch(url) if isinstance(url, str) else None
        if name not in REAL_MODEL_SERVICES or found is None or found.group(2) != name:
            return False
    return True


def _follow_real_models(environment: Environment) -> None:
    wanted = real_model_urls()
    current = environment.service_urls or {}
    if current == wanted or not _seeded_model_map(current):
        return
    values = local_environment_values()
    changes = {"service_urls": [current, wanted]}
    if environment.description != values["description"]:
        changes["description"] = [environment.description, values["description"]]
    environment.service_urls = wanted
    environment.description = values["description"]
    environment.save(update_fields=["service_urls", "description", "updated_at"])
    _environment_audit(None, "environment.update", environment, changes=changes)


def _follow_model_hosts(environment: Environment) -> None:
    """Allow the model servers' hosts a ``local`` calls but was made without (a compose deployment
    of an earlier release); hosts someone allowed stay, and no host it does not call is added."""
    calls = {
        (urlsplit(url).hostname or "").lower()
        for url in [environment.url_template, *(environment.service_urls or {}).values()]
        if isinstance(url, str)
    }
    current = list(environment.allow_hosts or [])
    missing = [host for host in model_server_hosts() if host in calls and host not in current]
    if not missing:
        return
    environment.allow_hosts = [*current, *missing]
    environment.save(update_fields=["allow_hosts", "updated_at"])
    _environment_audit(
        None, "environment.update", environment, changes={"allow_hosts": [current, environment.allow_hosts]}
    )


def environment_config(environment: Environment, *, kserve_version: str | None = None) -> dict[str, Any]:
    """The snapshot a run keeps: what its worker needs, taken when the run is made; ``kserve_version``
    runs it as another KServe release than the environment's (a suite run comparing releases)."""
    return {
        "service_urls": dict(environment.service_urls or {}),
        "url_template": environment.url_template or DEFAULT_URL_TEMPLATE,
        "namespace": environment.namespace,
        "propagate_headers": list(environment.propagate_headers or []),
        "step_timeout": environment.step_timeout,
        "deadline": environment.deadline,
        "kserve_version": get_release(kserve_version or environment.kserve_version).name,
        "allow_hosts": list(environment.allow_hosts or []),
        "allow_networks": list(environment.allow_networks or []),
        "allow_loopback": environment.allow_loopback,
        "allow_private": environment.allow_private,
        "trace_propagation": environment.trace_propagation,
    }


def guard_from_config(config: Mapping[str, Any]) -> UrlGuard:
    return UrlGuard(
        allow_hosts=tuple(config.get("allow_hosts") or ()),
        allow_networks=tuple(config.get("allow_networks") or ()),
        allow_loopback=bool(config.get("allow_loopback")),
        allow_private=bool(config.get("allow_private")),
    )


# What a run's error calls the engine's limits: the settings that set them for studio runs.
RUN_LIMIT_NAMES: Final = MappingProxyType(
    {"max_step_calls": "RUN_MAX_STEP_CALLS", "max_event_bytes": "RUN_MAX_EVENT_BYTES"}
)


def engine_config(
    config: Mapping[str, Any],
    *,
    graph_namespace: str,
    redact: tuple[str, ...] = (),
    trace: TraceContext | None = None,
) -> EngineConfig:
    """The engine's configuration from a run's environment snapshot. ``trace`` is the run's trace
    context; it is dropped when the snapshot turns propagation off (``trace_propagation``, true
    when absent: runs stored before it existed)."""
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
        max_step_calls=settings.RUN_MAX_STEP_CALLS,
        max_event_bytes=settings.RUN_MAX_EVENT_BYTES,
        limit_names=RUN_LIMIT_NAMES,
        guard=guard_from_config(config),
        redact_headers=tuple(sorted({*EngineConfig().redact_headers, *redact})),
        trace=trace if config.get("trace_propagation", True) else None,
        # A run made before the setting existed ran as the newest release.
        release=get_release(config.get("kserve_version")),
    )
