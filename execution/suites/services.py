"""Every write of suite runs: starting one, moving it along as its cases' runs end, cancelling it.

A suite run never holds a worker of its own. Starting it stores one row per case and starts the
first ``concurrency`` cases as ordinary runs (``execution.services.run_create``: queued, sent to
the Celery workers, traced and streamed like any run). Whenever one of those runs ends, the
worker thread that ran it calls :func:`suite_run_ended`, which judges the case against the run's
stored trace, then records the verdict and starts the next pending case in one transaction (the
worker's group commit); the next case's run is claimed for that thread there, which runs it
without a round trip through the broker (``execution.suites.chain``). The last one finishes the
suite run. Every step is
idempotent and conditional (a case row moves ``pending -> running -> verdict`` only once), so the
workers, the web process and the reaper may advance the same suite run at once.

A worker that dies mid-run leaves its run to the run reaper (``reap_runs``: failed or requeued);
:func:`suite_reap`, called right after it, then judges what the reaper ended and moves the suite
run on, so no suite run stays running for longer than its runs do.
"""

from __future__ import annotations

import hashlib
import logging
import random
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from config.exceptions import BadRequest, Forbidden
from execution.access import access_environment_for_run, access_suite_for_cancel, can_use_environment
from execution.casecore import (
    MAX_CASES,
    CaseDocumentError,
    ParsedCase,
    parse_case,
)
from execution.cases.limits import judge_limits
from execution.cases.local import environment_named, without_redacted
from execution.cases.models import GraphCase
from execution.errors import InvalidInput, StateConflict
from execution.models import Environment, Run
from execution.services import fairshare, recall, runs, writes
from execution.suites import events as suite_events
from execution.suites.gate import trust_of
from execution.suites.judging import judge_timed
from execution.suites.latency import suite_budget_verdict
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs import language
from graphs import services as graph_services
from graphs.language import issue_dict
from graphs.models import Graph, GraphVersion

logger = logging.getLogger(__name__)

Outcome = SuiteCaseResult.Outcome


def _issue(path: str, message: str, code: str) -> dict[str, Any]:
    return issue_dict(code, message, path=path)


# --- the case set ---------------------------------------------------------------------------------


def cases_digest(cases: Iterable[tuple[int, Any]]) -> str:
    """sha256 of a case set: each case's id and when it last changed, by id. A suite run that ran
    the graph's whole current set has the digest :func:`current_cases_digest` gives."""
    text = ";".join(f"{pk}@{changed.isoformat()}" for pk, changed in sorted(cases))
    return hashlib.sha256(text.encode()).hexdigest()


def current_cases_digest(graph: Graph) -> str:
    return cases_digest(GraphCase.objects.filter(graph=graph).values_list("pk", "updated_at"))


# --- starting --------------------------------------------------------------------------------------


def _select_cases(graph: Graph, case_ids: Sequence[int] | None) -> list[GraphCase]:
    rows = list(GraphCase.objects.filter(graph=graph).order_by("name", "pk"))
    if not rows:
        raise StateConflict(
            f"Graph {graph.name!r} has no test cases yet: add one (or save a run as a test) first.",
            extra={"code": "no_cases"},
        )
    if case_ids is None:
        return rows
    if len(case_ids) > MAX_CASES:
        raise InvalidInput(
            f"A suite run takes at most {MAX_CASES} case ids (a graph holds no more); got {len(case_ids)}.",
            issues=[_issue("cases", f"at most {MAX_CASES} ids", "suite.too-many-cases")],
        )
    if not case_ids:
        raise InvalidInput(
            "cases is empty: give the ids of the cases to run, or leave it out to run them all.",
            issues=[_issue("cases", "no case ids", "suite.no-cases")],
        )
    known = {row.pk for row in rows}
    unknown = [
        _issue(f"cases[{i}]", f"graph {graph.name!r} has no test case {pk}", "suite.case-unknown")
        for i, pk in enumerate(case_ids)
        if pk not in known
    ]
    if unknown:
        raise InvalidInput(unknown[0]["message"] + ".", issues=unknown)
    wanted = set(case_ids)
    return [row for row in rows if row.pk in wanted]


def _case_environment(
    document: Mapping[str, Any], user: User, cache: dict[str | None, Environment]
) -> Environment | str:
    """The environment a case names (else the system default), or why it cannot run there."""
    name = document.get("environment")
    found = environment_named(name, cache)
    # Another user's private environment gets the answer a missing one gets: its existence is
    # not disclosed.
    if found is None or not can_use_environment(found, user):
        return f"the case's environment {name!r} does not exist (any more)"
    return found


