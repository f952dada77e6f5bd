"""Output shapes of the graph APIs (field names are a public contract: docs/architecture.md, "Public contracts")."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from graphs import language, suitestate
from graphs.models import ApiToken, AuditEvent, Graph, GraphMember, GraphVersion


class TestsSummarySerializer(serializers.Serializer):
    """The latest suite run of a version (``tests``); ``current``: it ran the graph's current cases."""

    __test__ = False  # not a pytest class, whatever its name says

    suite_run = serializers.UUIDField()
    status = serializers.ChoiceField(choices=["queued", "running", "passed", "failed", "error", "cancelled"])
    counts = serializers.DictField(child=serializers.IntegerField())
    environment = serializers.CharField(allow_null=True)
    current = serializers.BooleanField()
    gate = serializers.BooleanField(
        help_text="Whether the export gate trusts this verdict: it ran in an environment the graph "
        "trusts and was started by someone who may change the graph"
    )
    finished_at = serializers.DateTimeField(allow_null=True)


def _memo(serializer: serializers.BaseSerializer[Any]) -> suitestate.Memo:
    """One request's cache for ``graphs.suitestate`` (shared by a list's items: one root context)."""
    context = serializer.context
    return context.setdefault("suitestate", {}) if isinstance(context, dict) else {}


class _VersionList(serializers.ListSerializer):  # type: ignore[type-arg]
    """A page of versions: their green states are read for the whole page at once, not per row."""

    def to_representation(self, data: Any) -> list[Any]:
        versions = list(data.all() if hasattr(data, "all") else data)
        suitestate.prime(versions=versions, memo=_memo(self))
        return super().to_representation(versions)


class _GraphList(serializers.ListSerializer):  # type: ignore[type-arg]
    """A page of graphs: their latest versions' green states and last passing versions are read
    for the whole page at once, not per row."""

    def to_representation(self, data: Any) -> list[Any]:
        graphs = list(data.all() if hasattr(data, "all") else data)
        latest = [g.latest_version for g in graphs if g.latest_version is not None]
        suitestate.prime(versions=latest, graphs=graphs, memo=_memo(self))
        return super().to_representation(graphs)


class _WithTests(serializers.Serializer):
    """Adds ``tests``: the version's green state (``graphs.suitestate``)."""

    tests = serializers.SerializerMethodField()

    @extend_schema_field(TestsSummarySerializer(allow_null=True))
    def get_tests(self, obj: GraphVersion) -> dict[str, Any] | None:
        return suitestate.version_tests(obj, _memo(self))


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


class VersionOutputSerializer(_WithTests, serializers.ModelSerializer):
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
            "tests",
        ]

    def get_parent(self, obj: GraphVersion) -> int | None:
        parent = obj.parent
        return parent.number if parent is not None else None


class VersionSummarySerializer(VersionOutputSerializer):
    """A history row: everything but the (large) manifest and layout."""

    class Meta(VersionOutputSerializer.Meta):
        list_serializer_class = _VersionList
        fields = [
            "number",
            "spec_hash",
            "message",
            "author",
            "created_at",
            "parent",
            "valid",
            "issues",
            "tests",
        ]


class VersionBriefSerializer(_WithTests, serializers.ModelSerializer):
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
            "tests",
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
            "require_passing_tests",
            "gate_environments",
            "latency_budgets",
            "last_passing_version",
            "since_last_passing",
        ]

    gate_environments = serializers.SerializerMethodField(
        help_text="The shared environments whose suite verdicts open the export gate, by name; "
        "empty: the system's default environment"
    )

    def get_gate_environments(self, obj: Graph) -> list[str]:
        return suitestate.gate_environment_names(obj)

    last_passing_version = serializers.SerializerMethodField(
        help_text="The version of the newest passing suite run on the current test cases"
    )

    since_last_passing = serializers.SerializerMethodField(
        help_text="The semantic diff from the last passing version to the latest (null when none "
        "passed, or the latest did)"
    )

    def get_last_passing_version(self, obj: Graph) -> int | None:
        return suitestate.last_passing_version(obj, _memo(self))

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_since_last_passing(self, obj: Graph) -> dict[str, Any] | None:
        number = suitestate.last_passing_version(obj, _memo(self))
        latest = obj.latest_version
        if number is None or latest is None or number == latest.number:
            return None
        passed = GraphVersion.objects.filter(graph=obj, number=number).only("manifest").first()
        if passed is None:
            return None
        changes = language.diff(
            language.manifest_from_document(passed.manifest), language.manifest_from_document(latest.manifest)
        )
        return {"from": number, "to": latest.number, **changes.to_dict()}

    def get_editors(self, obj: Graph) -> list[str]:
        return sorted(m.user.username for m in obj.members.all() if m.role == GraphMember.Role.EDITOR)

    def get_viewers(self, obj: Graph) -> list[str]:
        return sorted(m.user.username for m in obj.members.all() if m.role == GraphMember.Role.VIEWER)

    def get_archived(self, obj: Graph) -> bool:
        return obj.archived_at is not None


class GraphListItemSerializer(GraphOutputSerializer):
    """A row of the graph list: the graph with a summary of its latest version (no diffs: a list
    never loads manifests)."""

    latest_version = VersionBriefSerializer(read_only=True, allow_null=True)  # type: ignore[assignment]

    class Meta(GraphOutputSerializer.Meta):
        fields = [
            f
            for f in GraphOutputSerializer.Meta.fields
            if f not in ("since_last_passing", "gate_environments")
        ]
        list_serializer_class = _GraphList


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


class ApiTokenOutputSerializer(serializers.ModelSerializer):
    """A personal API token as listed: never its key (only the SHA-256 of it is stored)."""

    prefix = serializers.CharField(
        read_only=True, help_text="The key's first characters, to tell tokens apart"
    )

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at", "expires_at"]
        read_only_fields = fields


class ApiTokenCreatedSerializer(ApiTokenOutputSerializer):
    """A token just created: the one answer that carries its ``key``."""

    key = serializers.CharField(
        read_only=True, help_text="Send as `Authorization: Token <key>`; shown this once, never again"
    )

    class Meta(ApiTokenOutputSerializer.Meta):
        fields = [*ApiTokenOutputSerializer.Meta.fields, "key"]
        read_only_fields = fields
