"""Deploy targets: where versions are committed (a repository, branch, path template, mode,
author, write-only credentials, allowed hosts), checked, created, changed and deleted with every
change audited and its credentials redacted, and the URL guard a target's repository host passes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, models, transaction

from config import secretbox
from deploys import gitops
from deploys.errors import ForbiddenHost, GitFailed, InvalidTarget, NotPermitted, UnreadableCredentials
from deploys.models import DeployTarget
from execution.engine import BlockedUrl, UrlGuard
from execution.engine.transport.urlguard import HostNotFound
from graphs import services as graph_services

TARGET_FIELDS = (
    "name",
    "description",
    "url",
    "branch",
    "path",
    "mode",
    "author_name",
    "author_email",
    "allow_hosts",
    "visibility",
)
NAME = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")
# A Git ref name component the studio writes: no "..", no control characters, no "~^:?*[\".
BRANCH = re.compile(r"^(?!/)(?!.*//)(?!.*\.\.)(?!.*@\{)[A-Za-z0-9._/-]+(?<![/.])$")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def issue(path: str, message: str, code: str = "deploy_target.invalid") -> dict[str, Any]:
    return {"code": code, "severity": "error", "path": path, "message": message}


# -- deploy targets ------------------------------------------------------------------------------


def check_target(values: Mapping[str, Any]) -> None:
    """Raise InvalidTarget listing every problem with the (merged) target fields."""
    issues: list[dict[str, Any]] = []
    name = values.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > 63:
        issues.append(
            issue("name", "letters, digits, '-', '_' and '.', at most 63, starting with a letter or digit")
        )
    url = values.get("url") or ""
    scheme = gitops.scheme_of(url)
    parts = urlsplit(url)
    if scheme not in gitops.SCHEMES:
        issues.append(issue("url", f"{url!r} is not a file://, git://, http(s):// or ssh:// repository URL"))
    elif scheme != "file" and not parts.hostname:
        issues.append(issue("url", f"{url!r} has no host"))
    elif parts.password:
        issues.append(
            issue("url", "put the password or token in credentials, not in the URL (it would be shown)")
        )
    branch = values.get("branch") or ""
    if not BRANCH.fullmatch(branch) or branch.endswith(".lock"):
        issues.append(issue("branch", f"{branch!r} is not a branch name"))
    template = values.get("path") or ""
    unknown = [p for p in PLACEHOLDER.findall(template) if p not in ("namespace", "name")]
    if unknown:
        issues.append(issue("path", f"unknown placeholder {{{unknown[0]}}}: use {{namespace}} and {{name}}"))
    else:
        rendered = template.replace("{namespace}", "ns").replace("{name}", "graph")
        segments = rendered.split("/")
        if (
            not rendered
            or rendered.startswith("/")
            or any(s in ("", ".", "..", ".git") for s in segments)
            or "\\" in rendered
        ):
            issues.append(issue("path", f"{template!r} is not a relative file path inside the repository"))
    if values.get("mode") not in DeployTarget.Mode.values:
        issues.append(issue("mode", "commit or review"))
    for key in ("author_name", "author_email"):
        value = values.get(key) or ""
        if not value or any(c in value for c in "<>\n\r\0"):
            issues.append(issue(key, "required, without <, > or line breaks"))
    hosts = values.get("allow_hosts") or []
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        issues.append(issue("allow_hosts", "a list of host names"))
    if issues:
        raise InvalidTarget(
            issues[0]["message"] if len(issues) == 1 else "The deploy target has errors.", issues=issues
        )


def _check_visibility(visibility: Any, actor: User) -> None:
    if visibility == DeployTarget.Visibility.SHARED and not (actor.is_staff or actor.is_superuser):
        raise NotPermitted(
            "Only staff may share a deploy target with every user; keep it private.",
            issues=[
                issue("visibility", "only staff may share a deploy target", "deploy_target.share-forbidden")
            ],
        )


def _credentials(values: dict[str, Any]) -> dict[str, str]:
    """``credentials`` ({"username", "password"}) as the columns that keep them: the password
    encrypted (config/secretbox.py), never in clear in the database."""
    credentials = values.pop("credentials", None)
    if credentials is None:
        return {}
    password = credentials.get("password") or ""
    return {"username": credentials.get("username") or "", "secret": secretbox.encrypt(password)}


def credentials_password(target: DeployTarget) -> str:
    """The target's password or token in clear, for Git alone: the one place the stored value is
    decrypted. UnreadableCredentials (409) when the configured keys cannot decrypt it."""
    try:
        return secretbox.decrypt(target.secret)
    except secretbox.Unreadable:
        raise UnreadableCredentials(target.name) from None


def _audit_values(target: DeployTarget) -> dict[str, Any]:
    values = {key: getattr(target, key) for key in TARGET_FIELDS}
    values["url"] = gitops.Remote(target.url).redacted_url()
    values["credentials"] = "***" if target.secret else None
    return values


def _audit(actor: User | None, action: str, target: DeployTarget, **details: Any) -> None:
    graph_services.audit(actor, action, deploy_target=target.pk, deploy_target_name=target.name, **details)


def _field_default(name: str) -> Any:
    field = DeployTarget._meta.get_field(name)
    return field.get_default() if isinstance(field, models.Field) else None


def target_create(*, owner: User, **values: Any) -> DeployTarget:
    """Create a deploy target owned by ``owner`` (private unless staff shares it), audited as
    ``deploy_target.create`` with its credentials redacted."""
    credentials = _credentials(values)
    values = {k: v for k, v in values.items() if k in TARGET_FIELDS}
    defaults = {name: _field_default(name) for name in TARGET_FIELDS}
    merged = defaults | values
    _check_visibility(merged.get("visibility"), owner)
    check_target(merged)
    try:
        with transaction.atomic():
            target = DeployTarget.objects.create(owner=owner, **values, **credentials)
            _audit(owner, "deploy_target.create", target, values=_audit_values(target))
            return target
    except IntegrityError as exc:
        raise InvalidTarget(
            f"A deploy target named {values.get('name')!r} already exists.",
            issues=[issue("name", "already taken", "deploy_target.name-taken")],
        ) from exc


def ensure_can_change_target(target: DeployTarget, user: User) -> None:
    """Staff, or the owner while it is private (a shared target is everybody's: staff only)."""
    if user.is_staff or user.is_superuser:
        return
    if target.owner_id == user.pk and target.visibility == DeployTarget.Visibility.PRIVATE:
        return
    raise NotPermitted(
        f"Only the owner of deploy target {target.name!r} (while private) or staff may change it."
    )


def target_update(*, target: DeployTarget, actor: User, **values: Any) -> DeployTarget:
    """Change the fields given; audited as ``deploy_target.update`` (old and new, credentials
    only as "changed")."""
    ensure_can_change_target(target, actor)
    credentials = _credentials(values)
    values = {k: v for k, v in values.items() if k in TARGET_FIELDS}
    if "visibility" in values and values["visibility"] != target.visibility:
        _check_visibility(values["visibility"], actor)
    merged = {key: getattr(target, key) for key in TARGET_FIELDS} | values
    check_target(merged)
    before = _audit_values(target)
    for key, value in {**values, **credentials}.items():
        setattr(target, key, value)
    after = _audit_values(target)
    changes = {key: [before[key], after[key]] for key in after if before[key] != after[key]}
    if credentials:
        changes["credentials"] = ["***", "*** (changed)"]
    try:
        with transaction.atomic():
            target.save()
            if changes:
                _audit(actor, "deploy_target.update", target, changes=changes)
    except IntegrityError as exc:
        raise InvalidTarget(
            f"A deploy target named {values.get('name')!r} already exists.",
            issues=[issue("name", "already taken", "deploy_target.name-taken")],
        ) from exc
    return target


def target_delete(*, target: DeployTarget, actor: User) -> None:
    """Delete it (its deployments stay, with its name); audited as ``deploy_target.delete``."""
    ensure_can_change_target(target, actor)
    with transaction.atomic():
        _audit(actor, "deploy_target.delete", target, values=_audit_values(target))
        target.delete()


# -- where a target's repository may be -----------------------------------------------------------


def check_host(target: DeployTarget) -> None:
    """Raise ForbiddenHost unless the target's repository may be reached: a host the URL guard
    lets through (its allow list names loopback or private hosts), or a file:// path inside one of
    DEPLOY_FILE_ROOTS."""
    parts = urlsplit(target.url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        path = Path(unquote(parts.path)).resolve()
        roots = [Path(root).resolve() for root in settings.DEPLOY_FILE_ROOTS]
        if not any(path == root or root in path.parents for root in roots):
            raise ForbiddenHost(
                f"{target.url} is a local path outside DEPLOY_FILE_ROOTS; file:// targets may only use "
                "the directories that setting names.",
                extra={"code": "forbidden"},
            )
        return
    host = parts.hostname or ""
    port = parts.port or {"git": 9418, "ssh": 22, "http": 80, "https": 443}.get(scheme, 80)
    probe = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    guard = UrlGuard(allow_hosts=tuple(target.allow_hosts or ()))
    try:
        guard.check(probe)
    except BlockedUrl as exc:
        raise ForbiddenHost(
            f"The repository host {host!r} is not allowed: {exc}. Add it to the target's allow_hosts if "
            "it is meant to be reached.",
            extra={"code": "forbidden"},
        ) from None
    except HostNotFound:
        raise GitFailed(
            f"The repository host {host!r} does not resolve.", extra={"code": "network"}
        ) from None


def remote_for(target: DeployTarget) -> gitops.Remote:
    """How Git reaches the target's repository, its credentials decrypted (UnreadableCredentials
    when they cannot be)."""
    return gitops.Remote(
        url=target.url,
        username=target.username,
        password=credentials_password(target),
        timeout=settings.DEPLOY_GIT_TIMEOUT,
        max_bytes=settings.DEPLOY_MAX_FETCH_BYTES,
    )
