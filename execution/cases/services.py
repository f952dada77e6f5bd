"""Writes of saved test cases: create, update, delete, import and export of test files, and
"save run as test". Every write checks that the user may change the graph (its owner, a superuser
or an editor), validates the case with ``execution.casecore`` (400 with issues pinned to the
case, expectation and field) and against the graph's latest version (a node or step it lacks is
refused), and stores secret header values redacted, as runs do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import yaml
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from execution.casecore import (
    API_VERSION,
    KIND,
    MAX_CASES,
    CaseDocumentError,
    CaseIssue,
    ParsedCase,
    case_document_from_run,
    load_suite,
    parse_case,
    reference_problems,
)
from execution.cases import secrets
from execution.cases.limits import judge_limits
from execution.cases.models import GraphCase
from execution.errors import InvalidInput, StaleTestCase, StateConflict
from execution.models import Run, RunEvent
from graphs import language
from graphs import services as graph_services
from graphs.access import access_graph_for_edit
from graphs.language import issue_dict
from graphs.models import Graph

__all__ = [
    "test_case_create",
    "test_case_delete",
    "test_case_from_run",
    "test_case_update",
    "test_cases_export",
    "test_cases_import",
]

IMPORT_MODES: Final = ("merge", "replace")


def _issue_dict(issue: CaseIssue, prefix: str = "") -> dict[str, Any]:
    out = {"severity": "error", **issue.to_dict()}
    if prefix:
        out["path"] = f"{prefix}.{issue.path}" if issue.path else prefix
    return out


def _latest_manifest(graph: Graph) -> language.Manifest | None:
    version = graph.latest_version
    return language.parse(version.manifest) if version is not None else None


def _reference_issues(
    case: ParsedCase, manifest: language.Manifest | None, index: int | None = None
) -> list[dict[str, Any]]:
    """Expectations naming a node or step the latest version does not have, as issues."""
    if manifest is None:
        return []
    issues: list[dict[str, Any]] = []
    for j, expectation in enumerate(case.expectations):
        problem = reference_problems(expectation, manifest)
        if problem is None:
            continue
        where = f"expectations[{j}]" if index is None else f"cases[{index}].expectations[{j}]"
        issue: dict[str, Any] = {
            "code": "expectation.reference",
            "severity": "error",
            "message": problem,
            "case_name": case.name,
            "expectation": j,
            "path": where,
        }
        if index is not None:
            issue["case"] = index
        issues.append(issue)
    return issues


def _redacted(document: Mapping[str, Any]) -> dict[str, Any]:
    """The case document with secret header values redacted: those runs keep secret and those any
    environment marks secret (``execution.cases.secrets``)."""
    return secrets.redacted_document(document, secrets.secret_header_names())


def _checked(graph: Graph, document: Any) -> tuple[ParsedCase, dict[str, Any]]:
    """The parsed case and the document to store; InvalidInput with every issue otherwise."""
    try:
        case = parse_case(document, limits=judge_limits())
    except CaseDocumentError as exc:
        issues = [_issue_dict(issue) for issue in exc.issues]
        raise InvalidInput(f"The test case has {len(issues)} problem(s).", issues=issues) from None
    issues = _reference_issues(case, _latest_manifest(graph))
    if issues:
        raise InvalidInput(
            f"The test case names what the latest version of {graph.name!r} does not have.", issues=issues
        )
    stored = _redacted(document)
    return parse_case(stored, limits=judge_limits()), stored


def _lock(graph: Graph) -> None:
    """Serialise the writes of one graph's cases (the case count limit holds under races)."""
    Graph.objects.select_for_update().filter(pk=graph.pk).values_list("pk", flat=True).get()


def _check_count(graph: Graph) -> None:
    """Inside the writing transaction: refuse (and so roll back) more than MAX_CASES cases."""
    count = GraphCase.objects.filter(graph=graph).count()
    if count > MAX_CASES:
        raise InvalidInput(
            f"A graph holds at most {MAX_CASES} test cases ({count} with this change); nothing was saved.",
            issues=[issue_dict("suite.too-many-cases", f"at most {MAX_CASES}", path="cases")],
        )


