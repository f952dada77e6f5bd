"""Every read of suite runs: one, a version's list, the comparison of two, and each version's green
state (what ``graphs`` shows and its export gate asks, through ``graphs.suitestate``).

A suite run is readable by whoever may read every run it made and see every environment its
cases run in (``execution.access.suites_visible_to``), and by nobody else:
to any other user it, its events and its comparisons do not exist (404). Suite runs in shared
environments (the system default among them) are readable by every signed-in user, as graphs are.
Which of their verdicts the export gate trusts is ``execution.suites.gate``'s rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Final

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import OuterRef, Q, QuerySet, Subquery

from execution.access import suites_visible_to
from execution.casecore import CaseResult, DiffEntry, ExpectationResult, compare_runs
from execution.cases.models import GraphCase
from execution.errors import InvalidInput, NoSuchThing
from execution.models import Run
from execution.suites import gate
from execution.suites.gate import GateTrust, prime_trust, trust_of
from execution.suites.judging import observed_from_run
from execution.suites.models import SuiteCaseResult, SuiteRun
from execution.suites.services import cases_digest, current_cases_digest
from graphs import language
from graphs.models import Graph, GraphVersion
from graphs.suitestate import Memo


def _suites(user: User) -> QuerySet[SuiteRun]:
    return SuiteRun.objects.select_related("graph", "version").filter(suites_visible_to(user))


def suite_get(*, suite_id: uuid.UUID | str, user: User, with_results: bool = True) -> SuiteRun:
    """Suite run ``suite_id`` if ``user`` may read it (``suites_visible_to``); NoSuchThing (404)
    otherwise, as if there were none."""
    qs = _suites(user)
    if with_results:
        qs = qs.prefetch_related("results")
    suite = qs.filter(pk=suite_id).first()
    if suite is None:
        raise NoSuchThing(f"There is no suite run {suite_id}.")
    return suite


def suite_exists(*, suite_id: uuid.UUID | str, user: User) -> bool:
    return SuiteRun.objects.filter(suites_visible_to(user), pk=suite_id).exists()


def suite_list(*, graph: Graph, user: User, version: int | None = None) -> QuerySet[SuiteRun]:
    """The graph's suite runs ``user`` may read, newest first; ``version`` (a number) narrows them
    to one version."""
    qs = _suites(user).filter(graph=graph)
    if version is not None:
        qs = qs.filter(version__number=version)
    return qs.order_by("-created_at")


def suite_pair(*, a: uuid.UUID, b: uuid.UUID, user: User) -> tuple[SuiteRun, SuiteRun]:
    """Suite runs ``a`` and ``b`` of one graph; InvalidInput (400) when they test two graphs."""
    first = suite_get(suite_id=a, user=user)
    second = suite_get(suite_id=b, user=user)
    if first.graph_id != second.graph_id:
        raise InvalidInput(
            f"Suite runs a and b test two graphs ({first.graph.name!r}, {second.graph.name!r}); "
            "compare suite runs of one graph."
        )
    return first, second


def suite_compare(*, a: SuiteRun, b: SuiteRun) -> dict[str, Any]:
    """Both suite runs case by case (matched by case id) and step by step, with the semantic diff
    of their versions. Call once both are terminal."""
    old, new = (language.manifest_from_document(s.version.manifest) for s in (a, b))
    changes = language.diff(old, new)
    results_b = {r.case_ref: r for r in b.results.all()}
    runs = {
        run.pk: run
        for run in Run.objects.filter(
            pk__in=[r.run_id for s in (a, b) for r in s.results.all() if r.run_id is not None]
        )
    }
    cases = []
    seen = set()
    for left in a.results.all():
        seen.add(left.case_ref)
        cases.append(_case_comparison(left, results_b.get(left.case_ref), runs))
    for right in b.results.all():
        if right.case_ref not in seen:
            cases.append(_case_comparison(None, right, runs))
    return {
        "manifest_diff": {"from": a.version.number, "to": b.version.number, **changes.to_dict()},
        "cases": cases,
    }


def _side(result: SuiteCaseResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"outcome": result.outcome, "run": str(result.run_id) if result.run_id else None}


def _case_comparison(
    left: SuiteCaseResult | None, right: SuiteCaseResult | None, runs: dict[uuid.UUID, Run]
) -> dict[str, Any]:
    some = left if left is not None else right
    assert some is not None
    run_a = runs.get(left.run_id) if left is not None and left.run_id else None
    run_b = runs.get(right.run_id) if right is not None and right.run_id else None
    comparison = None
    if (
        run_a is not None
        and run_b is not None
        and run_a.response_status is not None
        and run_b.response_status is not None
    ):
        comparison = _bounded_steps(
            compare_runs(observed_from_run(run_a), observed_from_run(run_b)).as_dict()
        )
    outcome_a = left.outcome if left is not None else None
    outcome_b = right.outcome if right is not None else None
    changed = outcome_a != outcome_b or (comparison is not None and not comparison["same"])
    return {
        "case": some.case_ref,
        "name": some.name,
        "a": _side(left),
        "b": _side(right),
        "changed": changed,
        "comparison": comparison,
    }


def _bounded_steps(comparison: dict[str, Any]) -> dict[str, Any]:
    """``comparison`` with at most ``RUN_DETAIL_STEPS`` of its steps (as a run's detail holds): the
    steps that changed first, then the others, each kept in trace order; ``steps_total`` and
    ``steps_truncated`` say how many there were. Two runaway runs compared step by step would
    otherwise answer tens of thousands of steps per case."""
    steps = comparison.get("steps") or []
    limit = max(0, settings.RUN_DETAIL_STEPS)
    comparison["steps_total"] = len(steps)
    comparison["steps_truncated"] = len(steps) > limit
    if len(steps) > limit:
        changed = [i for i, step in enumerate(steps) if step.get("changed")]
        same = [i for i, step in enumerate(steps) if not step.get("changed")]
        keep = sorted((changed + same)[:limit]) if len(changed) < limit else changed[:limit]
        comparison["steps"] = [steps[i] for i in keep]
    return comparison


def case_result(row: SuiteCaseResult) -> CaseResult:
    """A judged case as ``execution.casecore`` reports it (the console lines, JUnit)."""
    failures = tuple(
        ExpectationResult(
            index=f["index"],
            kind=f["kind"],
            passed=False,
            message=f["message"],
            expected=f.get("expected"),
            actual=f.get("actual"),
            diff=tuple(
                DiffEntry(path=d["path"], op=d["op"], expected=d.get("expected"), actual=d.get("actual"))
                for d in f.get("diff") or ()
            ),
        )
        for f in row.failures or ()
    )
    verdict = row.outcome if row.outcome in ("passed", "failed", "error") else "error"
    return CaseResult(
        name=row.name,
        outcome=verdict,
        expectations=failures,
        status=row.status_code,
        duration_ms=row.duration_ms,
        error=row.error or (None if verdict != "error" else row.outcome),
    )


def finished_results(*, suite_id: uuid.UUID | str, after: Iterable[int]) -> list[tuple[int, CaseResult]]:
    """The cases of a suite run judged so far, but those at the positions in ``after``."""
    rows = SuiteCaseResult.objects.filter(suite__pk=suite_id, outcome__in=SuiteCaseResult.DONE).exclude(
        position__in=list(after)
    )
    return [(row.position, case_result(row)) for row in rows.order_by("position")]


def finished_budgets(*, suite_id: uuid.UUID | str) -> dict[str, Any] | None:
    """The budget verdict of a suite run that has ended (``{}``: its graph states none), None while
    it runs."""
    row = SuiteRun.objects.filter(pk=suite_id, status__in=SuiteRun.TERMINAL).values_list("budgets", flat=True)
    found = list(row[:1])
    return dict(found[0] or {}) if found else None


# --- green state (graphs.suitestate) -----------------------------------------------------------------
# ``memo`` (one request's) holds, by key: ("digest", graph id) -> the graph's current case digest;
# ("tests", version id) -> the version's latest suite run or None; ("passing", graph id) -> its last
# passing version number or None. ``prime`` fills them for a whole page in a fixed number of queries.


def _digest(graph_id: int, memo: Memo) -> str:
    if ("digest", graph_id) not in memo:
        memo["digest", graph_id] = current_cases_digest(Graph(pk=graph_id))
    return str(memo["digest", graph_id])


def _prime_digests(graph_ids: set[int], memo: Memo) -> None:
    """Every graph's current case digest, from one query."""
    missing = {pk for pk in graph_ids if ("digest", pk) not in memo}
    if not missing:
        return
    cases: dict[int, list[tuple[int, Any]]] = {pk: [] for pk in missing}
    for graph_id, pk, changed in GraphCase.objects.filter(graph_id__in=missing).values_list(
        "graph_id", "pk", "updated_at"
    ):
        cases[graph_id].append((pk, changed))
    for graph_id, rows in cases.items():
        memo["digest", graph_id] = cases_digest(rows)


def tests_summary(suite: SuiteRun | None, current_digest: str, trust: GateTrust) -> dict[str, Any] | None:
    """``gate``: whether the export gate trusts this suite run's verdict (where it ran, who started it)."""
    if suite is None:
        return None
    return {
        "suite_run": str(suite.pk),
        "status": suite.status,
        "counts": suite.counts(),
        "environment": suite.environment_name or None,
        "current": suite.cases_digest == current_digest,
        "gate": _trusted(trust, suite.created_by_id, suite.created_by.is_superuser, suite.environment_id),
        "finished_at": suite.finished_at,
    }


def _trusted(trust: GateTrust, starter_id: int, is_superuser: bool, environment_id: int | None) -> bool:
    return trust.counts(
        starter_id=starter_id, starter_is_superuser=is_superuser, environment_id=environment_id
    )


class SuiteTestState:
    """What ``graphs`` asks about tests (``graphs.suitestate.TestStateProvider``). ``memo`` keeps
    what one request has read (each graph's current case digest: one query per graph, not per
    version; a primed page's answers)."""

    def version_tests(self, version: GraphVersion, memo: Memo) -> dict[str, Any] | None:
        key = ("tests", version.pk)
        latest = (
            memo[key]
            if key in memo
            else SuiteRun.objects.filter(version_id=version.pk)
            .select_related("created_by")
            .order_by("-created_at")
            .first()
        )
        if latest is None:
            return None
        return tests_summary(latest, _digest(version.graph_id, memo), trust_of(version.graph_id, memo))

    def last_passing_version(self, graph: Graph, memo: Memo) -> int | None:
        """The highest version that is green on the graph's current cases, by the verdicts the
        export gate trusts."""
        if ("passing", graph.pk) in memo:
            return memo["passing", graph.pk]  # type: ignore[no-any-return]
        return _highest_green(_verdicts(graph, _digest(graph.pk, memo), trust_of(graph.pk, memo)))

    def gate_verdict(self, graph: Graph, version: GraphVersion) -> dict[str, Any] | None:
        """The passing suite run that opens the gate for ``version``: the latest verdict the gate
        trusts on the graph's current cases, when it is a pass (else None)."""
        memo: Memo = {}
        verdicts = _verdicts(graph, current_cases_digest(graph), trust_of(graph.pk, memo), version=version)
        verdict = verdicts.get(version.number)
        if verdict is None or verdict[0] != PASSED:
            return None
        suite = SuiteRun.objects.select_related("created_by").get(pk=verdict[1])
        return {
            "suite_run": str(suite.pk),
            "environment": suite.environment_name or None,
            "started_by": suite.created_by.get_username(),
        }

    def gate_environment_ids(self, names: Sequence[str]) -> list[int]:
        return gate.environment_ids(names)

    def gate_environment_names(self, graph: Graph) -> list[str]:
        return gate.environment_names(graph)

    def prime(self, versions: Sequence[GraphVersion], graphs: Sequence[Graph], memo: Memo) -> None:
        """The latest suite run of each of ``versions`` (one query), the current case digest of
        every graph involved (one) and the last passing version of each of ``graphs`` (one)."""
        graph_ids = {v.graph_id for v in versions} | {g.pk for g in graphs}
        _prime_digests(graph_ids, memo)
        prime_trust(graph_ids, memo)
        if versions:
            ids = [v.pk for v in versions]
            newest = SuiteRun.objects.filter(version_id=OuterRef("version_id")).order_by("-created_at")
            found = {
                suite.version_id: suite
                for suite in SuiteRun.objects.filter(version_id__in=ids)
                .filter(pk=Subquery(newest.values("pk")[:1]))
                .select_related("created_by")
            }
            for pk in ids:
                memo["tests", pk] = found.get(pk)
        if graphs:
            current = Q(pk__in=[])
            for graph in graphs:
                current |= Q(graph_id=graph.pk, cases_digest=memo["digest", graph.pk])
            rows = SuiteRun.objects.filter(current, status__in=_VERDICTS).order_by("-finished_at")
            latest: dict[int, dict[int, tuple[str, Any]]] = {g.pk: {} for g in graphs}
            for graph_id, number, status, pk, *who in rows.values_list(*_VERDICT_FIELDS):
                if _trusted(memo["trust", graph_id], *who):
                    latest[graph_id].setdefault(number, (status, pk))
            for graph in graphs:
                memo["passing", graph.pk] = _highest_green(latest[graph.pk])


PASSED: Final = SuiteRun.Status.PASSED
_VERDICTS: Final = (SuiteRun.Status.PASSED, SuiteRun.Status.FAILED, SuiteRun.Status.ERROR)


# What a verdict row is read with: whose it is and where it ran decide whether the gate trusts it.
_VERDICT_FIELDS: Final = (
    "graph_id",
    "version__number",
    "status",
    "pk",
    "created_by_id",
    "created_by__is_superuser",
    "environment_id",
)


def _highest_green(verdicts: dict[int, tuple[str, Any]]) -> int | None:
    return max((number for number, (status, _) in verdicts.items() if status == PASSED), default=None)


def _verdicts(
    graph: Graph, digest: str, trust: GateTrust, version: GraphVersion | None = None
) -> dict[int, tuple[str, Any]]:
    """Each version's latest verdict (passed, failed or error: a cancelled suite run judges
    nothing) on the case set ``digest`` among the suite runs the gate trusts, by version number:
    (status, suite run id). An untrusted verdict neither opens nor closes the gate."""
    rows = SuiteRun.objects.filter(graph=graph, cases_digest=digest, status__in=_VERDICTS)
    if version is not None:
        rows = rows.filter(version=version)
    latest: dict[int, tuple[str, Any]] = {}
    for _, number, status, pk, *who in rows.order_by("-finished_at").values_list(*_VERDICT_FIELDS):
        if _trusted(trust, *who):
            latest.setdefault(number, (status, pk))
    return latest
