"""Executing a run on a Celery worker (the body of the ``execution.run_graph`` task)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import queue
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from config.exceptions import is_database_busy
from execution import bus, events, metrics, tracing
from execution.engine import EngineConfig, GraphResult, TraceEvent, body_view, make_client, run_graph
from execution.engine.config import DEFAULT_DEADLINE_S
from execution.engine.headers import canonical_header_key
from execution.engine.runstate import event_weight
from execution.engine.tracecontext import TraceContext
from execution.eventschema import RUN_EVENTS
from execution.models import DEFAULT_STEP_TIMEOUT, Run, RunEvent
from execution.services import endings, engineloop, environments, memory, recall, writes
from execution.services.steps import StepRecorder
from graphs import language

logger = logging.getLogger(__name__)
T = TypeVar("T")


_CANCEL = object()
_BATCH_WINDOW = 0.005  # seconds; adds at most this much to the live console's latency
# The most items, and about the most bytes, one write takes. This thread beats the heartbeat and
# watches the deadline between writes, so a write must stay short whatever the engine does: it used
# to take everything waiting, and a looping graph (events that grew with its depth, reported faster
# than stored) made each write larger and slower than the last, until one outlasted
# RUN_HEARTBEAT_TIMEOUT and the reaper failed the live run. 4 MiB is a few hundred ms on SQLite.
_MAX_BATCH = 500
_MAX_BATCH_BYTES = 4 * 1024 * 1024
# The most events waiting for this thread: past it the engine waits for the database (its event
# loop blocks in ``on_event``), so a run that reports faster than it is stored holds a bounded
# backlog instead of growing the worker by gigabytes: a few MB of ordinary events, at worst 2,000
# events of two RUN_BODY_CAP bodies each. Four batches: the engine rarely waits on a steady run.
_MAX_QUEUED = 2000
# The window of a suite run's case that its worker thread chained (``run_claimed(quiet=True)``):
# nobody has its run open yet, so its events are stored at most this late, and a case that ends
# within it (most do) is stored in one write with its ending.
QUIET_BATCH_WINDOW = 1.0


@dataclass
class _Outcome:
    kind: str  # done | cancelled | crashed
    result: GraphResult | None = None
    error: BaseException | None = None


@dataclass
class _Clock:
    """When the task thread must next wake up: to beat the heartbeat, or at the run's hard stop
    (its deadline plus ``RUN_DEADLINE_GRACE``; monotonic seconds)."""

    next_beat: float
    hard_stop: float

    @classmethod
    def starting(cls, *, deadline: float) -> _Clock:
        now = time.monotonic()
        return cls(
            next_beat=now + settings.RUN_HEARTBEAT_SECONDS,
            hard_stop=now + deadline + settings.RUN_DEADLINE_GRACE,
        )

    def next_wakeup(self) -> float:
        return min(self.next_beat, self.hard_stop)


@dataclass
class _Execution:
    """One attempt of one run on this worker: the engine a task of this thread's engine loop (its
    own thread: :mod:`~execution.services.engineloop`), this (the task's) thread persisting its
    events, beating the heartbeat and watching for a cancel.

    All database work stays on the task's thread; the engine thread only runs the event loop.
    """

    run: Run
    attempt: int
    events_q: queue.Queue[Any] = field(default_factory=lambda: queue.Queue(maxsize=_MAX_QUEUED))
    # Set once this thread stops reading the queue: the engine then drops what it reports.
    abandoned: threading.Event = field(default_factory=threading.Event)
    steps: StepRecorder = field(init=False)
    engine_finished: dict[str, Any] | None = None  # the engine's own run.finished data
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task[Any] | None = None
    started: threading.Event = field(default_factory=threading.Event)
    engine_reported: bool = False  # the engine reported its outcome: it no longer holds its loop
    cancel_reason: str | None = None
    unsaved: list[TraceEvent] = field(default_factory=list)  # the engine's last events, for _finish
    window: float = _BATCH_WINDOW  # how long the events that follow a first one are gathered
    # The events each committed write stored (by write), and the run's ending once written: what
    # this attempt left, for ``recall.ended_here``.
    stored: dict[int, list[RunEvent]] = field(default_factory=dict)
    manifest: language.Manifest | None = None
    ended: bool = False
    deadline_source: str = "the default deadline"  # what set the run's deadline, for its error

    def __post_init__(self) -> None:
        self.steps = StepRecorder(self.run, self.attempt)

    # -- engine thread ------------------------------------------------------------------------------

    async def _engine(
        self, manifest: language.Manifest, body: bytes, headers: list[tuple[str, str]], config: EngineConfig
    ) -> None:
        """The run's engine, a task of this worker thread's engine loop: reports each event, then
        its outcome, and only then closes its client (its connections' closing is no part of the
        run's time)."""
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.started.set()
        try:
            # One client per run (docs/architecture.md): its pool is reused by every step of this
            # run, and its byte budget is the run's.
            client = make_client(
                timeout=config.step_timeout or DEFAULT_STEP_TIMEOUT,
                guard=config.guard,
                max_response_bytes=config.max_response_bytes,
                max_run_bytes=config.max_run_bytes,
            )
        except BaseException as exc:
            self.engine_reported = True
            self._report(_Outcome("crashed", error=exc))
            return
        try:
            outcome = _Outcome(
                "done",
                await run_graph(
                    manifest,
                    body,
                    headers,
                    config=config,
                    client=client,
                    on_event=self._report,
                    rng=random.Random(self.run.seed),
                    clock=time.time,
                    keep_trace=False,
                ),
            )
        except asyncio.CancelledError:
            outcome = _Outcome("cancelled")
        except BaseException as exc:
            outcome = _Outcome("crashed", error=exc)
        self.engine_reported = True
        self._report(outcome)
        try:
            await client.aclose()
        except Exception:  # the run has ended: a connection that fails to close is not its error
            logger.warning("run %s: its client did not close cleanly", self.run.pk, exc_info=True)

    def _report(self, item: Any) -> None:
        """Hand ``item`` to the task thread; while its queue is full, wait (the engine is ahead of
        the database), unless the task thread has stopped reading: then the item is dropped."""
        while not self.abandoned.is_set():
            try:
                self.events_q.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def _cancel_seen(self) -> None:
        """A cancel message (on the listener's thread, shared by every run: it must not wait). With
        the queue full it is dropped; the next heartbeat reads the cancel from the run's row."""
        with contextlib.suppress(queue.Full):
            self.events_q.put_nowait(_CANCEL)

    def cancel_engine(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.started.wait(5)
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            # RuntimeError: the loop closed in between, so the engine finished anyway.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)

    # -- task thread --------------------------------------------------------------------------------

    def execute(self) -> None:
        """Run the engine to its end (or its deadline, or a cancel), storing what it reports as it
        goes, then record how the run ended. Returns once the engine has reported its outcome or
        been abandoned."""
        run = self.run
        manifest = self.manifest = recall.manifest_of(run)
        headers, redact, missing = self._headers()
        config = environments.engine_config(
            run.config,
            graph_namespace=run.graph.namespace,
            redact=redact,
            trace=TraceContext(trace_id=run.pk.hex, salt=str(run.attempt)),
        )
        self.deadline_source = endings.deadline_source(manifest, run.config or {})
        if missing:
            events.emit(
                run.pk,
                "run.warning",
                {
                    "message": "The secret headers of this run expired or were lost "
                    "and are not sent: " + ", ".join(missing)
                },
            )
        listener = bus.cancel_listener()
        cancel_watch = listener.add(run.pk, lambda _message: self._cancel_seen())
        if not listener.wait_connected(2.0):
            logger.warning("run %s: no live cancel listener; a cancel is seen by the heartbeat poll", run.pk)
        engine = engineloop.for_this_thread()
        clock = _Clock.starting(deadline=float(config.deadline or DEFAULT_DEADLINE_S))
        ran = engine.submit(
            self._engine(manifest, run.request_body.encode("utf-8"), headers, config), name=f"run-{run.pk}"
        )
        outcome: _Outcome | None = None
        try:
            if Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
                self.cancel_engine("cancelled")  # asked before we subscribed
            outcome = self._follow(clock)
        finally:
            cancel_watch.close()
            if outcome is None:
                # Leaving without an outcome (a write failed for good): stop the engine first, so a
                # graph nobody records is never still calling models when the run is retried.
                self.cancel_engine("lost")
            self.abandoned.set()  # nobody reads the queue now: an engine still going must not wait
            if not self.engine_reported:  # it may still hold the loop: give it a moment, then up
                concurrent.futures.wait([ran], timeout=1.0)
                if not ran.done():
                    engineloop.give_up_this_threads()
        self._finish(outcome)

    def _follow(self, clock: _Clock) -> _Outcome:
        """Store what the engine reports and keep time (heartbeat, deadline) until it ends."""
        outcome: _Outcome | None = None
        while outcome is None:
            outcome = self._take(self._next_batch(until=clock.next_wakeup())) or self._keep_time(clock)
        return outcome

    def _next_batch(self, until: float) -> list[Any]:
        """What arrived from the engine and the cancel listener: the first item (waited for until
        ``until``, a monotonic time), then whatever follows within a few ms; at most
        :data:`_MAX_BATCH` items and about :data:`_MAX_BATCH_BYTES`, and nothing more once ``until``
        has passed (the heartbeat or the deadline is due), however fast the engine reports.

        Storing what arrives within :data:`_BATCH_WINDOW` in one transaction matters: the engine
        emits a step's finish and the next step's start back to back, and every commit is a turn on
        the database's single write lock (SQLite) or a round trip (PostgreSQL).
        """
        try:
            batch = [self.events_q.get(timeout=max(0.0, until - time.monotonic()))]
        except queue.Empty:
            batch = []
        window_end = time.monotonic() + self.window if batch and isinstance(batch[0], TraceEvent) else 0.0
        size = sum(event_weight(item) for item in batch if isinstance(item, TraceEvent))
        while len(batch) < _MAX_BATCH and size < _MAX_BATCH_BYTES and time.monotonic() < until:
            try:
                wait = window_end - time.monotonic()
                item = self.events_q.get(timeout=wait) if wait > 0 else self.events_q.get_nowait()
            except queue.Empty:
                return batch
            batch.append(item)
            if isinstance(item, TraceEvent):
                size += event_weight(item)
            else:
                window_end = 0.0
        return batch

    def _take(self, batch: list[Any]) -> _Outcome | None:
        """Store the batch's trace events, act on a cancel in it; the engine's outcome if it ended."""
        trace = [item for item in batch if isinstance(item, TraceEvent)]
        for event in trace:
            if event.type == RUN_EVENTS.terminal:  # stored by _finish, with the run's status
                self.engine_finished = dict(event.data)
        trace = [event for event in trace if event.type != RUN_EVENTS.terminal]
        outcome = None
        for item in batch:
            if item is _CANCEL:
                self.cancel_engine("cancelled")
            elif isinstance(item, _Outcome):
                outcome = item
        if outcome is None:
            self._persist(trace)
        else:  # the last events are stored with the run's ending, in the same write
            self.unsaved = trace
        return outcome

    def _keep_time(self, clock: _Clock) -> _Outcome | None:
        """Beat the heartbeat when due; past the deadline, stop the engine, and give it up when it
        has not stopped within the grace period after that."""
        now = time.monotonic()
        if now >= clock.next_beat:
            clock.next_beat = now + settings.RUN_HEARTBEAT_SECONDS
            self._heartbeat()
        if now < clock.hard_stop:
            return None
        if self.cancel_reason is None:
            self.cancel_engine("deadline")
            clock.hard_stop = now + settings.RUN_DEADLINE_GRACE  # then give up waiting
            return None
        return _Outcome("crashed", error=TimeoutError("the engine did not stop after a cancel"))

    def _headers(self) -> tuple[list[tuple[str, str]], tuple[str, ...], list[str]]:
        run = self.run
        secrets = bus.load_secret_headers(run.pk) if run.secret_header_names else {}
        secrets = secrets or {}
        pairs: list[tuple[str, str]] = []
        missing = []
        for name, value in (run.request_headers or {}).items():
            if name in (run.secret_header_names or []):
                if name not in secrets:
                    missing.append(name)
                    continue
                value = secrets[name]
            pairs.append((name, value))
        if not any(name.lower() == "content-type" for name, _ in pairs):
            pairs.append(("Content-Type", run.request_content_type or "application/json"))
        redact = tuple(canonical_header_key(name) for name in (run.secret_header_names or []))
        return pairs, redact, missing

    def _heartbeat(self) -> None:
        run = self.run
        mine = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=self.attempt)
        try:
            with writes.write_turn():
                if mine.filter(cancel_requested=False).update(heartbeat_at=timezone.now()):
                    return
        except OperationalError as exc:
            if not is_database_busy(exc):
                raise
            # A busy database is not a dead run: skip this beat, the next one tries again (and the
            # reaper's timeout is several beats long).
            logger.warning("run %s: heartbeat skipped, the database is busy: %s", run.pk, exc)
            return
        if mine.exists():  # still ours, but a cancel was asked for (and its message missed)
            mine.update(heartbeat_at=timezone.now())
            self.cancel_engine("cancelled")
        else:  # the reaper gave the run up or to another attempt: stop, write nothing more
            self.cancel_engine("lost")

    def _persist(self, trace: list[TraceEvent]) -> None:
        """Store the step rows and events of ``trace``, committed (with the other runs' writes of
        the moment: :class:`~execution.services.writes.GroupCommit`) before this returns."""
        if trace:
            writes.GROUP.write(self._storing(trace))

    def _storing(
        self, trace: list[TraceEvent], *, closing: dict[str, Any] | None = None
    ) -> Callable[[], None]:
        """The write of ``trace``'s steps and events; with ``closing`` (the run's final fields),
        also the run's ending: the steps still pending closed, then the terminal event.

        It may be tried more than once, so it starts from the recorder's state before it (a failed
        try must not have consumed a pending route, nor taken a row for stored)."""
        before = self.steps.saved()
        items = [(event.type, self._event_data(event)) for event in trace]
        key = len(self.stored)  # a try again of this write replaces what its failed try stored
        self.stored[key] = []

        def store() -> None:
            self.steps.restore(before)
            self.steps.store(trace)
            if closing is None:
                self.stored[key] = events.emit_many(self.run.pk, items)
                return
            status, error = closing["status"], closing.get("error", "")
            if self.steps.pending:  # rows this attempt stored still in flight (none, mostly)
                endings.close_pending_steps(self.run, self.attempt, status, error)
            final = endings.finished_data(closing, self.attempt, self.engine_finished)
            self.stored[key] = events.emit_many(self.run.pk, [*items, (RUN_EVENTS.terminal, final)])

        return store

    def _event_data(self, event: TraceEvent) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "call_id": event.call_id,
            "parent_call_id": event.parent_call_id,
            "node": event.node,
            "step_index": event.step_index,
            "step_name": event.step_name,
            "target": event.target,
            "at": event.timestamp,
            **event.data,
        }

    def _finish(self, outcome: _Outcome | None) -> None:
        """Record how the run ended, unless another attempt or the reaper took it over meanwhile
        (then nothing more is written: the run is not this attempt's any more)."""
        run = self.run
        if self.cancel_reason == "lost":
            logger.warning(
                "run %s attempt %s: the run was taken over; nothing more is written", run.pk, self.attempt
            )
            return
        now = timezone.now()
        fields: dict[str, Any] = {
            "finished_at": now,
            "heartbeat_at": None,
            "duration_ms": round((now - (run.started_at or now)).total_seconds() * 1000, 3),
            **self._ending(outcome),
        }

        store_last = self._storing(self.unsaved, closing=fields)

        def write() -> bool:
            if Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=self.attempt).update(
                **fields
            ):
                store_last()
                return True
            return False

        if writes.GROUP.write(write):
            for name, value in fields.items():
                setattr(run, name, value)
            self.ended = True

    def _ending(self, outcome: _Outcome | None) -> dict[str, Any]:
        """The run's status and error (and response, if the graph answered) for how it ended."""
        if outcome is not None and outcome.kind == "done" and outcome.result is not None:
            # Finished before it noticed a cancel: the answer it got is the truth.
            return self._answered(outcome.result)
        if self.cancel_reason == "cancelled" or (
            outcome is not None and outcome.kind == "cancelled" and self.cancel_reason != "deadline"
        ):
            return {"status": Run.Status.CANCELLED, "error": "Cancelled while running."}
        if self.cancel_reason == "deadline":
            return {
                "status": Run.Status.FAILED,
                "error": f"The run did not finish within its deadline ({self.deadline_source}) "
                f"plus {settings.RUN_DEADLINE_GRACE:g} s (RUN_DEADLINE_GRACE) and was stopped.",
            }
        error = outcome.error if outcome is not None else None
        logger.error("run %s crashed", self.run.pk, exc_info=error)
        return {"status": Run.Status.FAILED, "error": f"Internal error while running the graph: {error!r}"}

    def _answered(self, result: GraphResult) -> dict[str, Any]:
        stored = body_view(result.body, settings.RUN_BODY_CAP)
        error = result.error or ""
        if result.status == 504 and error.startswith("graph deadline of "):
            error = f"{error} (deadline: {self.deadline_source})"
        fields: dict[str, Any] = {
            "status": Run.Status.SUCCEEDED if 200 <= result.status <= 299 else Run.Status.FAILED,
            "response_status": result.status,
            "response_content_type": result.content_type,
            "response_body": stored["body"],
            "response_encoding": stored["encoding"],
            "response_size": len(result.body),
            "response_truncated": stored["truncated"],
            "error": error,
        }
        if self.engine_finished and self.engine_finished.get("duration_ms") is not None:
            fields["duration_ms"] = self.engine_finished["duration_ms"]
        return fields


