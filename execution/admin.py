"""Admin: environments are editable; runs, steps and events are read-only records (services write them)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from execution.models import Environment, Run, RunEvent, RunStep


@admin.register(Environment)
class EnvironmentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "url_template",
        "step_timeout",
        "deadline",
        "allow_loopback",
        "allow_private",
        "owner",
        "updated_at",
    ]
    search_fields = ["name", "description"]
    readonly_fields = ["created_at", "updated_at"]


class _ReadOnly:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RunStepInline(_ReadOnly, admin.TabularInline):
    model = RunStep
    extra = 0
    can_delete = False
    fields = ("attempt", "call_id", "target", "status_code", "outcome", "duration_ms", "error")
    readonly_fields = fields


@admin.register(Run)
class RunAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = [
        "id",
        "graph",
        "version",
        "environment_name",
        "status",
        "response_status",
        "attempt",
        "created_by",
        "created_at",
        "duration_ms",
    ]
    list_filter = ["status", "environment_name"]
    search_fields = ["id", "graph__name"]
    list_select_related = ["graph", "version", "created_by"]
    inlines = [RunStepInline]


@admin.register(RunEvent)
class RunEventAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = ["run", "seq", "type", "created_at"]
    list_filter = ["type"]
    search_fields = ["run__id"]
