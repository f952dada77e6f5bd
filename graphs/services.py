"""Every write to the graph store goes through here.

What a manifest must be before it is saved (a KServe name, within the reader's limits) is checked
in ``graphs/manifests.py``. Versions are append-only: a save, an import and a rollback each insert one new ``GraphVersion``
row. Numbering happens under a row lock on the graph (``select_for_update``; on SQLite the
IMMEDIATE transaction mode serialises writers) with a unique constraint as the backstop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from graphs import manifests, spec, teststate
from graphs.errors import (
    GraphRefused,
    NoSuchGraph,
    NotDeployable,
    NotPermitted,
    StaleVersion,
    TestsRequired,
    VersionNumberTaken,
)
from graphs.manifests import (
    check_graph_name,
    check_manifest_limits,
    service_names,
    starter_manifest,
    summary_counts,
    with_name,
)
from graphs.models import AuditEvent, Graph, GraphMember, GraphVersion


@dataclass(frozen=True)
class SaveResult:
    version: GraphVersion
    created: bool


def audit(
    actor: User | None,
    action: str,
    graph: Graph | None = None,
    version: GraphVersion | None = None,
    **details: Any,
) -> None:
    AuditEvent.objects.create(
        actor=actor,
        action=action,
        graph_name=graph.name if graph else "",
        version_number=version.number if version else None,
        details=details,
    )


def is_owner(graph: Graph, user: User) -> bool:
    """Whether ``user`` owns ``graph`` or is a superuser: who may archive, restore and share it."""
    return graph.owner_id == user.pk or bool(getattr(user, "is_superuser", False))


def ensure_owner(graph: Graph, user: User, detail: str | None = None) -> None:
    """Raise NotPermitted unless ``user`` is the owner (``detail`` says what they may not do)."""
    if not is_owner(graph, user):
        raise NotPermitted(
            detail or f"Only the owner of {graph.name!r} ({graph.owner.get_username()}) may do that."
        )


def can_write(graph: Graph, user: User) -> bool:
    """Whether ``user`` may save versions of ``graph`` and roll it back: its owner, a superuser or
    a member with the ``editor`` role (a ``viewer`` may not)."""
    if is_owner(graph, user):
        return True
    return GraphMember.objects.filter(graph=graph, user=user, role=GraphMember.Role.EDITOR).exists()


def ensure_can_write(graph: Graph, user: User) -> None:
    if not can_write(graph, user):
        raise NotPermitted(
            f"You may read and run graph {graph.name!r} but not change it: "
            "ask its owner to make you an editor."
        )


@transaction.atomic
def graph_create(
    *,
    owner: User,
    name: str | None = None,
    description: str = "",
    manifest: Mapping[str, Any] | None = None,
    layout: Mapping[str, Any] | None = None,
    message: str = "",
    issues: list[dict[str, Any]] | None = None,
) -> Graph:
    """Create a graph and its version 1. The name is the manifest's metadata.name.

    Raises GraphRefused for a name KServe rejects, a name that differs from the manifest's, or a
    name already taken. A manifest with validation errors is still saved (marked invalid).
    """
    if manifest is None:
        manifest = starter_manifest(check_graph_name(name))
    manifest_name = manifests.manifest_name(manifest)
    if name is None:
        name = manifest_name
    check_graph_name(name)
    assert isinstance(name, str)
    if manifest_name is None:
        manifest = with_name(manifest, name)
    elif manifest_name != name:
        raise GraphRefused(
            f"The name {name!r} differs from the manifest's metadata.name {manifest_name!r}.",
            issues=[
                {
                    "code": "graph.name-mismatch",
                    "severity": "error",
                    "path": "metadata.name",
                    "message": f"metadata.name must be {name!r}",
                }
            ],
        )
    if Graph.objects.filter(name=name).exists():
        raise GraphRefused(
            f"A graph named {name!r} already exists.",
            issues=[
                {
                    "code": "graph.name-taken",
                    "severity": "error",
                    "path": "metadata.name",
                    "message": f"A graph named {name!r} already exists.",
                }
            ],
        )
    metadata = manifest.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    try:
        with transaction.atomic():
            graph = Graph.objects.create(
                name=name,
                description=description,
                owner=owner,
                namespace=namespace if isinstance(namespace, str) and namespace else "default",
            )
    except IntegrityError as exc:
        raise GraphRefused(f"A graph named {name!r} already exists.") from exc
    audit(owner, "graph.create", graph)
    graph_version_create(
        graph=graph,
        manifest=manifest,
        layout=layout or {},
        author=owner,
        message=message or "Created",
        base_version=None,
        issues=issues,
    )
    graph.refresh_from_db()
    return graph


def graph_version_create(
    *,
    graph: Graph,
    manifest: Mapping[str, Any],
    layout: Mapping[str, Any],
    author: User,
    message: str,
    base_version: int | None,
    issues: list[dict[str, Any]] | None = None,
    parent: GraphVersion | None = None,
) -> SaveResult:
    """Validate, canonicalise and hash ``manifest``, then append it as the graph's next version.

    ``base_version`` is the version the client edited; when it is not the latest, raises
    StaleVersion carrying the latest version and the diff from the base to it. A save
    whose manifest hash and layout equal the latest version's returns that version (created=False):
    saving is idempotent. The manifest must keep the graph's name (a rename is refused: the name
    is the graph's identity). Invalid manifests are saved with ``valid=False`` and their issues.
    ``issues`` may be passed when the caller validated the same manifest already with its source
    positions (an import), so that the stored issues keep their YAML line and column.
    ``parent`` is the version the content comes from (default: the latest; a rollback names the
    version it restores). A manifest over the import's limits is refused
    (``check_manifest_limits``; an import's documents were read by the reader already and come
    with their ``issues``).
    """
    if issues is None:
        check_manifest_limits(manifest)
    name = manifests.manifest_name(manifest)
    if name is None:
        manifest = with_name(manifest, graph.name)
    elif name != graph.name:
        raise GraphRefused(
            f"metadata.name {name!r} does not match the graph {graph.name!r}; "
            "a graph cannot be renamed (create a new graph, or import with another name).",
            issues=[
                {
                    "code": "graph.name-mismatch",
                    "severity": "error",
                    "path": "metadata.name",
                    "message": f"metadata.name must be {graph.name!r}",
                }
            ],
        )
    parsed = spec.manifest_from_document(manifest)
    if issues is None or name is None:
        issues = [issue.to_dict() for issue in spec.validate(parsed)]
    valid = not any(issue["severity"] == "error" for issue in issues)
    spec_hash = spec.spec_hash(parsed)
    document = spec.canonical_document(parsed)
    layout = dict(layout or {})

    with transaction.atomic():
        locked = Graph.objects.select_for_update().get(pk=graph.pk)
        latest = (
            GraphVersion.objects.filter(pk=locked.latest_version_id).select_related("author").first()
            if locked.latest_version_id
            else None
        )
        if latest is not None and latest.spec_hash == spec_hash and latest.layout == layout:
            return SaveResult(latest, created=False)
        if base_version is not None and (latest is None or base_version != latest.number):
            raise _stale_version(locked, latest, base_version)
        if locked.archived_at is not None:
            raise GraphRefused(f"Graph {graph.name!r} is archived; restore it before saving.")
        number = (latest.number if latest else 0) + 1
        try:
            with transaction.atomic():
                version = GraphVersion.objects.create(
                    graph=locked,
                    number=number,
                    manifest=document,
                    layout=layout,
                    spec_hash=spec_hash,
                    valid=valid,
                    issues=issues,
                    **summary_counts(document, issues),
                    service_names=service_names(document),
                    message=message[:500],
                    author=author,
                    parent=parent or latest,
                )
        except IntegrityError as exc:  # another writer took the number: the lock did not hold.
            raise VersionNumberTaken(
                f"Version {number} of {graph.name!r} was saved by someone else first; "
                "load it and save again.",
                extra={"latest_version": number},
            ) from exc
        Graph.objects.filter(pk=locked.pk).update(latest_version=version, updated_at=timezone.now())
        audit(author, "version.create", locked, version, valid=valid, message=message[:200])
    graph.latest_version = version
    return SaveResult(version, created=True)


def _stale_version(graph: Graph, latest: GraphVersion | None, base_version: int) -> StaleVersion:
    """What changed on the server since the client's base: the latest version and the diff."""
    base = GraphVersion.objects.filter(graph=graph, number=base_version).first()
    changes: dict[str, Any] | None = None
    if base is not None and latest is not None:
        changes = spec.diff(
            spec.manifest_from_document(base.manifest), spec.manifest_from_document(latest.manifest)
        ).to_dict()
    return StaleVersion(graph, base_version, latest, changes)


