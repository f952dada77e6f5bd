"""The graph store: a graph, its append-only versions, who may edit it, and what was done to it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

# KServe's webhook rule for InferenceGraph names (docs/router-semantics.md, "What KServe refuses").
GRAPH_NAME_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"


class Graph(models.Model):
    name = models.CharField(
        max_length=63,
        unique=True,
        validators=[RegexValidator(GRAPH_NAME_PATTERN)],
        help_text="The manifest's metadata.name and the graph's identity in URLs.",
    )
    namespace = models.CharField(max_length=63, default="default")
    description = models.TextField(blank=True, default="")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="graphs")
    editors: models.ManyToManyField[Any, Any] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="GraphMember", related_name="editable_graphs", blank=True
    )
    latest_version = models.ForeignKey(
        "GraphVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    require_passing_tests = models.BooleanField(
        default=False,
        help_text="Export a version only once a suite run of it passed on the current test cases",
    )
    # Ids, not a relation: the graph store never depends on the app that owns environments
    # (``graphs.suitestate`` asks it); an id that names no shared environment trusts nothing.
    gate_environments = models.JSONField(
        default=list,
        blank=True,
        help_text="Ids of the shared environments whose suite verdicts open the export gate; "
        "empty: the system's default environment",
    )
    latency_budgets = models.JSONField(
        default=dict,
        blank=True,
        help_text="p95 budgets in ms: {graph_p95_ms, steps: {'node/step': ms}} (graphs.language.budgets)",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class GraphMember(models.Model):
    """A user the owner added to the graph, with a role.

    A ``viewer`` reads and runs the graph (as every user may); an ``editor`` also saves versions
    and rolls back. Only the owner (or a superuser) manages members and archives the graph.
    """

    class Role(models.TextChoices):
        VIEWER = "viewer", "Viewer"
        EDITOR = "editor", "Editor"

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EDITOR)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["graph", "user"], name="unique_graph_member")]


class GraphVersion(models.Model):
    """One immutable save of a graph. Rows are only ever inserted (services enforce it)."""

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    manifest = models.JSONField(help_text="The whole InferenceGraph document.")
    layout = models.JSONField(default=dict, blank=True, help_text="Canvas positions; not part of the hash.")
    spec_hash = models.CharField(max_length=80)
    valid = models.BooleanField(default=True)
    issues = models.JSONField(default=list, blank=True)
    message = models.CharField(max_length=500, blank=True, default="")
    # A summary of the manifest and its issues, so that lists never load either (versions are
    # immutable, so these never go stale).
    node_count = models.PositiveIntegerField(default=0)
    step_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    warning_count = models.PositiveIntegerField(default=0)
    service_names = models.JSONField(
        default=list, blank=True, help_text="The serviceNames its steps call, sorted, each once."
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["graph_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "number"], name="unique_graph_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.graph.name} v{self.number}"


class AuditEvent(models.Model):
    """Who changed what and when."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=40)
    graph_name = models.CharField(max_length=63, blank=True, default="")
    version_number = models.PositiveIntegerField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]


class ApiToken(models.Model):
    """A personal API token: a user's key for ``Authorization: Token <key>``.

    Only the SHA-256 of the key is stored (``key_hash``): the key is shown once, when it is created,
    and never again. A key is 32 random bytes, so a fast hash is as safe as a slow one (nothing to
    guess from a dictionary). ``prefix`` is the key's first characters, for telling tokens apart in
    a list. Revoking a token deletes the row.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
