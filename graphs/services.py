"""Every write to the graph store goes through here.

What a manifest must be before it is saved (a KServe name, within the reader's limits) is checked
in ``graphs/manifests.py``. Versions are append-only: a save, an import and a rollback each insert one new ``GraphVersion``
row. Numbering happens under a row lock on the graph (``select_for_update``; on SQLite the
IMMEDIATE transaction mode serialises writers) with a unique constraint as the backstop.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from graphs import language, manifests, suitestate
from graphs.access import access_graph_for_edit, access_graph_for_owner
from graphs.errors import (
    GraphRefused,
    NoSuchGraph,
    NotDeployable,
    StaleVersion,
    TestsRequired,
    VersionNumberTaken,
)
from graphs.language import budgets, issue_dict
from graphs.language.release_rules import release_issues
from graphs.language.releases import Release
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
                issue_dict("graph.name-mismatch", f"metadata.name must be {name!r}", path="metadata.name")
            ],
        )
    if Graph.objects.filter(name=name).exists():
        raise GraphRefused(
            f"A graph named {name!r} already exists.",
            issues=[
                issue_dict(
                    "graph.name-taken", f"A graph named {name!r} already exists.", path="metadata.name"
                )
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
    with their ``issues``). Only those who may change the graph may save (NotPermitted, 403;
    ``graphs.access``).
    """
    access_graph_for_edit(author, graph)
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
                issue_dict(
                    "graph.name-mismatch", f"metadata.name must be {graph.name!r}", path="metadata.name"
                )
            ],
        )
    parsed = language.manifest_from_document(manifest)
    if issues is None or name is None:
        issues = [issue.to_dict() for issue in language.issues_with_contracts(parsed)]
    valid = not any(issue["severity"] == "error" for issue in issues)
    spec_hash = language.spec_hash(parsed)
    document = language.canonical_document(parsed)
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
        changes = language.diff(
            language.manifest_from_document(base.manifest), language.manifest_from_document(latest.manifest)
        ).to_dict()
    return StaleVersion(graph, base_version, latest, changes)


def graph_version_rollback(
    *, graph: Graph, number: int, author: User, base_version: int | None
) -> SaveResult:
    """Append a new version whose manifest and layout equal version ``number``'s.

    ``base_version`` is the precondition of a save: the version the client saw as the latest. When
    someone saved since, raises StaleVersion exactly as ``graph_version_create``
    does, and nothing is saved; None skips the check (as a save without ``If-Match``). Only those
    who may change the graph may (NotPermitted, 403).
    """
    access_graph_for_edit(author, graph)
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
    """Hide a graph from the list. Its versions and runs stay; archiving twice is harmless. The
    owner only (NotPermitted, 403)."""
    access_graph_for_owner(actor, graph)
    if Graph.objects.filter(pk=graph.pk, archived_at__isnull=True).update(archived_at=timezone.now()):
        audit(actor, "graph.archive", graph)
    graph.refresh_from_db()
    return graph