def graph_version_rollback(
    *, graph: Graph, number: int, author: User, base_version: int | None
) -> SaveResult:
    """Append a new version whose manifest and layout equal version ``number``'s.

    ``base_version`` is the precondition of a save: the version the client saw as the latest. When
    someone saved since, raises StaleVersion exactly as ``graph_version_create``
    does, and nothing is saved; None skips the check (as a save without ``If-Match``).
    """
    target = GraphVersion.objects.filter(graph=graph, number=number).first()
    if target is None:
        raise NoSuchGraph(f"Graph {graph.name!r} has no version {number}.")
    result = graph_version_create(
        graph=graph,
        manifest=target.manifest,
        layout=target.layout,
        author=author,
        message=f"Roll back to version {number}",
        base_version=base_version,
        parent=target,
    )
    if result.created:
        audit(author, "version.rollback", graph, result.version, rolled_back_to=number)
    return result


def graph_archive(*, graph: Graph, actor: User) -> Graph:
    """Hide a graph from the list. Its versions and runs stay; archiving twice is harmless."""
    if Graph.objects.filter(pk=graph.pk, archived_at__isnull=True).update(archived_at=timezone.now()):
        audit(actor, "graph.archive", graph)
    graph.refresh_from_db()
    return graph


def graph_restore(*, graph: Graph, actor: User) -> Graph:
    if Graph.objects.filter(pk=graph.pk, archived_at__isnull=False).update(archived_at=None):
        audit(actor, "graph.restore", graph)
    graph.refresh_from_db()
    return graph


