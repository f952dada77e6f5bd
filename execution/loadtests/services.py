"""Every write of load tests: starting one, running it on a worker, cancelling it, reaping it.

A load test is one Celery task (``execution.run_load_test``) that holds one worker thread: the
engine runs on a thread of its own with an event loop (as a run's does), sending the graph's
requests ``concurrency`` at a time through one pooled client made by the one client factory with
the environment's URL guard, so a load test only ever reaches the hosts its environment may reach.
The task's thread stores the running aggregate and a ``load.progress`` event about twice a
second, beats the heartbeat, and reads the cancel flag from the row; the load test ends
``finished``, ``stopped`` (``LOAD_TEST_MAX_SECONDS``), ``cancelled`` or ``failed``, with its
summary judged against the graph's latency budgets.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from config.exceptions import BadRequest
from execution import bus
from execution.access import access_environment_for_run
from execution.casecore import CaseDocumentError, parse_case
from execution.cases.limits import judge_limits
from execution.cases.local import without_redacted
from execution.cases.models import GraphCase
from execution.engine import make_client
from execution.engine.config import DEFAULT_DEADLINE_S
from execution.engine.headers import canonical_header_key
from execution.engine.load import LoadOutcome, LoadStats, run_load
from execution.errors import NotPermitted
from execution.loadtests import events as load_events
from execution.loadtests.models import LoadTest
from execution.models import DEFAULT_STEP_TIMEOUT, Environment
from execution.services import environments, fairshare, run_request, runs, writes
from graphs import access as graph_access
from graphs import language
from graphs import services as graph_services
from graphs.language.budgets import BudgetError, check_timeouts, judge, parse_budgets
from graphs.models import Graph, GraphVersion

logger = logging.getLogger(__name__)

# Seconds between two stores of the running aggregate (and ``load.progress`` events): the live
# progress bar moves twice a second, and a 600 s load test writes at most 1,200 events.
PROGRESS_SECONDS = 0.5
# Connections one load test's client keeps per scheme: enough for LOAD_TEST_MAX_CONCURRENCY
# requests each fanning out to a few Ensemble steps at once.
MAX_CONNECTIONS = 256


def _issue(path: str, message: str, code: str) -> dict[str, Any]:
    return {"severity": "error", "code": code, "path": path, "message": message}


def _bounded(value: int, setting: str, path: str) -> int:
    cap = int(getattr(settings, setting))
    if value < 1 or value > cap:
        message = f"{path} must be between 1 and {cap} ({setting}); got {value}."
        raise BadRequest(message, issues=[_issue(path, message, f"load.{path}-out-of-range")])
    return value


def _case_request(case: GraphCase) -> tuple[str, str, dict[str, str]]:
    try:
        parsed = without_redacted(parse_case(case.document, limits=judge_limits()), [])
    except CaseDocumentError as exc:
        message = f"The test case {case.name!r} no longer reads: {exc}"
        raise BadRequest(message, issues=[_issue("test_case", message, "load.case-invalid")]) from exc
    headers = {k: v for k, v in parsed.request.headers if k.lower() != "content-type"}
    body = parsed.request.body.decode("utf-8", errors="replace")
    return body, parsed.request.content_type or "application/json", headers


def _merged(case_headers: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """A case's headers with the load test's own on top: a name given (in any case) replaces the
    case's, so a header the case keeps redacted (and leaves out) is sent with the value given."""
    names = {name.lower() for name in given}
    return {**{k: v for k, v in case_headers.items() if k.lower() not in names}, **given}


