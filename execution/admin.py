"""Admin: environments are editable; runs, steps and events are read-only records (services write them)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from execution.models import Environment, Run, RunEvent, RunStep
from graphs.services import audit


@admin.register(Environment)
class EnvironmentAdmin(admin.ModelAdmin):
    """Staff edit environments here too; every change is audited like one made through the API."""

    list_display = [
        "name",
        "visibility",
        "system",
        "url_template",
        "step_timeout",
        "deadline",
        "kserve_version",
        "allow_loopback",
        "allow_private",
        "trace_propagation",
        "owner",
        "updated_at",
    ]
    search_fields = ["name", "description"]
    readonly_fields = ["system", "created_at", "updated_at"]

    def save_model(self, request: HttpRequest, obj: Environment, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        audit(
            request.user,  # type: ignore[arg-type]  # the admin requires a logged-in staff user
            "environment.update" if change else "environment.create",
            environment=obj.pk,
            environment_name=obj.name,
            fields=sorted(form.changed_data),
            via="admin",
        )

    def delete_model(self, request: HttpRequest, obj: Environment) -> None:
        self._audit_delete(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for environment in queryset:
            self._audit_delete(request, environment)
        super().delete_queryset(request, queryset)

    def _audit_delete(self, request: HttpRequest, environment: Environment) -> None:
        audit(
            request.user,  # type: ignore[arg-type]
            "environment.delete",
            environment=environment.pk,
            environment_name=environment.name,
            via="admin",
        )


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