def suite_start(
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    environment: Environment | None = None,
    case_ids: Sequence[int] | None = None,
    seed: int | None = None,
    concurrency: int | None = None,
    slots: int = 0,
    kserve_version: str | None = None,
) -> SuiteRun:
    """Start a suite run of ``graph``'s cases (all, or ``case_ids``) against ``version``.

        With ``environment`` every case runs there; without, each case in the one it names, else in
        the system's default; with ``kserve_version`` (a canonical release name) every case runs as that
    KServe release instead of its environment's. ``seed`` seeds the Splitter draws of cases that fix none (two suite runs
        with one seed draw alike: that is how a comparison is fair). Returns the suite run, running,
        with its first cases queued on the workers once the transaction commits.

    Raises StateConflict (409) when the graph has no cases, InvalidInput (400) for unknown case ids,
    Unprocessable (422) for a version KServe would reject, InvalidInput (400, as for an unknown
    one) for an environment ``user`` may not use, TooManyInFlight (429) when ``user`` may not have
    ``slots`` more suite runs in flight (``SUITE_MAX_IN_FLIGHT_PER_USER``), checked in the
    transaction that stores this one: a start through the API asks for 1, the first of a
    comparison's pair for 2 (and the second for 0); 0 (the command line) is not checked.
    """
    graph_services.ensure_deployable(graph, version, before="running it")
    if environment is not None:
        access_environment_for_run(user, environment)
    rows = _select_cases(graph, case_ids)
    cache: dict[str | None, Environment] = {}
    now = timezone.now()
    prepared: list[SuiteCaseResult] = []
    for position, row in enumerate(rows):
        result = SuiteCaseResult(
            position=position, case=row, case_ref=row.pk, name=row.name, document=row.document
        )
        where = environment if environment is not None else _case_environment(row.document, user, cache)
        if isinstance(where, str):
            result.outcome, result.error, result.finished_at = Outcome.ERROR, where, now
        else:
            result.environment = where
            try:
                parse_case(row.document, limits=judge_limits())
            except CaseDocumentError as exc:
                result.outcome, result.finished_at = Outcome.ERROR, now
                result.error = f"the stored case no longer reads: {exc}"
        prepared.append(result)
    # The suite run's environment: the one asked for, else the one every case runs in (if so).
    used = {r.environment.pk: r.environment for r in prepared if r.environment is not None}
    shared_environment = environment or (next(iter(used.values())) if len(used) == 1 else None)
    with writes.write_turn(), transaction.atomic():
        if slots:
            fairshare.ensure_suite_slots(user, slots)
        suite = SuiteRun.objects.create(
            graph=graph,
            version=version,
            environment=shared_environment,
            environment_name=shared_environment.name if shared_environment is not None else "",
            status=SuiteRun.Status.RUNNING,
            concurrency=concurrency or settings.SUITE_CONCURRENCY,
            seed=seed if seed is not None else runs.new_seed(),
            kserve_version=kserve_version or "",
            cases_digest=cases_digest((row.pk, row.updated_at) for row in rows),
            total=len(rows),
            created_by=user,
            started_at=now,
        )
        for result in prepared:
            result.suite = suite
        SuiteCaseResult.objects.bulk_create(prepared)
        _recount(suite)
        items: list[tuple[str, dict[str, Any]]] = [("suite.started", {"total": suite.total})]
        items += [
            ("case.finished", _finished_data(result, suite))
            for result in prepared
            if result.outcome != "pending"
        ]
        with suite_events.batched(suite, first=items):
            _fill_locked(suite)
    suite.refresh_from_db()
    return suite


def _case_seed(suite: SuiteRun, case: ParsedCase, case_ref: int) -> int:
    if case.seed is not None:
        return case.seed
    return random.Random(f"{suite.seed}:{case_ref}").randrange(2**53)