def load_test_start(
    *,
    graph: Graph,
    version: GraphVersion,
    user: User,
    requests: int,
    concurrency: int,
    environment: Environment | None = None,
    payload: Any = None,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    test_case: GraphCase | None = None,
    seed: int | None = None,
) -> LoadTest:
    """Queue a load test of ``version`` in ``environment`` (default: the system's) and send its
    task once the transaction commits.

    The request is ``payload`` (with ``content_type`` and ``headers``) or ``test_case``'s request
    (its redacted headers left out) with ``headers`` on top. Secret headers are kept as a run's
    are: stored redacted, their real values in Redis (``RUN_SECRET_HEADERS_TTL``) for the worker,
    deleted when the load test ends.
    Raises NotDeployable (422) for a version KServe would reject; InvalidInput (400, as for an
    unknown one) for an environment ``user`` may not use; BadRequest (400) for ``requests`` or
    ``concurrency`` past ``LOAD_TEST_MAX_REQUESTS`` / ``LOAD_TEST_MAX_CONCURRENCY`` and for a test
    case of another graph; TooManyInFlight (429) when ``user`` has
    ``LOAD_TEST_MAX_IN_FLIGHT_PER_USER`` load tests queued or running already (checked in the
    transaction that stores this one).
    """
    graph_services.ensure_deployable(graph, version, before="load testing it")
    _bounded(requests, "LOAD_TEST_MAX_REQUESTS", "requests")
    _bounded(concurrency, "LOAD_TEST_MAX_CONCURRENCY", "concurrency")
    if environment is None:
        environment, _ = environments.ensure_local_environment()
    access_environment_for_run(user, environment)
    given = run_request.check_headers(headers or {})
    if test_case is not None:
        if test_case.graph_id != graph.pk:
            message = f"Graph {graph.name!r} has no test case {test_case.pk}."
            raise BadRequest(message, issues=[_issue("test_case", message, "load.case-unknown")])
        body, content_type, case_headers = _case_request(test_case)
        given = _merged(run_request.check_headers(case_headers), given)
    else:
        body, content_type = run_request.payload_text(payload if payload is not None else {}, content_type)
    stored, secrets = run_request.split_secret_headers(given, environment.secret_headers or ())
    with writes.write_turn(), transaction.atomic():
        fairshare.ensure_load_slot(user)
        load = LoadTest.objects.create(
            graph=graph,
            version=version,
            environment=environment,
            environment_name=environment.name,
            config=environments.environment_config(environment),
            test_case=test_case,
            request_body=body,
            request_content_type=content_type,
            request_headers=stored,
            secret_header_names=sorted(secrets),
            requests=requests,
            concurrency=concurrency,
            seed=seed if seed is not None else runs.new_seed(),
            created_by=user,
        )
        if secrets and not bus.store_secret_headers(load.pk, secrets, owner="load"):
            # Its worker then fails it, naming them: a load test never sends them redacted.
            logger.warning("load test %s: secret headers could not be stored", load.pk)
        load_events.emit(load.pk, "load.queued", {"requests": requests, "concurrency": concurrency})
        transaction.on_commit(lambda: _enqueue(load.pk))
    return load


def _enqueue(load_id: uuid.UUID) -> None:
    from execution.tasks.loadtests import run_load_test_task  # the task module imports this one

    try:
        run_load_test_task.delay(str(load_id))
    except Exception:  # the broker is down: the load test cannot wait for it
        logger.exception("load test %s: could not be sent to the workers", load_id)
        _end(
            load_id,
            LoadTest.Status.FAILED,
            from_status=LoadTest.Status.QUEUED,
            error="The workers could not be reached; start it again.",
        )


# --- cancelling ------------------------------------------------------------------------------------


def load_test_cancel(*, load: LoadTest, user: User) -> LoadTest:
    """Cancel a load test: a queued one at once; a running one stops starting requests within
    half a second, lets those in flight finish and ends ``cancelled`` with what it measured.
    Idempotent."""
    if not graph_access.can_cancel(user, graph=load.graph, started_by_id=load.created_by_id):
        raise NotPermitted(
            "Only the person who started the load test, the graph's owner or editors, or staff may cancel it."
        )
    with writes.write_turn(), transaction.atomic():
        LoadTest.objects.filter(
            pk=load.pk, status__in=(LoadTest.Status.QUEUED, LoadTest.Status.RUNNING)
        ).update(cancel_requested=True)
    _end(load.pk, LoadTest.Status.CANCELLED, from_status=LoadTest.Status.QUEUED)
    load.refresh_from_db()
    return load