def _name_taken(graph: Graph, name: str) -> StateConflict:
    return StateConflict(
        f"Graph {graph.name!r} already has a test case named {name!r}.",
        issues=[issue_dict("case.duplicate-name", f"{name!r} is taken", path="name")],
    )


def test_case_create(*, graph: Graph, user: User, document: Any) -> GraphCase:
    """Save a new case of ``graph``. Refused (403) unless ``user`` may change the graph,
    InvalidInput (400) for a malformed case, StateConflict (409) for a name the graph already uses."""
    access_graph_for_edit(user, graph)
    case, stored = _checked(graph, document)
    try:
        with transaction.atomic():
            _lock(graph)
            row = GraphCase.objects.create(
                graph=graph, name=case.name, description=case.description, document=stored, created_by=user
            )
            _check_count(graph)
            graph_services.audit(user, "test_case.create", graph, name=case.name)
    except IntegrityError:
        raise _name_taken(graph, case.name) from None
    return row


def test_case_update(
    *, test_case: GraphCase, user: User, document: Any, base_revision: int | None = None
) -> GraphCase:
    """Replace a case's document (its name may change); its revision goes up by one. With
    ``base_revision`` (the client's ``If-Match``) the write happens only if the case is still at
    that revision, else StaleTestCase (409) with the case as it is now, and nothing is saved.
    Other errors as :func:`test_case_create`."""
    graph = test_case.graph
    access_graph_for_edit(user, graph)
    case, stored = _checked(graph, document)
    try:
        with transaction.atomic():
            rows = GraphCase.objects.filter(pk=test_case.pk)
            if base_revision is not None:
                rows = rows.filter(revision=base_revision)
            # updated_at by hand: a queryset update skips auto_now, and suite runs tell a changed
            # case set by it (execution.suites.services.cases_digest).
            updated = rows.update(
                name=case.name,
                description=case.description,
                document=stored,
                updated_at=timezone.now(),
                revision=F("revision") + 1,
            )
            if not updated:
                current = GraphCase.objects.filter(pk=test_case.pk).first()
                if current is None:
                    raise StateConflict(f"Test case {test_case.pk} was deleted meanwhile.")
                assert base_revision is not None  # an unconditional update only misses a deleted row
                raise StaleTestCase(test_case.pk, base_revision, _current(current))
            graph_services.audit(user, "test_case.update", graph, name=case.name, was=test_case.name)
    except IntegrityError:
        raise _name_taken(graph, case.name) from None
    test_case.refresh_from_db()
    return test_case


def _current(row: GraphCase) -> dict[str, Any]:
    """What a stale editor is shown of the case as it is now (its stored, redacted document)."""
    return {
        "id": row.pk,
        "name": row.name,
        "description": row.description,
        "document": row.document,
        "revision": row.revision,
        "updated_at": row.updated_at.isoformat(),
    }


def test_case_delete(*, test_case: GraphCase, user: User) -> None:
    """Delete a case (idempotent: deleting one already gone does nothing)."""
    access_graph_for_edit(user, test_case.graph)
    with transaction.atomic():
        GraphCase.objects.filter(pk=test_case.pk).delete()
        graph_services.audit(user, "test_case.delete", test_case.graph, name=test_case.name)


