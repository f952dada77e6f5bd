"""Saved test cases of a graph (they outlive its versions).

A case is stored as the document the author wrote (``kind: InferenceGraphTest``'s case format, see
``execution.casecore``), already validated, with secret header values redacted as runs store
them. The model is registered with the ``execution`` app (the ``execution.models`` package imports it).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class GraphCase(models.Model):
    """One saved request of a graph with its expectations. Written only by
    ``execution.cases.services``; ``name`` is unique within the graph."""

    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="test_cases")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    document = models.JSONField(
        help_text="The case as an InferenceGraphTest case document (secrets redacted)"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    revision = models.PositiveIntegerField(
        default=1, help_text="Counts its changes: its ETag is r{revision}, and a stale If-Match is refused"
    )

    class Meta:
        app_label = "execution"
        ordering = ["graph_id", "name"]
        constraints = [models.UniqueConstraint(fields=["graph", "name"], name="unique_test_case_name")]

    def __str__(self) -> str:
        return f"{self.graph_id}: {self.name}"