# --- running (the body of the task) -----------------------------------------------------------------


def _progress(load: LoadTest, stats: LoadStats, elapsed: float) -> dict[str, Any]:
    latency = stats.graph.latency
    return {
        "requests": load.requests,
        "completed": stats.completed,
        "errors": stats.errors,
        "elapsed_s": round(elapsed, 3),
        "throughput_rps": round(stats.completed / elapsed, 3) if elapsed > 0 else None,
        "p50_ms": latency.percentile(50),
        "p95_ms": latency.percentile(95),
    }


def _end(
    load_id: uuid.UUID | str,
    status: str,
    *,
    from_status: str = LoadTest.Status.RUNNING,
    summary: dict[str, Any] | None = None,
    progress: dict[str, Any] | None = None,
    error: str = "",
    graph: Graph | None = None,
) -> bool:
    """End a load test once (conditional on ``from_status``), judging its budgets, and write the
    terminal event in the same transaction; then delete its secret headers (whatever way it ended,
    nothing will send them again). Returns whether this call ended it."""
    now = timezone.now()
    fields: dict[str, Any] = {"status": status, "finished_at": now, "heartbeat_at": None, "error": error}
    verdict: dict[str, Any] = {"passed": None, "checks": []}
    if summary is not None:
        fields["summary"] = summary
        fields["completed"] = summary.get("completed", 0)
        fields["errors"] = summary.get("errors", 0)
        owner = graph or Graph.objects.filter(load_tests__pk=load_id).first()
        try:
            budgets = parse_budgets(owner.latency_budgets if owner is not None else None)
        except BudgetError:
            budgets = parse_budgets(None)
        verdict = judge(budgets, summary)
        fields["budgets"] = verdict
        fields["budget_passed"] = verdict["passed"]
    with writes.write_turn(), transaction.atomic():
        load = LoadTest.objects.filter(pk=load_id, status=from_status).first()
        if load is None:
            return False
        started = load.started_at or load.created_at
        fields["duration_ms"] = round((now - started).total_seconds() * 1000, 3)
        if not LoadTest.objects.filter(pk=load_id, status=from_status).update(**fields):
            return False
        final = progress or {
            "requests": load.requests,
            "completed": fields.get("completed", load.completed),
            "errors": fields.get("errors", load.errors),
            "elapsed_s": 0.0,
            "throughput_rps": None,
            "p50_ms": None,
            "p95_ms": None,
        }
        load_events.emit(
            load_id,
            load_events.FINAL_EVENT,
            {"status": status, "progress": final, "budget_passed": verdict["passed"], "error": error or None},
        )
        has_secrets = bool(load.secret_header_names)
    if has_secrets:
        bus.delete_secret_headers(load_id, owner="load")
    return True


def _claim(load_id: str) -> LoadTest | None:
    now = timezone.now()
    with writes.write_turn(), transaction.atomic():
        if not LoadTest.objects.filter(
            pk=load_id, status=LoadTest.Status.QUEUED, cancel_requested=False
        ).update(status=LoadTest.Status.RUNNING, started_at=now, heartbeat_at=now):
            return None
        load_events.emit(load_id, "load.started", {"worker": socket.gethostname()})
    return LoadTest.objects.select_related("graph", "version").get(pk=load_id)