def _start_case(suite: SuiteRun, result: SuiteCaseResult, keep: list[Run] | None = None) -> None:
    """Send one pending case to the workers as a run (inside the caller's locked transaction).
    With an empty ``keep``, the run is not sent but stored claimed for the calling worker thread
    and kept there: that thread runs it once the transaction commits (no round trip through the
    broker, no write of its own for the claim)."""
    hold = keep is not None and not keep
    try:
        case = without_redacted(parse_case(result.document, limits=judge_limits()), [])
        environment = result.environment
        if environment is None:
            raise InvalidInput("the environment the case was to run in was deleted")
        headers = {k: v for k, v in case.request.headers if k.lower() != "content-type"}
        request: dict[str, Any] = {
            "graph": suite.graph,
            "version": suite.version,
            "user": suite.created_by,
            "payload": case.request.body.decode("utf-8", errors="replace"),
            "content_type": case.request.content_type,
            "headers": headers,
            "environment": environment,
            "seed": _case_seed(suite, case, result.case_ref),
            "kserve_version": suite.kserve_version or None,
        }
        # Its writes are one atomic block: a refusal leaves nothing. Not capped: the suite run holds
        # a slot of its own kind (SUITE_MAX_IN_FLIGHT_PER_USER).
        run = runs.run_create_claimed(**request) if hold else runs.run_create(**request)[0]
    except (BadRequest, Forbidden, CaseDocumentError) as exc:
        reason = getattr(exc, "detail", None) or str(exc)
        _record(suite, result, outcome=Outcome.ERROR, error=f"the case could not start: {reason}")
        return
    if hold and keep is not None:
        keep.append(run)
    now = timezone.now()
    SuiteCaseResult.objects.filter(pk=result.pk).update(outcome=Outcome.RUNNING, run=run, started_at=now)
    suite_events.emit_for(
        suite, "case.started", {"case": result.case_ref, "name": result.name, "run": str(run.pk)}
    )


# --- moving a suite run along ----------------------------------------------------------------------


def _lock(suite_id: uuid.UUID | str) -> SuiteRun:
    """The suite run, its row locked for the rest of the transaction, so what is read next is
    current: ``FOR UPDATE`` on PostgreSQL; on SQLite every write transaction begins by taking the
    database's write lock (``BEGIN IMMEDIATE``, config/settings.py)."""
    return (
        SuiteRun.objects.select_for_update(of=("self",))
        .select_related("graph", "version", "created_by")
        .defer("version__manifest", "version__layout")  # starting a case reads neither
        .get(pk=suite_id)
    )


def _recount(suite: SuiteRun) -> None:
    by_outcome = dict(
        SuiteCaseResult.objects.filter(suite=suite).values_list("outcome").annotate(n=Count("pk")).order_by()
    )
    suite.passed = by_outcome.get(Outcome.PASSED, 0)
    suite.failed = by_outcome.get(Outcome.FAILED, 0)
    suite.errors = by_outcome.get(Outcome.ERROR, 0)
    suite.cancelled = by_outcome.get(Outcome.CANCELLED, 0)
    SuiteRun.objects.filter(pk=suite.pk).update(
        passed=suite.passed, failed=suite.failed, errors=suite.errors, cancelled=suite.cancelled
    )


def _finished_data(result: SuiteCaseResult, suite: SuiteRun) -> dict[str, Any]:
    return {
        "case": result.case_ref,
        "name": result.name,
        "outcome": result.outcome,
        "run": str(result.run_id) if result.run_id else None,
        "failures": result.failures,
        "error": result.error,
        "duration_ms": result.duration_ms,
        "counts": suite.counts(),
    }


# The suite run's count of each final outcome.
_COUNTER = {
    Outcome.PASSED: "passed",
    Outcome.FAILED: "failed",
    Outcome.ERROR: "errors",
    Outcome.CANCELLED: "cancelled",
}


def _count(suite: SuiteRun, outcome: str, n: int = 1) -> None:
    """Add ``n`` cases that reached ``outcome`` to the locked suite run's counts (no recount: the
    rows are not read again for every case)."""
    field = _COUNTER[Outcome(outcome)]
    setattr(suite, field, getattr(suite, field) + n)
    SuiteRun.objects.filter(pk=suite.pk).update(**{field: F(field) + n})


def _record(suite: SuiteRun, result: SuiteCaseResult, **verdict: Any) -> bool:
    """Write a case's verdict once (from running or pending), count it, emit ``case.finished``."""
    verdict.setdefault("finished_at", timezone.now())
    if not SuiteCaseResult.objects.filter(
        pk=result.pk, outcome__in=(Outcome.PENDING, Outcome.RUNNING)
    ).update(**verdict):
        return False
    for key, value in verdict.items():
        setattr(result, key, value)
    _count(suite, result.outcome)
    suite_events.emit_for(suite, "case.finished", _finished_data(result, suite))
    return True


