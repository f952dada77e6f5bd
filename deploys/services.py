"""Every write of deploying through Git but the targets themselves (deploys.targets): deployments
(the gate, the push in a worker, what is live), drift
(the file at the branch head against the deployed version) and importing a hand edit.

A deploy is started here (a ``pending`` row, the gate's verdict recorded) and pushed by the
``deploys.push`` task (:func:`deployment_push`): the file at the branch head is read first, and when
it changed since this graph's last deployment to the target, nothing is pushed (``drift``: the
diff is kept for the 409). A push that finds the branch moved is made again once on the new head.
"""

from __future__ import annotations

import time
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from deploys import gitops
from deploys.errors import (
    DriftConflict,
    ForbiddenHost,
    GitFailed,
    InvalidTarget,
    NotPermitted,
    UnreadableCredentials,
)
from deploys.models import Deployment, DeployTarget
from deploys.targets import check_host, credentials_password, issue, remote_for
from graphs import access as graph_access
from graphs import imports as graph_imports
from graphs import language, suitestate
from graphs import services as graph_services
from graphs.errors import TestsRequired
from graphs.models import Graph, GraphVersion

PUSH_TASK = "deploys.push"


def render_path(target: DeployTarget, graph: Graph) -> str:
    return target.path.replace("{namespace}", graph.namespace).replace("{name}", graph.name)


# -- deploying -------------------------------------------------------------------------------------


def _gate(*, graph: Graph, version: GraphVersion, force: bool, reason: str) -> dict[str, Any]:
    """The export gate's verdict for a deploy: ``not-required``, ``passed`` (with the suite run) or
    ``forced`` (with the reason). A closed gate without force is TestsRequired (409)."""
    if not graph.require_passing_tests:
        return {"required": False, "verdict": "not-required"}
    verdict = suitestate.gate_verdict(graph, version)
    if verdict is not None:
        return {"required": True, "verdict": "passed", **verdict}
    if not force:
        raise TestsRequired(graph, version, suitestate.last_passing_version(graph, {}))
    return {"required": True, "verdict": "forced", "reason": graph_services.export_reason(reason)}


def _suite_line(version: GraphVersion) -> str:
    tests = suitestate.version_tests(version, {})
    if tests is None:
        return "no suite run"
    counts = tests.get("counts") or {}
    detail = ", ".join(f"{v} {k}" for k, v in counts.items() if v) if isinstance(counts, dict) else ""
    where = f" in {tests['environment']}" if tests.get("environment") else ""
    return f"{tests.get('status')}{where}" + (f" ({detail})" if detail else "")


def commit_message(*, graph: Graph, version: GraphVersion, target: DeployTarget, actor: User, gate: dict[str, Any], message: str) -> str:  # fmt: skip
    lines = [f"Deploy {graph.name} v{version.number} to {target.name}", ""]
    if message.strip():
        lines += [message.strip(), ""]
    verdict = gate.get("verdict")
    gate_line = f"forced: {gate.get('reason')}" if verdict == "forced" else str(verdict)
    lines += [
        f"Version: {version.number} ({version.spec_hash})",
        f"Version author: {version.author.get_username()}",
        f"Version message: {version.message}" if version.message else "",
        f"Suite: {_suite_line(version)}",
        f"Gate: {gate_line}",
        f"Deployed by: {actor.get_username()} from Inference Graph Studio",
    ]
    return "\n".join(line for line in lines if line is not None).rstrip() + "\n"


def deploy_start(
    *,
    graph: Graph,
    version: GraphVersion,
    target: DeployTarget,
    actor: User,
    message: str = "",
    force: bool = False,
    reason: str = "",
    enqueue: bool = True,
) -> Deployment:
    """Check and record a deploy of ``version`` to ``target`` (status ``pending``), then send it to
    the worker (``enqueue``; the command line pushes in its own process instead).

    Only the graph's owner or an editor may deploy (NotPermitted, 403); a version KServe would
    reject is refused (422); the gate applies as to exports (409 ``tests_required`` unless forced
    with a reason); the repository's host must be allowed (400 ``forbidden``); the target's
    credentials must decrypt with the configured keys (409 ``credentials``).
    """
    if not graph_access.can_edit(graph, actor):
        raise NotPermitted(
            f"Only the owner or an editor of {graph.name!r} may deploy it; you may read it and run it."
        )
    graph_services.ensure_deployable(graph, version, before="deploying")
    gate = _gate(graph=graph, version=version, force=force, reason=reason)
    check_host(target)
    credentials_password(target)  # unreadable: refused before anything is recorded
    content, _ = graph_services.version_export(graph=graph, version=version, fmt="yaml")
    review = target.mode == DeployTarget.Mode.REVIEW
    deployment = Deployment.objects.create(
        graph=graph,
        version=version,
        target=target,
        target_name=target.name,
        branch=f"studio/{graph.name}-v{version.number}" if review else target.branch,
        path=render_path(target, graph),
        mode=target.mode,
        gate=gate,
        message=commit_message(
            graph=graph, version=version, target=target, actor=actor, gate=gate, message=message
        ),
        content=content,
        created_by=actor,
    )
    graph_services.audit(
        actor,
        "version.deploy_forced" if gate.get("verdict") == "forced" else "version.deploy",
        graph,
        version,
        deployment=deployment.pk,
        deploy_target=target.name,
        gate=gate,
    )
    if enqueue:
        transaction.on_commit(lambda: current_app.send_task(PUSH_TASK, args=[deployment.pk]))
    return deployment