class _Engine:
    """The load's event loop on a thread of its own. The engine's thread folds every answer into its
    :class:`LoadStats` and, every :data:`PROGRESS_SECONDS`, publishes a snapshot of the progress
    (a new dict: the task's thread reads ``progress`` and never the live histograms); the task's
    thread sets ``stop``."""

    def __init__(self, load: LoadTest, manifest: language.Manifest, secrets: Mapping[str, str]) -> None:
        self.load = load
        self.manifest = manifest
        self.secrets = secrets
        self.stop = threading.Event()
        self.progress: dict[str, Any] | None = None
        self._next_progress = 0.0
        self.outcome: LoadOutcome | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.began = time.monotonic()

    def _headers(self) -> list[tuple[str, str]]:
        """The stored headers with the secret ones' real values (every one is there: see
        :func:`_secrets`)."""
        pairs = [
            (name, self.secrets.get(name, value)) for name, value in (self.load.request_headers or {}).items()
        ]
        if not any(name.lower() == "content-type" for name, _ in pairs):
            pairs.append(("Content-Type", self.load.request_content_type or "application/json"))
        return pairs

    def main(self) -> None:
        load = self.load
        # No bodies in the trace (nothing keeps them) and no trace budget: the events are folded
        # into histograms as they come, so a load test's memory does not grow with its requests.
        redact = tuple(canonical_header_key(name) for name in load.secret_header_names or ())
        config = dataclasses.replace(
            environments.engine_config(load.config, graph_namespace=load.graph.namespace, redact=redact),
            body_cap=0,
            max_event_bytes=None,
        )

        def progress(stats: LoadStats) -> None:
            now = time.monotonic()
            if now >= self._next_progress:
                self._next_progress = now + PROGRESS_SECONDS / 2
                self.progress = _progress(load, stats, now - self.began)

        async def go() -> LoadOutcome:
            async with make_client(
                timeout=config.step_timeout or DEFAULT_STEP_TIMEOUT,
                guard=config.guard,
                max_response_bytes=config.max_response_bytes,
                max_connections=MAX_CONNECTIONS,
            ) as client:
                return await run_load(
                    self.manifest,
                    load.request_body.encode("utf-8"),
                    self._headers(),
                    config=config,
                    client=client,
                    requests=load.requests,
                    concurrency=load.concurrency,
                    max_seconds=float(settings.LOAD_TEST_MAX_SECONDS),
                    should_stop=self.stop.is_set,
                    on_progress=progress,
                    rng=random.Random(load.seed),
                )

        try:
            self.outcome = asyncio.run(go())
        except BaseException as exc:  # reported by the task's thread
            self.error = exc
        finally:
            self.done.set()


def _secrets(load: LoadTest) -> dict[str, str] | None:
    """The real values of the load test's secret headers; None (the load test failed, naming
    them) when some are gone: sending them redacted would only load-test the model's 401."""
    names = load.secret_header_names or []
    if not names:
        return {}
    kept = bus.load_secret_headers(load.pk, owner="load") or {}
    missing = [name for name in names if name not in kept]
    if not missing:
        return kept
    error = (
        f"The values of its secret headers {', '.join(missing)} are gone: the workers keep them "
        f"{settings.RUN_SECRET_HEADERS_TTL:g} s (RUN_SECRET_HEADERS_TTL) after it is started, or "
        "Redis lost them. Start it again with them."
    )
    _end(load.pk, LoadTest.Status.FAILED, error=error)
    return None