# The runs this process is executing (run id -> attempt), for :func:`worker_stopping`.
_IN_FLIGHT: dict[str, int] = {}
_IN_FLIGHT_LOCK = threading.Lock()
# Why this process was asked to stop (None: it was not), set with the runs read under the lock: a
# run counted in flight afterwards is announced by its own thread (:func:`_count_in_flight`).
_STOP_REASON: str | None = None
STOP_ANNOUNCED = "run.worker_stopping"


def worker_stopping(*, reason: str) -> list[str]:
    """Record that this worker process was asked to stop, on every run it is executing.

    Called when the worker receives a shutdown signal (Celery's ``worker_shutting_down``: SIGTERM,
    SIGINT, SIGQUIT). Whatever happens to those attempts next (the warm shutdown lets them finish,
    or the operator's SIGKILL follows) was done to the run, not by it, so the reaper may run them
    again; a worker that dies without this record may have been crashed by its run, and its runs
    are not retried (see :func:`reap_runs`). Writes one ``run.worker_stopping`` event per run;
    returns their ids. Never raises: a failure is logged, and the reaper then treats the runs as
    crashed (the safe side).
    """
    global _STOP_REASON
    with _IN_FLIGHT_LOCK:
        _STOP_REASON = reason
        running = dict(_IN_FLIGHT)
    return [run_id for run_id, attempt in running.items() if _announce_stop(run_id, attempt, reason)]


