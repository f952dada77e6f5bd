"""Where test runs go: an :class:`Environment` (its step URLs, limits, allowed networks and who may
use it)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from execution.engine.config import DEFAULT_DEADLINE_S, DEFAULT_URL_TEMPLATE
from graphs.language.releases import DEFAULT_RELEASE, RELEASE_CHOICES

# Seconds an environment gives each step call unless it says otherwise (the engine itself puts no
# limit on a step below the run's deadline; a test run wants a stuck model to fail on its own).
DEFAULT_STEP_TIMEOUT = 30.0


class Environment(models.Model):
    """Where test runs send their step calls, and how long they may take.

    Using an environment is a permission (it decides where a run's payload and forwarded headers
    go, and which networks its steps may reach): a ``private`` one serves its owner only, a
    ``shared`` one everybody; only staff may share. The ``system`` environment is the default of
    runs that name none; it belongs to no user and only staff may change it
    (``execution.access`` holds the rule, ``execution.services`` the writes).
    """

    class Visibility(models.TextChoices):
        PRIVATE = "private", "Private to its owner"
        SHARED = "shared", "Shared with every user"

    name = models.CharField(max_length=63, unique=True)
    description = models.TextField(blank=True, default="")
    service_urls = models.JSONField(default=dict, blank=True, help_text="serviceName -> URL")
    url_template = models.CharField(
        max_length=500,
        default=DEFAULT_URL_TEMPLATE,
        help_text="URL for serviceNames not in service_urls; {name} and {namespace} are replaced.",
    )
    namespace = models.CharField(
        max_length=63, blank=True, default="", help_text="{namespace} in the template; empty: the graph's."
    )
    propagate_headers = models.JSONField(
        default=list, blank=True, help_text="Regexes of header names to forward"
    )
    step_timeout = models.FloatField(default=DEFAULT_STEP_TIMEOUT, help_text="Seconds per step call")
    kserve_version = models.CharField(
        max_length=16,
        choices=RELEASE_CHOICES,
        default=DEFAULT_RELEASE.name,
        help_text="The KServe release whose router runs reproduce (and validation checks against)",
    )
    deadline = models.FloatField(default=DEFAULT_DEADLINE_S, help_text="Seconds for the whole run")
    allow_hosts = models.JSONField(
        default=list,
        blank=True,
        help_text="Host names (or *.suffix) allowed although they resolve to loopback/private addresses",
    )
    allow_networks = models.JSONField(default=list, blank=True, help_text="CIDRs allowed although private")
    allow_loopback = models.BooleanField(default=False)
    allow_private = models.BooleanField(default=False)
    trace_propagation = models.BooleanField(
        default=True,
        help_text="Send a W3C traceparent to every step, so the model servers' spans nest under the run's",
    )
    secret_headers = models.JSONField(
        default=list,
        blank=True,
        help_text="Lower-case request header names stored redacted although harmless elsewhere",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="environments",
    )
    visibility = models.CharField(
        max_length=10,
        choices=Visibility.choices,
        default=Visibility.PRIVATE,
        help_text="private: only the owner (and staff) may see and use it; shared: every user",
    )
    system = models.BooleanField(
        default=False, help_text="The default environment of runs that name none; owned by no user"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(step_timeout__gt=0), name="environment_step_timeout_positive"),
            models.CheckConstraint(condition=Q(deadline__gt=0), name="environment_deadline_positive"),
            models.UniqueConstraint(
                fields=["system"], condition=Q(system=True), name="one_system_environment"
            ),
            models.CheckConstraint(
                condition=Q(system=False) | Q(owner__isnull=True, visibility="shared"),
                name="system_environment_is_shared_and_ownerless",
            ),
        ]

    def __str__(self) -> str:
        return self.name
