"""Suite runs: a graph's test cases (all or some) run against one version, each case as a real Run.

A :class:`SuiteRun` holds one row per case (:class:`SuiteCaseResult`: its outcome, failed
expectations and the Run that carried it) and its own event log (:class:`SuiteEvent`, streamed
like a run's). Written only by ``execution.suites.services``; registered with the ``execution``
app (the ``execution.models`` package imports them).
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from execution.loggedevent import LoggedEvent


class SuiteRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        PASSED = "passed", "Every case passed"
        FAILED = "failed", "A case failed"
        ERROR = "error", "A case could not run, none failed"
        CANCELLED = "cancelled", "Cancelled"

    TERMINAL: ClassVar[tuple[str, ...]] = (Status.PASSED, Status.FAILED, Status.ERROR, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="suite_runs")
    version = models.ForeignKey("graphs.GraphVersion", on_delete=models.PROTECT, related_name="suite_runs")
    environment = models.ForeignKey(
        "execution.Environment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    environment_name = models.CharField(
        max_length=63,
        blank=True,
        default="",
        help_text="Where every case ran; empty when each case ran in its own environment",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    concurrency = models.PositiveSmallIntegerField(help_text="Cases in flight at once")
    seed = models.BigIntegerField(help_text="Seeds the runs of cases that fix no seed of their own")
    kserve_version = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="The KServe release every case ran as, instead of its environment's; empty: the environment's",
    )
    cases_digest = models.CharField(max_length=64, help_text="sha256 of the case set it ran")
    total = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    cancelled = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    event_seq = models.PositiveIntegerField(default=0, help_text="The seq of the last SuiteEvent")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    budgets = models.JSONField(
        default=dict,
        blank=True,
        help_text="The graph's latency budgets judged on its cases (passed, checks); {} when none",
    )
    judge_seconds = models.FloatField(
        default=0.0, help_text="CPU seconds judging its cases took (GRAPH_TEST_SUITE_JUDGE_SECONDS bounds it)"
    )

    class Meta:
        app_label = "execution"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["version", "-created_at"], name="suite_version_created"),
            models.Index(fields=["graph", "-created_at"], name="suite_graph_created"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="suite_concurrency_positive"),
        ]

    def __str__(self) -> str:
        return f"suite run {self.pk} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL

    @property
    def finished_count(self) -> int:
        """Cases that ran to a verdict (passed, failed or error); cancelled ones are not among them."""
        return self.passed + self.failed + self.errors

    def counts(self) -> dict[str, int]:
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "error": self.errors,
            "cancelled": self.cancelled,
            "finished": self.finished_count,
        }


class SuiteCaseResult(models.Model):
    class Outcome(models.TextChoices):
        PENDING = "pending", "Waiting for a slot"
        RUNNING = "running", "Its run is queued or running"
        PASSED = "passed", "Passed"
        FAILED = "failed", "An expectation did not hold"
        ERROR = "error", "The case could not run"
        CANCELLED = "cancelled", "Cancelled"

    DONE: ClassVar[tuple[str, ...]] = (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.CANCELLED)

    suite = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveIntegerField(help_text="Its place in the suite (cases by name)")
    case = models.ForeignKey(
        "execution.GraphCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    case_ref = models.PositiveIntegerField(help_text="The case's id (kept when the case is deleted)")
    name = models.CharField(max_length=200)
    document = models.JSONField(help_text="The case as it was when the suite ran")
    environment = models.ForeignKey(
        "execution.Environment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.PENDING)
    run = models.ForeignKey(
        "execution.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="suite_results"
    )
    status_code = models.IntegerField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    failures = models.JSONField(default=list, blank=True, help_text="The expectations that did not hold")
    error = models.TextField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "execution"
        ordering = ["suite_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["suite", "position"], name="unique_suite_case_position"),
        ]
        indexes = [models.Index(fields=["suite", "outcome"], name="suite_case_outcome")]

    def __str__(self) -> str:
        return f"{self.suite_id} #{self.position} {self.name} ({self.outcome})"


class SuiteEvent(LoggedEvent):
    """The persisted event log of a suite run; ``seq`` counts from 1 per suite run."""

    OWNER = "suite"
    suite = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="events")

    class Meta:
        app_label = "execution"
        ordering = ["suite_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["suite", "seq"], name="unique_suite_event_seq")]