def _fill_locked(suite: SuiteRun, keep: list[Run] | None = None) -> None:
    """Start pending cases up to the suite's concurrency, or finish the suite run when none is
    left; the caller holds the suite's lock (:func:`_lock`). ``keep``: see :func:`_start_case`."""
    if suite.is_terminal:
        return
    rows = SuiteCaseResult.objects.filter(suite=suite)
    any_started = False
    if suite.cancel_requested:
        dropped = rows.filter(outcome=Outcome.PENDING).update(
            outcome=Outcome.CANCELLED, finished_at=timezone.now()
        )
        if dropped:
            _count(suite, Outcome.CANCELLED, dropped)
    else:
        # A case whose run has ended holds no slot, judged or not, except for a thread that chains
        # (``keep``): the thread that ran it is judging it and will start and run the next case in
        # that slot itself (else a case here would go through the broker and that thread idle).
        # Should that thread die first, the reaper's pass (``suite_reap``) frees the slot.
        running = rows.filter(outcome=Outcome.RUNNING)
        if keep is None:
            running = running.exclude(run__status__in=Run.TERMINAL)
        in_flight = running.count()
        free = suite.concurrency - in_flight
        if free > 0:
            for result in rows.filter(outcome=Outcome.PENDING).select_related("environment")[:free]:
                _start_case(suite, result, keep)
                any_started = True
        if any_started or in_flight:
            return
    if rows.filter(outcome__in=(Outcome.PENDING, Outcome.RUNNING)).exists():
        return
    _recount(suite)  # once, at the end: the final counts are the rows' own
    now = timezone.now()
    if suite.cancel_requested:
        status = SuiteRun.Status.CANCELLED
    elif suite.failed:
        status = SuiteRun.Status.FAILED
    elif suite.errors:
        status = SuiteRun.Status.ERROR
    else:
        status = SuiteRun.Status.PASSED
    started = suite.started_at or suite.created_at
    duration = round((now - started).total_seconds() * 1000, 3)
    verdict = suite_budget_verdict(suite)
    if SuiteRun.objects.filter(pk=suite.pk, status=SuiteRun.Status.RUNNING).update(
        status=status, finished_at=now, duration_ms=duration, budgets=verdict
    ):
        suite.status, suite.finished_at, suite.duration_ms, suite.budgets = status, now, duration, verdict
        if status == SuiteRun.Status.PASSED:
            _audit_trusted_pass(suite)
        suite_events.emit_for(
            suite,
            suite_events.FINAL_EVENT,
            {"status": status, "counts": suite.counts(), "duration_ms": duration, "budgets": verdict or None},
        )


def _audit_trusted_pass(suite: SuiteRun) -> None:
    """A passing verdict the export gate trusts (``execution.suites.gate``) may open the gate for
    its version: recorded as ``version.tests_passed``, in the transaction that finishes the suite
    run, so every verdict that can open the gate is in the audit log before it can be used (an
    export by GET writes nothing; a POST export records its own decision too)."""
    trust = trust_of(suite.graph_id, {})
    if not trust.counts(
        starter_id=suite.created_by_id,
        starter_is_superuser=suite.created_by.is_superuser,
        environment_id=suite.environment_id,
    ):
        return
    graph_services.audit(
        suite.created_by,
        "version.tests_passed",
        suite.graph,
        suite.version,
        suite_run=str(suite.pk),
        environment=suite.environment_name or None,
        cases_digest=suite.cases_digest,
        gate=suite.graph.require_passing_tests,
    )


