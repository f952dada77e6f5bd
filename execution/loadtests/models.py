"""Load tests: one version in one environment, N requests at concurrency C, on a worker.

Its request is stored as a run's is: secret header values redacted, their real values in Redis
for the worker until it ends (``execution.loadtests.services``). Nothing per request is stored:
the worker folds every request's latencies into histograms (``execution.engine.load``) and stores
the running ``summary`` (throughput, statuses, error rate, p50/p95/p99 and a histogram for the
graph and each step). Its progress is an event log streamed like a run's (:class:`LoadTestEvent`). Written only by ``execution.loadtests.services``; registered
with the ``execution`` app (the ``execution.models`` package imports them).
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from execution.loggedevent import LoggedEvent


class LoadTest(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Every request was made"
        STOPPED = "stopped", "Stopped at LOAD_TEST_MAX_SECONDS"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Could not run"

    TERMINAL: ClassVar[tuple[str, ...]] = (Status.FINISHED, Status.STOPPED, Status.CANCELLED, Status.FAILED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="load_tests")
    version = models.ForeignKey("graphs.GraphVersion", on_delete=models.PROTECT, related_name="load_tests")
    environment = models.ForeignKey(
        "execution.Environment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    environment_name = models.CharField(max_length=63)
    config = models.JSONField(help_text="The environment as it was when the load test was started")
    test_case = models.ForeignKey(
        "execution.GraphCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    request_body = models.TextField()
    request_content_type = models.CharField(max_length=200, default="application/json")
    request_headers = models.JSONField(default=dict, blank=True, help_text="Secrets redacted")
    secret_header_names = models.JSONField(
        default=list, blank=True, help_text="Headers whose real values wait in Redis for the worker"
    )
    requests = models.PositiveIntegerField(help_text="Requests to send")
    concurrency = models.PositiveSmallIntegerField(help_text="Requests in flight at once")
    seed = models.BigIntegerField(help_text="Seeds the Splitter draws")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    completed = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True, help_text="The aggregate so far (final once ended)")
    budgets = models.JSONField(default=dict, blank=True, help_text="The graph's latency budgets, judged")
    budget_passed = models.BooleanField(null=True, blank=True, help_text="None: no budget to judge")
    error = models.TextField(blank=True, default="")
    cancel_requested = models.BooleanField(default=False)
    event_seq = models.PositiveIntegerField(default=0, help_text="The seq of the last LoadTestEvent")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)

    class Meta:
        app_label = "execution"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["graph", "-created_at"], name="load_graph_created")]
        constraints = [
            models.CheckConstraint(condition=Q(requests__gte=1), name="load_requests_positive"),
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="load_concurrency_positive"),
        ]

    def __str__(self) -> str:
        return f"load test {self.pk} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class LoadTestEvent(LoggedEvent):
    """The persisted event log of a load test; ``seq`` counts from 1 per load test."""

    OWNER = "load_test"
    load_test = models.ForeignKey(LoadTest, on_delete=models.CASCADE, related_name="events")

    class Meta:
        app_label = "execution"
        ordering = ["load_test_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["load_test", "seq"], name="unique_load_event_seq")]