def _drift_of(content: bytes | None, version: GraphVersion) -> tuple[bool, dict[str, Any] | None, str]:
    """Whether the file's manifest differs from ``version``'s, the semantic diff from the version
    to the file, and a sentence saying how it differs."""
    if content is None:
        return True, None, "The file is gone from the branch."
    try:
        documents = language.load_documents(content, max_bytes=settings.STUDIO_MAX_MANIFEST_BYTES)
    except language.SpecError as exc:
        return True, None, f"The file no longer reads as an InferenceGraph: {exc}"
    if len(documents) != 1:
        return True, None, f"The file holds {len(documents)} documents instead of one InferenceGraph."
    found = language.manifest_from_document(documents[0].document)
    if language.spec_hash(found) == version.spec_hash:
        return False, None, ""
    deployed = language.manifest_from_document(version.manifest)
    return True, language.diff(deployed, found).to_dict(), "The file was changed outside the studio."


def live_deployment(graph: Graph, target_id: int, path: str, *, exclude: int) -> Deployment | None:
    return (
        Deployment.objects.filter(
            graph=graph, target_id=target_id, path=path, status=Deployment.Status.PUSHED
        )
        .exclude(pk=exclude)
        .select_related("version")
        .order_by("-created_at", "-id")
        .first()
    )


def _fail(deployment: Deployment, kind: str, error: str, diff: dict[str, Any] | None = None) -> Deployment:
    Deployment.objects.filter(pk=deployment.pk).update(
        status=Deployment.Status.FAILED,
        error_kind=kind,
        error=error,
        conflict_diff=diff,
        finished_at=timezone.now(),
    )
    deployment.refresh_from_db()
    return deployment


def deployment_push(deployment_id: int) -> Deployment:
    """Push a pending deployment (the ``deploys.push`` task; the command line calls it directly).

    Idempotent: a deployment that is not pending any more is returned as it is. Reads the file at
    the branch head first: when it differs from this graph's live deployment on the target, the
    deployment fails as ``drift`` with the diff and nothing is pushed. A branch that moved between
    the read and the push is read and pushed again once; a second move fails as ``moved``.
    """
    deployment = Deployment.objects.select_related("graph", "version", "target").get(pk=deployment_id)
    if deployment.status != Deployment.Status.PENDING:
        return deployment
    target = deployment.target
    if target is None:
        return _fail(deployment, "not-found", "The deploy target was deleted before the push.")
    try:
        check_host(target)
        remote = remote_for(target)
    except ForbiddenHost as exc:
        return _fail(deployment, "forbidden", exc.detail)
    except GitFailed as exc:
        return _fail(deployment, "network", exc.detail)
    except UnreadableCredentials as exc:
        return _fail(deployment, "credentials", exc.detail)
    previous: Deployment | None = None

    def check_base(head: str | None, content: bytes | None) -> None:
        # Read at each attempt: a deployment that finished meanwhile is the one to compare with.
        nonlocal previous
        previous = live_deployment(deployment.graph, target.pk, deployment.path, exclude=deployment.pk)
        if previous is None:
            return
        drift, diff, detail = _drift_of(content, previous.version)
        if drift:
            raise DriftConflict(detail, extra={"diff": diff})

    author = f"{target.author_name} <{target.author_email}>"
    attempts = 0
    while True:
        attempts += 1
        try:
            pushed = gitops.push_file(
                remote,
                base_branch=target.branch,
                branch=deployment.branch,
                path=deployment.path,
                content=deployment.content.encode(),
                message=deployment.message,
                author=author,
                check_base=check_base,
            )
            break
        except DriftConflict as exc:
            return _fail(
                deployment,
                "drift",
                f"{exc.detail} {deployment.path} on {target.branch} differs from v{previous.version.number if previous else '?'} "
                "deployed last; nothing was pushed. Import the change or look at the diff first.",
                exc.extra.get("diff"),
            )
        except gitops.GitError as exc:
            if exc.kind == "moved" and attempts < 2:
                continue
            return _fail(deployment, exc.kind, exc.message)
    review = deployment.mode == DeployTarget.Mode.REVIEW
    with transaction.atomic():
        if not review:
            Deployment.objects.filter(
                graph=deployment.graph_id,
                target=target,
                path=deployment.path,
                status=Deployment.Status.PUSHED,
            ).update(status=Deployment.Status.SUPERSEDED)
        Deployment.objects.filter(pk=deployment.pk).update(
            status=Deployment.Status.REVIEW if review else Deployment.Status.PUSHED,
            commit=pushed.commit,
            base_commit=pushed.base or "",
            head_commit=pushed.commit,
            finished_at=timezone.now(),
            checked_at=timezone.now(),
            drift=False,
        )
    deployment.refresh_from_db()
    return deployment


