"""Deploying versions through Git: where to (DeployTarget) and what went where (Deployment).

A target is owned and private or shared like an environment; its credentials are write-only (the
API never answers them, the audit log never holds them) and encrypted in the database. A
deployment is one commit of one version's exported YAML to one target; the latest pushed one per
graph and target is what is live, the earlier ones are ``superseded``. Its drift columns cache the
last read of the target's branch.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

DEFAULT_PATH_TEMPLATE = "graphs/{namespace}/{name}.yaml"


class DeployTarget(models.Model):
    class Visibility(models.TextChoices):
        PRIVATE = "private", "Private to its owner"
        SHARED = "shared", "Shared with every user"

    class Mode(models.TextChoices):
        COMMIT = "commit", "Commit to the branch"
        REVIEW = "review", "Push a branch for a pull request"

    name = models.CharField(max_length=63, unique=True)
    description = models.TextField(blank=True, default="")
    url = models.CharField(max_length=1000, help_text="file://, git://, http(s):// or ssh:// repository URL")
    branch = models.CharField(max_length=200, default="main")
    path = models.CharField(max_length=500, default=DEFAULT_PATH_TEMPLATE, help_text="{namespace}, {name}")
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.COMMIT)
    author_name = models.CharField(max_length=200, default="Inference Graph Studio")
    author_email = models.CharField(max_length=200, default="studio@localhost")
    username = models.CharField(max_length=200, blank=True, default="")
    # Write-only: never answered, never logged, never in the audit log. Encrypted at rest
    # ("fernet:<token>", config/secretbox.py); read only through targets.credentials_password.
    secret = models.TextField(blank=True, default="")
    allow_hosts = models.JSONField(
        default=list,
        blank=True,
        help_text="Hosts allowed although they resolve to loopback/private addresses",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PRIVATE)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Deployment(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Being pushed"
        PUSHED = "pushed", "Pushed to the branch"
        REVIEW = "review", "Pushed to a review branch"
        FAILED = "failed", "Failed"
        SUPERSEDED = "superseded", "Superseded by a later deployment"

    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey("graphs.GraphVersion", on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(DeployTarget, null=True, on_delete=models.SET_NULL, related_name="deployments")
    target_name = models.CharField(max_length=63)
    commit = models.CharField(max_length=64, blank=True, default="")
    base_commit = models.CharField(max_length=64, blank=True, default="")
    branch = models.CharField(max_length=300)
    path = models.CharField(max_length=500)
    mode = models.CharField(max_length=10, choices=DeployTarget.Mode.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    gate = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True, default="")
    content = models.TextField(help_text="The exported YAML the commit holds")
    error = models.TextField(blank=True, default="")
    error_kind = models.CharField(max_length=20, blank=True, default="")
    conflict_diff = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The last read of the file at the branch head (a refresh).
    checked_at = models.DateTimeField(null=True, blank=True)
    head_commit = models.CharField(max_length=64, blank=True, default="")
    drift = models.BooleanField(default=False)
    drift_diff = models.JSONField(null=True, blank=True)
    drift_content = models.TextField(blank=True, default="")
    drift_author = models.CharField(max_length=300, blank=True, default="")
    drift_message = models.TextField(blank=True, default="")
    drift_imported = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["graph", "target", "status"])]

    def __str__(self) -> str:
        return f"{self.graph_id} v{self.version_id} -> {self.target_name}"