def suite_advance(
    suite_id: uuid.UUID | str,
    *,
    run_id: uuid.UUID | str | None = None,
    keep: list[Run] | None = None,
    here: recall.EndedRun | None = None,
    ended: Sequence[SuiteCaseResult] | None = None,
) -> None:
    """Judge the cases whose runs have ended (only ``run_id``'s when given: the worker that ran it
    judges its own case, not its neighbours'), start the next ones, and finish the suite run when
    nothing is left. Idempotent; safe from any number of processes at once.

    ``keep`` (a worker thread's list, empty): the first case started here is not sent to the broker
    but appended to it, once its transaction has committed; the caller must run it (or send it).
    ``here``: the run this thread just executed (``recall.ended_here``), judged from what the worker
    holds instead of reading its run and events back. ``ended``: the cases to judge, already read
    by the caller (as this would read them)."""
    if ended is None:
        rows = SuiteCaseResult.objects.filter(suite__pk=suite_id, outcome=Outcome.RUNNING).filter(
            Q(run__isnull=True) | Q(run__status__in=Run.TERMINAL)
        )
        ended = list(rows.filter(run__pk=run_id) if run_id is not None else rows)

    def locked(action: Callable[[SuiteRun, list[Run] | None], None]) -> None:
        # Through the group commit (one transaction with the other runs' writes of this process).
        # The write may be tried again (a busy database): only what its committed try started is kept.
        def work() -> list[Run]:
            started: list[Run] | None = [] if keep is not None and not keep else None
            action(_lock(suite_id), started)
            return started or []

        kept = writes.GROUP.write(work)
        if keep is not None:
            keep.extend(kept)

    manifests: dict[int, language.Manifest] = {}
    judged = ended
    if not judged:
        locked(_fill_locked)
    for result in judged:
        stored = None
        if here is not None and str(result.run_id) == str(here.run.pk):  # judged from memory
            run: Run | None = here.run
            stored, manifests[here.run.version_id] = here.events, here.manifest
        elif result.run_id:
            run = Run.objects.select_related("version").filter(pk=result.run_id).first()
        else:
            run = None
        # Outside the lock: a big body takes a while.
        verdict, spent = judge_timed(result, run, manifests, stored)

        def write(
            suite: SuiteRun,
            started: list[Run] | None,
            result: SuiteCaseResult = result,
            verdict: dict[str, Any] = verdict,
            spent: float = spent,
        ) -> None:
            # The verdict, the next case (or the suite run's end) in one transaction: nobody sees
            # every case judged and the suite run still running. The judging time it took counts
            # against the suite run's budget (GRAPH_TEST_SUITE_JUDGE_SECONDS).
            with suite_events.batched(suite):
                if _record(suite, result, **verdict) and spent:
                    SuiteRun.objects.filter(pk=suite.pk).update(judge_seconds=F("judge_seconds") + spent)
                _fill_locked(suite, started)

        locked(write)


def suite_run_ended(*, run_id: uuid.UUID | str, take: bool = False) -> tuple[bool, Run | None]:
    """Called when a run has ended: judge its case and move its suite run along, if it has one.

    Returns whether the run was a suite run's case, and, with ``take`` (a worker thread that will
    run it at once), the next case's run, started and claimed for this thread in the same
    transaction but not sent to the broker: the caller must run it
    (``execution.services.worker.run_claimed``)."""
    here = recall.ended_here(str(run_id))
    # Its case, and whether it is to be judged (running, its run ended), in one read.
    case = SuiteCaseResult.objects.filter(run_id=run_id).annotate(run_status=F("run__status")).first()
    if case is None:
        return False, None
    ended = [case] if case.outcome == Outcome.RUNNING and case.run_status in Run.TERMINAL else []
    keep: list[Run] | None = [] if take else None
    suite_advance(case.suite_id, run_id=run_id, keep=keep, here=here, ended=ended)
    return True, (keep[0] if keep else None)


def suite_reap() -> list[str]:
    """Advance every suite run still running (after the run reaper ended what it could): the
    cases whose runs a dead worker left are judged, and the suite run moves on. Returns their ids."""
    advanced = []
    for suite_id in SuiteRun.objects.filter(status=SuiteRun.Status.RUNNING).values_list("pk", flat=True):
        suite_advance(suite_id)
        advanced.append(str(suite_id))
    return advanced


# --- cancelling ----------------------------------------------------------------------------------


def suite_cancel(*, suite: SuiteRun, user: User) -> SuiteRun:
    """Cancel a suite run: pending cases are dropped, running ones cancelled (as runs are); it ends
    ``cancelled`` once they have stopped, saying how many cases finished. Idempotent."""
    access_suite_for_cancel(user, suite)
    with writes.write_turn(), transaction.atomic():
        flagged = SuiteRun.objects.filter(pk=suite.pk, status=SuiteRun.Status.RUNNING).update(
            cancel_requested=True
        )
        if flagged:
            _fill_locked(_lock(suite.pk))
    if flagged:
        running = SuiteCaseResult.objects.filter(suite=suite, outcome=Outcome.RUNNING, run__isnull=False)
        for result in running.select_related("run", "run__graph"):
            assert result.run is not None
            runs.run_cancel(run=result.run, user=suite.created_by)
        suite_advance(suite.pk)
    suite.refresh_from_db()
    return suite