def deployment_wait(deployment: Deployment, seconds: float) -> Deployment:
    """The deployment once the worker finished it, or as it is after ``seconds``."""
    deadline = time.monotonic() + seconds
    while deployment.status == Deployment.Status.PENDING and time.monotonic() < deadline:
        time.sleep(0.05)
        deployment.refresh_from_db()
    return deployment


def raise_for_failure(deployment: Deployment, body: dict[str, Any]) -> None:
    """The API's error for a failed deployment (``body``: the deployment as the API shows it)."""
    if deployment.status != Deployment.Status.FAILED:
        return
    extra = {"code": deployment.error_kind, "deployment": body}
    if deployment.error_kind == "drift":
        raise DriftConflict(deployment.error, extra={**extra, "diff": deployment.conflict_diff})
    if deployment.error_kind == "forbidden":
        raise ForbiddenHost(deployment.error, extra=extra)
    if deployment.error_kind == "credentials":
        raise UnreadableCredentials(deployment.target_name, extra=extra)
    raise GitFailed(deployment.error, extra=extra)


# -- drift -------------------------------------------------------------------------------------------


def drift_refresh(*, graph: Graph) -> None:
    """Read the file at the branch head of every target where ``graph`` is live, and record
    whether it differs from the deployed version (and the diff). A target that cannot be read
    keeps its last reading (its error is recorded on the deployment)."""
    for deployment in Deployment.objects.filter(graph=graph, status=Deployment.Status.PUSHED).select_related(
        "version", "target"
    ):
        target = deployment.target
        if target is None:
            continue
        try:
            check_host(target)
            found = gitops.read_file(remote_for(target), target.branch, deployment.path)
        except (gitops.GitError, ForbiddenHost, GitFailed, UnreadableCredentials) as exc:
            message = exc.message if isinstance(exc, gitops.GitError) else exc.detail
            Deployment.objects.filter(pk=deployment.pk).update(error=message, checked_at=timezone.now())
            continue
        content = found.content
        drift, diff, _ = _drift_of(content, deployment.version)
        if found.head == deployment.commit or (content is not None and content.decode("utf-8", "replace") == deployment.content):  # fmt: skip
            drift, diff = False, None
        Deployment.objects.filter(pk=deployment.pk).update(
            checked_at=timezone.now(),
            head_commit=found.head or "",
            drift=drift,
            drift_diff=diff,
            drift_content=content.decode("utf-8", "replace") if (drift and content is not None) else "",
            drift_author=found.author if drift else "",
            drift_message=found.message if drift else "",
            error="",
        )


def import_drift(*, deployment: Deployment, actor: User) -> GraphVersion:
    """Save the file found at the branch head as a new version of the graph (message and author
    from its commit), and record it as live at that commit: the drift is then resolved.

    Only the owner or an editor (403); a deployment without drift to import is refused (400).
    """
    graph = deployment.graph
    graph_access.access_graph_for_edit(actor, graph)
    if deployment.status != Deployment.Status.PUSHED or not deployment.drift or not deployment.drift_content:
        raise InvalidTarget(
            "This deployment has no change from Git to import: refresh the deployments first "
            "(?refresh=1), or the file was removed or is not a graph.",
            issues=[issue("drift", "nothing to import", "deployment.no-drift")],
        )
    commit = deployment.head_commit
    message = (
        f"{deployment.drift_message or 'Changed in Git'}\n\n"
        f"Imported from {deployment.target_name}, commit {commit[:7]} by {deployment.drift_author}"
    )
    result = graph_imports.graph_version_from_text(
        graph=graph, source=deployment.drift_content, author=actor, message=message, base_version=None
    )
    version = result.version
    with transaction.atomic():
        Deployment.objects.filter(pk=deployment.pk).update(
            status=Deployment.Status.SUPERSEDED, drift=False, drift_imported=version.number
        )
        imported = Deployment.objects.create(
            graph=graph,
            version=version,
            target=deployment.target,
            target_name=deployment.target_name,
            commit=commit,
            base_commit=commit,
            head_commit=commit,
            branch=deployment.branch,
            path=deployment.path,
            mode=deployment.mode,
            status=Deployment.Status.PUSHED,
            gate={"required": False, "verdict": "imported"},
            message=message,
            content=deployment.drift_content,
            created_by=actor,
            finished_at=timezone.now(),
            checked_at=timezone.now(),
        )
        graph_services.audit(
            actor,
            "deployment.import_drift",
            graph,
            version,
            deployment=imported.pk,
            deploy_target=deployment.target_name,
            commit=commit,
            commit_author=deployment.drift_author,
        )
    return version