def _announce_stop(run_id: str, attempt: int, reason: str) -> bool:
    try:
        with writes.write_turn(), transaction.atomic():
            events.emit(run_id, STOP_ANNOUNCED, {"attempt": attempt, "reason": reason})
    except Exception:  # shutting down: the database may be gone too; never block the exit
        logger.exception("run %s: could not record that its worker is stopping", run_id)
        return False
    return True


def _count_in_flight(run: Run) -> None:
    """Count a claimed run in flight. A worker already asked to stop may still start one (a message
    it had received, or a claim that committed just before the announcement read the runs): it
    records the stop on that run too, as :func:`worker_stopping` did on the others; a SIGKILL that
    follows is then a disruption of this run, not its crash."""
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT[str(run.pk)] = run.attempt
        reason = _STOP_REASON
    if reason is not None:
        _announce_stop(str(run.pk), run.attempt, reason)


def run_execute(*, run_id: str) -> str:
    """Claim and run a queued run; the body of the ``execution.run_graph`` task.

    Receiving it twice is harmless: only a QUEUED run can be claimed (the conditional update makes
    exactly one caller win); a running or finished run returns at once. Returns what happened
    (``done``, or why nothing was done), for logs and tests.
    """
    run = writes.GROUP.write(functools.partial(claim, run_id))
    if run is None:
        return "not-claimed"
    return run_claimed(run)