def graph_restore(*, graph: Graph, actor: User) -> Graph:
    """Bring an archived graph back into the list; restoring twice is harmless. The owner only
    (NotPermitted, 403)."""
    access_graph_for_owner(actor, graph)
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
    access_graph_for_owner(actor, graph, _MEMBERS_OWNER_ONLY)
    if role not in GraphMember.Role.values:
        raise GraphRefused(
            f"role must be one of {', '.join(GraphMember.Role.values)}, got {role!r}.",
            issues=[issue_dict("member.role-unknown", f"{role!r} is not a role", path="role")],
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
    access_graph_for_owner(actor, graph, _MEMBERS_OWNER_ONLY)
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


def version_export(
    *, graph: Graph, version: GraphVersion, fmt: str, release: Release | None = None
) -> tuple[str, str]:
    """The deployable manifest of ``version`` as (text, content type), for ``release``'s CRD when
    given (None: the newest release's).

    Raises NotDeployable with the version's issues when KServe would reject it, and with the
    release's errors (fields its CRD lacks) when that release would.
    """
    ensure_deployable(graph, version, before="exporting")
    manifest = language.manifest_from_document(version.manifest)
    if release is not None:
        errors = [i.to_dict() for i in release_issues(manifest, release) if i.severity == "error"]
        if errors:
            raise NotDeployable(
                f"Version {version.number} of {graph.name!r} uses {len(errors)} field(s) KServe "
                f"{release.name} does not have; remove them or export for a newer release.",
                issues=errors,
            )
    if fmt == "json":
        return language.export_json(manifest, release=release), "application/json"
    header = (
        f"InferenceGraph {graph.name}, version {version.number} ({version.spec_hash})\n"
        + (f"For KServe {release.label}.\n" if release is not None else "")
        + "Exported by Inference Graph Studio. Deploy with: kubectl apply -f <this file>"
    )
    return language.export_yaml(manifest, header=header, release=release), "application/yaml; charset=utf-8"


def graph_settings_update(
    *,
    graph: Graph,
    actor: User,
    require_passing_tests: bool | None = None,
    gate_environments: Sequence[str] | None = None,
    latency_budgets: Mapping[str, Any] | None = None,
) -> Graph:
    """Change the graph's settings: ``require_passing_tests``, and ``gate_environments`` (the
    names of the shared environments whose suite verdicts open the export gate; [] for the
    system's default), and ``latency_budgets`` (``graphs.language.budgets``: p95 of the graph and per
    step, judged by load tests and suite runs; {} for none). Editors and the owner (NotPermitted
    otherwise); an environment that is not shared, or budgets that do not read, are refused
    (GraphRefused, with the issues) and nothing changes. Audited as one ``graph.settings`` event
    with each changed setting's old and new value; idempotent."""
    access_graph_for_edit(actor, graph)
    updates: dict[str, Any] = {}
    changes: dict[str, list[Any]] = {}
    if require_passing_tests is not None and require_passing_tests != graph.require_passing_tests:
        updates["require_passing_tests"] = require_passing_tests
        changes["require_passing_tests"] = [graph.require_passing_tests, require_passing_tests]
    if gate_environments is not None:
        ids = suitestate.gate_environment_ids(list(gate_environments))
        if ids != graph.gate_environments:
            before = suitestate.gate_environment_names(graph)
            updates["gate_environments"] = ids
            changes["gate_environments"] = [before, list(dict.fromkeys(gate_environments))]
    if latency_budgets is not None:
        try:
            wanted = budgets.parse_budgets(latency_budgets)
        except budgets.BudgetError as exc:
            raise GraphRefused(str(exc), issues=exc.issues) from None
        value = {} if wanted.empty else wanted.to_dict()
        if value != (graph.latency_budgets or {}):
            updates["latency_budgets"] = value
            changes["latency_budgets"] = [graph.latency_budgets or {}, value]
    if updates:
        with transaction.atomic():
            Graph.objects.filter(pk=graph.pk).update(**updates)
            audit(actor, "graph.settings", graph, changes=changes)
        for key, value in updates.items():
            setattr(graph, key, value)
    return graph


# A forced export's reason must say something: at least this many visible characters (letters,
# digits, punctuation, symbols), which "hotfix #12" or "rollback" barely pass while "x", "ok" or
# a row of zero-width spaces do not. A reason is for the person reading the audit log later.
REASON_MIN_VISIBLE = 8
REASON_MAX = 1000

# Unicode general categories that print nothing on their own: controls, format characters
# (zero-width spaces and joiners, U+2060, U+FEFF, bidirectional overrides), surrogates, private
# use, unassigned, separators, and combining marks (which need a base to show).
_INVISIBLE = ("C", "Z", "M")


def export_reason(reason: str) -> str:
    """``reason`` as the audit log keeps it: control and format characters removed (they could
    make the log read otherwise than was typed: a right-to-left override), every run of
    whitespace one space, trimmed, at most ``REASON_MAX`` characters.

    Raises GraphRefused (400, ``export.reason-required`` on ``reason``) when fewer than
    ``REASON_MIN_VISIBLE`` visible characters are left."""
    kept = "".join(c for c in reason if unicodedata.category(c)[0] != "C" or c in "\t\n\r")
    text = " ".join(kept.split())
    visible = sum(1 for c in text if unicodedata.category(c)[0] not in _INVISIBLE)
    if visible < REASON_MIN_VISIBLE:
        raise GraphRefused(
            f"A forced export needs a reason of at least {REASON_MIN_VISIBLE} visible characters: "
            "it goes into the audit log.",
            issues=[issue_dict("export.reason-required", f"at least {REASON_MIN_VISIBLE} visible characters (got {visible})", path="reason")],
        )  # fmt: skip
    return text[:REASON_MAX]


def export_gate(*, graph: Graph, version: GraphVersion) -> dict[str, Any] | None:
    """Whether ``version`` may leave without forcing; reads only (a GET export asks this).

    Returns None when the graph does not require passing tests, else the passing suite run that
    opens the gate (``graphs.suitestate.gate_verdict``: a verdict on the current cases, in an
    environment the graph trusts, started by someone who may change the graph). Raises
    TestsRequired (409, ``code: tests_required``, with ``last_passing_version``) when there is none.
    """
    if not graph.require_passing_tests:
        return None
    verdict = suitestate.gate_verdict(graph, version)
    if verdict is None:
        raise TestsRequired(graph, version, suitestate.last_passing_version(graph, {}))
    return verdict


def export_recorded(*, graph: Graph, version: GraphVersion, actor: User, force: bool, reason: str) -> None:
    """The export gate of a POST export, which records its decision in the audit log.

    A gated version that a trusted verdict opens is audited as ``version.export`` (with that suite
    run, its environment and who started it). A closed gate raises TestsRequired (409) unless
    ``force``: then only those who may change the graph may (NotPermitted, 403), with a reason of
    visible characters (:func:`export_reason`, 400), audited as ``version.export_forced``. An
    open gate has nothing to force: ``force`` and ``reason`` are then ignored. A version KServe
    would reject is refused (NotDeployable, 422) before anything is written.
    """
    ensure_deployable(graph, version, before="exporting")
    if not graph.require_passing_tests:
        return
    verdict = suitestate.gate_verdict(graph, version)
    if verdict is not None:
        audit(actor, "version.export", graph, version, gate="passed", **verdict)
        return
    if not force:
        raise TestsRequired(graph, version, suitestate.last_passing_version(graph, {}))
    access_graph_for_edit(
        actor, graph, f"Only the owner or an editor of {graph.name!r} may force an export past its test gate."
    )
    audit(actor, "version.export_forced", graph, version, reason=export_reason(reason))
