"""What happened in a test run: the :class:`Run`, its trace (:class:`RunStep`) and its live log
(:class:`RunEvent`).

Every write goes through ``execution.services`` (one module per family); state changes are conditional updates, so that a
web request, a worker and the reaper can act on the same run at the same time without losing one
another's work.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from execution.loggedevent import LoggedEvent
from execution.models.environments import Environment


class Run(models.Model):
    """One test invocation of one graph version in one environment."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    TERMINAL = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="runs")
    version = models.ForeignKey("graphs.GraphVersion", on_delete=models.PROTECT, related_name="runs")
    environment = models.ForeignKey(Environment, null=True, on_delete=models.SET_NULL, related_name="runs")
    environment_name = models.CharField(
        max_length=63, blank=True, default="", help_text="The environment's name when the run was made"
    )
    config = models.JSONField(
        default=dict,
        blank=True,
        help_text="The environment settings the run uses (a snapshot taken at creation)",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)

    request_body = models.TextField(blank=True, default="")
    request_content_type = models.CharField(max_length=200, blank=True, default="application/json")
    request_headers = models.JSONField(default=dict, blank=True, help_text="Secrets redacted")
    secret_header_names = models.JSONField(
        default=list, blank=True, help_text="Headers whose real values wait in Redis for the worker"
    )

    response_status = models.IntegerField(null=True, blank=True)
    response_content_type = models.CharField(max_length=200, null=True, blank=True)
    response_body = models.TextField(null=True, blank=True)
    response_encoding = models.CharField(max_length=10, default="utf-8")
    response_size = models.IntegerField(null=True, blank=True)
    response_truncated = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")

    seed = models.BigIntegerField()
    attempt = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed it")
    requeues = models.PositiveSmallIntegerField(default=0, help_text="How many times the reaper re-sent it")
    cancel_requested = models.BooleanField(default=False)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    event_seq = models.PositiveIntegerField(default=0, help_text="The seq of the last RunEvent")

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs")
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    rerun_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns"
    )

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "idempotency_key"],
                name="unique_run_idempotency_key",
                condition=Q(idempotency_key__isnull=False),
            ),
        ]
        # The runs list (newest first, one page) reads one of these in order, whatever filter it
        # has: no sort of the graph's runs, no walk past the rows a filter skips
        # (bench/bench_scale.py prints the plans).
        indexes = [
            models.Index(fields=["graph", "-created_at"], name="run_graph_created"),
            models.Index(fields=["graph", "status", "-created_at"], name="run_graph_status_created"),
            models.Index(fields=["graph", "environment", "-created_at"], name="run_graph_env_created"),
            models.Index(
                fields=["graph", "environment_name", "-created_at"], name="run_graph_envname_created"
            ),
            models.Index(fields=["version", "-created_at"], name="run_version_created"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class RunStep(models.Model):
    """One step of the trace: a call (or a skipped step) of one attempt, in the order it began."""

    class Outcome(models.TextChoices):
        PENDING = "pending", "In flight"
        OK = "ok", "2xx"
        HTTP_ERROR = "http-error", "Non-2xx status"
        ERROR = "error", "Transport or routing error"
        TIMEOUT = "timeout", "Deadline exceeded"
        CANCELLED = "cancelled", "Cancelled"
        SKIPPED = "skipped", "Did not run"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    attempt = models.PositiveSmallIntegerField(default=1)
    call_id = models.CharField(
        max_length=500,
        help_text="The engine's id of the call, short and unique in the run: root/2, or match#1/0 (step 0 of the first nested call of match)",
    )
    parent_call_id = models.CharField(max_length=500, null=True, blank=True)
    order = models.PositiveIntegerField(default=0, help_text="The engine's event number when the step began")
    node = models.CharField(max_length=253, blank=True, default="")
    step_index = models.IntegerField(null=True, blank=True)
    step_name = models.CharField(max_length=253, null=True, blank=True)
    kind = models.CharField(max_length=10, blank=True, default="", help_text="http or node")
    target = models.CharField(max_length=2000, blank=True, default="")
    request_headers = models.JSONField(
        default=list, blank=True, help_text="[name, value] pairs sent, redacted"
    )
    request = models.JSONField(null=True, blank=True, help_text="Body view: body, encoding, size, truncated")
    status_code = models.IntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=200, null=True, blank=True)
    response = models.JSONField(null=True, blank=True, help_text="Body view of the response")
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.PENDING)
    error = models.TextField(blank=True, default="")
    condition = models.JSONField(
        null=True, blank=True, help_text="The Sequence condition that let it run or not"
    )
    route = models.JSONField(null=True, blank=True, help_text="The Switch/Splitter decision that chose it")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "attempt", "order"]
        constraints = [
            models.UniqueConstraint(fields=["run", "attempt", "call_id"], name="unique_run_step_call"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} #{self.attempt} {self.call_id}"


class RunEvent(LoggedEvent):
    """The persisted event log of a run; what the SSE stream replays. ``seq`` counts from 1 per run."""

    OWNER = "run"
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")

    class Meta:
        ordering = ["run_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="unique_run_event_seq")]