def run_claimed(run: Run, *, quiet: bool = False) -> str:
    """Run a run this thread has claimed (:func:`claim`, committed); returns ``done``.

    ``quiet``: a run nobody can have opened yet (a suite run's case chained by this thread): its
    events are gathered for up to :data:`QUIET_BATCH_WINDOW` before they are stored, so a short
    run is stored in one write with its ending instead of one per step."""
    _count_in_flight(run)
    recall.forget()
    try:
        execution = _Execution(run=run, attempt=run.attempt)
        if quiet:
            execution.window = QUIET_BATCH_WINDOW
        execution.execute()
        if execution.ended and execution.manifest is not None:
            recall.remember(execution.run, execution.stored.values(), execution.manifest)
        if execution.ended:
            tracing.export_run_later(str(run.pk))
            metrics.record_run_steps(
                run.graph.name,
                (
                    event.data
                    for written in execution.stored.values()
                    for event in written
                    if event.type == "step.finished"
                ),
            )
    finally:
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.pop(str(run.pk), None)
            busy = bool(_IN_FLIGHT)
        memory.return_freed_memory(busy=busy)
    return "done"


def claim(run_id: str) -> Run | None:
    """The write that claims a queued run (None: not queued any more, or a cancel was asked), in
    the caller's transaction; once it commits, the caller must run it (:func:`run_claimed`)."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED, cancel_requested=False).update(
        status=Run.Status.RUNNING,
        attempt=F("attempt") + 1,
        started_at=now,
        heartbeat_at=now,
    )
    if not claimed:
        return None
    run = Run.objects.select_related("version", "graph").get(pk=run_id)
    events.emit(run.pk, "run.started", started_data(run.attempt))
    return run


def worker_name() -> str:
    """This worker process as a person can find it: its host name and process id
    (``web-7c9f4 (pid 4242)``); several workers on one host differ by pid."""
    return f"{socket.gethostname() or 'unknown host'} (pid {os.getpid()})"


def started_data(attempt: int) -> dict[str, Any]:
    """The data of the ``run.started`` event of an attempt this worker claims."""
    return {"attempt": attempt, "worker": worker_name()}