_MEMBERS_OWNER_ONLY = "Only the graph's owner can change who may edit it."


def graph_member_add(
    *, graph: Graph, user: User, actor: User, role: str = GraphMember.Role.EDITOR
) -> GraphMember:
    """Make ``user`` a member of ``graph`` with ``role``; a member already there gets the new role.

    Only the owner or a superuser may (NotPermitted); an unknown role is refused (GraphRefused).
    Audited as ``member.add`` or ``member.role`` (with the old and new role); idempotent.
    """
    ensure_owner(graph, actor, _MEMBERS_OWNER_ONLY)
    if role not in GraphMember.Role.values:
        raise GraphRefused(
            f"role must be one of {', '.join(GraphMember.Role.values)}, got {role!r}.",
            issues=[
                {
                    "code": "member.role-unknown",
                    "severity": "error",
                    "path": "role",
                    "message": f"{role!r} is not a role",
                }
            ],
        )
    with transaction.atomic():
        member, created = GraphMember.objects.select_for_update().get_or_create(
            graph=graph, user=user, defaults={"role": role}
        )
        if created:
            audit(actor, "member.add", graph, user=user.get_username(), role=role)
        elif member.role != role:
            audit(actor, "member.role", graph, user=user.get_username(), role=[member.role, role])
            member.role = role
            member.save(update_fields=["role"])
    return member


def graph_member_remove(*, graph: Graph, user: User, actor: User) -> None:
    ensure_owner(graph, actor, _MEMBERS_OWNER_ONLY)
    if GraphMember.objects.filter(graph=graph, user=user).delete()[0]:
        audit(actor, "member.remove", graph, user=user.get_username())


def ensure_deployable(graph: Graph, version: GraphVersion, *, before: str) -> None:
    """Raise NotDeployable with the version's issues when KServe would reject it: such a version is
    neither exported nor run. ``before`` ends the advice: "fix them and save before …"."""
    if not version.valid:
        errors = [i for i in version.issues if i.get("severity") == "error"]
        raise NotDeployable(
            f"Version {version.number} of {graph.name!r} has {len(errors)} error(s) KServe would reject; "
            f"fix them and save before {before}.",
            issues=version.issues,
        )


def version_export(*, graph: Graph, version: GraphVersion, fmt: str) -> tuple[str, str]:
    """The deployable manifest of ``version`` as (text, content type).

    Raises NotDeployable with the version's issues when KServe would reject it.
    """
    ensure_deployable(graph, version, before="exporting")
    manifest = spec.manifest_from_document(version.manifest)
    if fmt == "json":
        return spec.export_json(manifest), "application/json"
    header = (
        f"InferenceGraph {graph.name}, version {version.number} ({version.spec_hash})\n"
        "Exported by Inference Graph Studio. Deploy with: kubectl apply -f <this file>"
    )
    return spec.export_yaml(manifest, header=header), "application/yaml; charset=utf-8"


def graph_settings_update(*, graph: Graph, actor: User, require_passing_tests: bool | None = None) -> Graph:
    """Change the graph's settings (today: ``require_passing_tests``); audited. Editors and the owner."""
    ensure_can_write(graph, actor)
    if require_passing_tests is not None and require_passing_tests != graph.require_passing_tests:
        change = [graph.require_passing_tests, require_passing_tests]
        graph.require_passing_tests = require_passing_tests
        with transaction.atomic():
            Graph.objects.filter(pk=graph.pk).update(require_passing_tests=require_passing_tests)
            audit(actor, "graph.settings", graph, changes={"require_passing_tests": change})
    return graph


def export_gate(*, graph: Graph, version: GraphVersion, actor: User, force: bool, reason: str) -> None:
    """With ``require_passing_tests`` on, let a version out only once a suite run of it passed on
    the graph's current cases (``graphs.teststate``), or when forced with a reason (audited).

    Raises TestsRequired (409, ``code: tests_required``, with ``last_passing_version``), or
    GraphRefused (400) for ``force`` without a reason.
    """
    if not graph.require_passing_tests or teststate.version_passed(graph, version):
        return
    if not force:
        raise TestsRequired(graph, version, teststate.last_passing_version(graph, {}))
    if not reason.strip():
        raise GraphRefused(
            "force=1 needs a reason (reason=...): it goes into the audit log.",
            issues=[{"severity": "error", "code": "export.reason-required", "path": "reason",
                     "message": "a forced export needs a non-empty reason"}],
        )  # fmt: skip
    audit(actor, "version.export_forced", graph, version, reason=reason.strip()[:1000])