def test_cases_import(*, graph: Graph, user: User, text: str | bytes, mode: str = "merge") -> list[GraphCase]:
    """Import a ``kind: InferenceGraphTest`` file into ``graph``, all or nothing.

    ``merge``: cases are added, and those with a name the graph has replace it; ``replace``: the
    graph's cases become exactly the file's. InvalidInput (400) with every issue of the file (or a
    file for another graph); nothing changes then. Returns the imported cases in file order.
    """
    access_graph_for_edit(user, graph)
    if mode not in IMPORT_MODES:
        raise InvalidInput(f"mode is {' or '.join(IMPORT_MODES)}, got {mode!r}.")
    try:
        suite = load_suite(
            text,
            max_bytes=settings.STUDIO_MAX_MANIFEST_BYTES,
            limit_name="STUDIO_MAX_MANIFEST_BYTES",
            limits=judge_limits(),
        )
    except CaseDocumentError as exc:
        issues = [_issue_dict(issue) for issue in exc.issues]
        raise InvalidInput(f"The test file has {len(issues)} problem(s).", issues=issues) from None
    if suite.graph != graph.name:
        raise InvalidInput(
            f"The test file is for graph {suite.graph!r}, not {graph.name!r}.",
            issues=[issue_dict("suite.graph", "another graph's tests", path="graph")],
        )
    manifest = _latest_manifest(graph)
    issues = [issue for i, case in enumerate(suite.cases) for issue in _reference_issues(case, manifest, i)]
    if issues:
        raise InvalidInput(
            f"The test file names what the latest version of {graph.name!r} does not have.", issues=issues
        )
    with transaction.atomic():
        _lock(graph)
        names = secrets.secret_header_names()
        if mode == "replace":
            GraphCase.objects.filter(graph=graph).exclude(
                name__in=[case.name for case in suite.cases]
            ).delete()
        rows: list[GraphCase] = []
        for case in suite.cases:
            stored = secrets.redacted_document(case.document, names)
            row, created = GraphCase.objects.update_or_create(
                graph=graph,
                name=case.name,
                defaults={"description": case.description, "document": stored},
                create_defaults={"description": case.description, "document": stored, "created_by": user},
            )
            if not created:  # an import changes the case as an edit does: an editor's If-Match goes stale
                GraphCase.objects.filter(pk=row.pk).update(revision=F("revision") + 1)
                row.revision += 1
            rows.append(row)
        _check_count(graph)
        graph_services.audit(user, "test_case.import", graph, mode=mode, cases=len(rows))
    return rows


def test_cases_export(*, graph: Graph) -> str:
    """The graph's cases as one ``kind: InferenceGraphTest`` YAML document (by name)."""
    names = secrets.secret_header_names()
    document = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "graph": graph.name,
        # Redacted again: a name marked secret after a case was saved is not exported in clear.
        "cases": [
            secrets.redacted_document(row.document, names)
            for row in GraphCase.objects.filter(graph=graph).order_by("name")
        ],
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)


def _run_events(run: Run) -> list[dict[str, Any]]:
    """The run's engine events of its last attempt, in the shape ``execution.casecore`` reads."""
    rows = RunEvent.objects.filter(run=run, type="route.decided").order_by("seq")
    return [
        {
            "type": row.type,
            "node": row.data.get("node"),
            "step_index": row.data.get("step_index"),
            "data": row.data,
        }
        for row in rows
        if row.data.get("attempt") == run.attempt
    ]


def test_case_document_from_run(*, run: Run, name: str | None = None) -> dict[str, Any]:
    """The case document "save run as test" would write for a finished run (nothing is stored):
    its request, seed and environment; expecting its status, its body as a subset and the routes
    it took. StateConflict (409) when the run has no response yet."""
    if run.response_status is None:
        raise StateConflict(
            f"Run {run.pk} has no response yet ({run.status}); save it as a test once it has finished."
        )
    body: bytes | None = None
    if run.response_body is not None and run.response_encoding == "utf-8" and not run.response_truncated:
        body = run.response_body.encode()
    return case_document_from_run(
        name=name or f"run {str(run.pk)[:8]}",
        manifest=language.parse(run.version.manifest),
        request_body=run.request_body.encode(),
        request_headers=list((run.request_headers or {}).items()),
        content_type=run.request_content_type or None,
        status=run.response_status,
        response_body=body,
        events=_run_events(run),
        description=f"Saved from run {run.pk} of version {run.version.number}.",
        seed=run.seed,
        environment=run.environment_name or None,
    )


def test_case_from_run(
    *, run: Run, user: User, name: str | None = None, expectations: list[Any] | None = None
) -> GraphCase:
    """A new case of the run's graph from a finished run (:func:`test_case_document_from_run`).

    ``expectations``, when given, replaces the captured ones (the author kept only some of them);
    they are checked as any case's. Errors as :func:`test_case_create`.
    """
    document = test_case_document_from_run(run=run, name=name)
    if expectations is not None:
        document["expectations"] = expectations
    return test_case_create(graph=run.graph, user=user, document=document)
