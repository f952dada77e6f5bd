"""Output shapes of the graph APIs (field names are a public contract: docs/architecture.md, "Public contracts")."""

from __future__ import annotations

from rest_framework import serializers

from graphs.models import AuditEvent, Graph, GraphMember, GraphVersion


class IssueSerializer(serializers.Serializer):
    code = serializers.CharField()
    severity = serializers.ChoiceField(choices=["error", "warning"])
    message = serializers.CharField()
    node = serializers.CharField(required=False)
    step = serializers.IntegerField(required=False)
    step_name = serializers.CharField(required=False)
    path = serializers.CharField(required=False)
    line = serializers.IntegerField(required=False)
    column = serializers.IntegerField(required=False)


class VersionOutputSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)
    parent = serializers.SerializerMethodField()  # type: ignore[assignment]
    issues = IssueSerializer(many=True, read_only=True)
    manifest = serializers.JSONField()
    layout = serializers.JSONField()

    class Meta:
        model = GraphVersion
        fields = [
            "number",
            "manifest",
            "layout",
            "spec_hash",
            "message",
            "author",
            "created_at",
            "parent",
            "valid",
            "issues",
        ]

    def get_parent(self, obj: GraphVersion) -> int | None:
        parent = obj.parent
        return parent.number if parent is not None else None


class VersionSummarySerializer(VersionOutputSerializer):
    """A history row: everything but the (large) manifest and layout."""

    class Meta(VersionOutputSerializer.Meta):
        fields = ["number", "spec_hash", "message", "author", "created_at", "parent", "valid", "issues"]


class VersionBriefSerializer(serializers.ModelSerializer):
    """A list entry's latest version: what it is, never its manifest, layout or issues."""

    author = serializers.CharField(source="author.username", read_only=True)
    issue_counts = serializers.SerializerMethodField()

    class Meta:
        model = GraphVersion
        fields = [
            "number",
            "spec_hash",
            "message",
            "author",
            "created_at",
            "valid",
            "node_count",
            "step_count",
            "issue_counts",
        ]

    def get_issue_counts(self, obj: GraphVersion) -> dict[str, int]:
        return {"error": obj.error_count, "warning": obj.warning_count}


class GraphOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    latest_version = VersionOutputSerializer(read_only=True, allow_null=True)
    editors = serializers.SerializerMethodField()
    viewers = serializers.SerializerMethodField()
    archived = serializers.SerializerMethodField()

    class Meta:
        model = Graph
        fields = [
            "name",
            "namespace",
            "description",
            "owner",
            "editors",
            "viewers",
            "created_at",
            "updated_at",
            "archived",
            "latest_version",
        ]

    def get_editors(self, obj: Graph) -> list[str]:
        return sorted(m.user.username for m in obj.members.all() if m.role == GraphMember.Role.EDITOR)

    def get_viewers(self, obj: Graph) -> list[str]:
        return sorted(m.user.username for m in obj.members.all() if m.role == GraphMember.Role.VIEWER)

    def get_archived(self, obj: Graph) -> bool:
        return obj.archived_at is not None


class GraphListItemSerializer(GraphOutputSerializer):
    """A row of the graph list: the graph with a summary of its latest version."""

    latest_version = VersionBriefSerializer(read_only=True, allow_null=True)  # type: ignore[assignment]


class MemberOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username")

    class Meta:
        model = GraphMember
        fields = ["user", "role", "added_at"]


class AuditEventOutputSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    graph = serializers.CharField(source="graph_name")
    version = serializers.IntegerField(source="version_number", allow_null=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "action", "graph", "version", "details"]


class ImportedGraphSerializer(serializers.Serializer):
    graph = serializers.CharField()
    version = VersionOutputSerializer()
    created = serializers.BooleanField()


class ImportResultSerializer(serializers.Serializer):
    """What an import did (``graphs.imports.ImportResult``): a graph or version per document."""

    graphs = ImportedGraphSerializer(many=True)
    issues = IssueSerializer(many=True)