def load_test_execute(*, load_id: str) -> str:
    """Claim and run a queued load test; the body of the ``execution.run_load_test`` task.
    Idempotent: a load test that is not queued any more returns ``not-claimed`` at once."""
    load = _claim(load_id)
    if load is None:
        return "not-claimed"
    try:
        manifest = language.manifest_from_document(load.version.manifest)
    except Exception as exc:
        _end(load.pk, LoadTest.Status.FAILED, error=f"The version's manifest does not read: {exc}")
        return "failed"
    secrets = _secrets(load)
    if secrets is None:
        return "failed"
    engine = _Engine(load, manifest, secrets)
    thread = threading.Thread(target=engine.main, name=f"load-{load.pk}", daemon=True)
    thread.start()
    hard_stop = time.monotonic() + float(settings.LOAD_TEST_MAX_SECONDS) + DEFAULT_DEADLINE_S
    cancelled = False
    sent: dict[str, Any] | None = None
    while not engine.done.wait(PROGRESS_SECONDS):
        progress = engine.progress if engine.progress is not sent else None
        sent = engine.progress
        with writes.write_turn(), transaction.atomic():
            mine = LoadTest.objects.filter(pk=load.pk, status=LoadTest.Status.RUNNING)
            fields: dict[str, Any] = {"heartbeat_at": timezone.now()}
            if progress is not None:
                fields.update(completed=progress["completed"], errors=progress["errors"])
            if not mine.update(**fields):
                engine.stop.set()  # reaped meanwhile: nothing more is written
                thread.join(timeout=5)
                return "lost"
            if progress is not None:
                load_events.emit(load.pk, "load.progress", {"progress": progress})
            cancelled = mine.filter(cancel_requested=True).exists()
        if cancelled:
            engine.stop.set()
        if time.monotonic() > hard_stop:  # the engine did not stop at its own limit
            engine.stop.set()
            break
    thread.join(timeout=5)
    outcome = engine.outcome
    if outcome is None:
        crash = engine.error
        if crash is None:
            reason = "The load did not stop at LOAD_TEST_MAX_SECONDS and was given up."
        else:
            logger.error("load test %s crashed", load.pk, exc_info=crash)
            reason = f"Internal error while running the load: {crash!r}"
        _end(load.pk, LoadTest.Status.FAILED, error=reason)
        return "failed"
    status = {
        "finished": LoadTest.Status.FINISHED,
        "cancelled": LoadTest.Status.CANCELLED,
        "time-limit": LoadTest.Status.STOPPED,
    }[outcome.ended]
    if cancelled and status == LoadTest.Status.FINISHED:
        status = LoadTest.Status.CANCELLED if outcome.completed < load.requests else status
    error = ""
    if status == LoadTest.Status.STOPPED:
        error = (
            f"Stopped after {settings.LOAD_TEST_MAX_SECONDS:g} s (LOAD_TEST_MAX_SECONDS) with "
            f"{outcome.completed} of {load.requests} requests answered."
        )
    _end(
        load.pk,
        status,
        summary=outcome.stats.summary(outcome.elapsed_s),
        progress=_progress(load, outcome.stats, outcome.elapsed_s),
        error=error,
        graph=load.graph,
    )
    return "done"


def load_reap() -> list[str]:
    """Fail the load tests whose worker died (no heartbeat for ``RUN_HEARTBEAT_TIMEOUT``); end
    the queued ones asked to be cancelled. Returns their ids."""
    cutoff = timezone.now() - datetime.timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT)
    reaped = []
    for load_id in LoadTest.objects.filter(
        status=LoadTest.Status.RUNNING, heartbeat_at__lt=cutoff
    ).values_list("pk", flat=True):
        if _end(load_id, LoadTest.Status.FAILED, error="Its worker stopped answering; start it again."):
            reaped.append(str(load_id))
    return reaped


# --- the static budget check -----------------------------------------------------------------------


def budget_check(*, graph: Graph, version: GraphVersion, user: User) -> dict[str, Any]:
    """The graph's latency budgets and the p99s of ``version``'s newest finished load test that
    ``user`` may read, against the version's timeouts (``graphs.language.budgets.check_timeouts``)."""
    from execution.loadtests.selectors import load_list  # selectors read; this module writes

    try:
        budgets = parse_budgets(graph.latency_budgets)
    except BudgetError:
        budgets = parse_budgets(None)
    newest = (
        load_list(graph=graph, user=user)
        .filter(version=version, status__in=(LoadTest.Status.FINISHED, LoadTest.Status.STOPPED))
        .first()
    )
    measured: dict[str, float] = {}
    if newest is not None:
        summary = newest.summary or {}
        for key, series in (summary.get("steps") or {}).items():
            if series.get("p99_ms") is not None:
                measured[key] = float(series["p99_ms"])
        graph_p99 = (summary.get("graph") or {}).get("p99_ms")
        if graph_p99 is not None:
            measured["graph"] = float(graph_p99)
    manifest = language.manifest_from_document(version.manifest)
    issues = check_timeouts(manifest, budgets, measured or None)
    return {
        "budgets": budgets.to_dict(),
        "measured_by": str(newest.pk) if newest is not None else None,
        "issues": [issue.to_dict() for issue in issues],
    }
