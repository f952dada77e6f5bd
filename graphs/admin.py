"""Read-only admin: versions are immutable, and every write goes through the services."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from graphs.models import ApiToken, AuditEvent, Graph, GraphMember, GraphVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class GraphMemberInline(admin.TabularInline):
    model = GraphMember
    extra = 0
    can_delete = False
    readonly_fields = ["user", "role", "added_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Graph)
class GraphAdmin(ReadOnlyAdmin):
    list_display = ["name", "namespace", "owner", "latest_version", "updated_at", "archived_at"]
    search_fields = ["name", "description"]
    list_filter = ["archived_at"]
    inlines = [GraphMemberInline]


@admin.register(GraphVersion)
class GraphVersionAdmin(ReadOnlyAdmin):
    list_display = ["graph", "number", "valid", "author", "message", "created_at"]
    list_filter = ["valid"]
    search_fields = ["graph__name", "message"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "actor", "action", "graph_name", "version_number"]
    list_filter = ["action"]
    search_fields = ["graph_name", "actor__username"]


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Who holds which personal API tokens (never a key: only its hash is stored, and not shown)."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "expires_at"]
    search_fields = ["name", "user__username", "prefix"]
    exclude = ["key_hash"]
