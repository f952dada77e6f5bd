"""The output serializers of the execution app: what the API answers for environments, runs, their
steps and saved test cases. Input serializers stay with the API that reads them."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from execution import bodies
from execution.eventschema import RUN_EVENT_TYPES
from execution.models import Environment, Run, RunStep
from execution.services import environments
from execution.testcases.models import TestCase


class EnvironmentOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)

    class Meta:
        model = Environment
        fields = ["id", *environments.ENVIRONMENT_FIELDS, "owner", "system", "created_at", "updated_at"]


class RunStepOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = RunStep
        fields = [
            "attempt",
            "call_id",
            "parent_call_id",
            "node",
            "step_index",
            "step_name",
            "kind",
            "target",
            "request_headers",
            "request",
            "status_code",
            "content_type",
            "response",
            "outcome",
            "error",
            "condition",
            "route",
            "started_at",
            "finished_at",
            "duration_ms",
        ]


class RunOutputSerializer(serializers.ModelSerializer):
    graph = serializers.CharField(source="graph.name")
    version = serializers.IntegerField(source="version.number")
    environment = serializers.SerializerMethodField()
    request = serializers.SerializerMethodField()
    response = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username")
    rerun_of = serializers.UUIDField(source="rerun_of_id", allow_null=True)
    steps = RunStepOutputSerializer(many=True, read_only=True)

    class Meta:
        model = Run
        fields = [
            "id",
            "graph",
            "version",
            "environment",
            "status",
            "request",
            "response",
            "error",
            "steps",
            "created_at",
            "started_at",
            "finished_at",
            "attempt",
            "seed",
            "duration_ms",
            "created_by",
            "rerun_of",
            "cancel_requested",
            "config",
        ]

    def get_environment(self, obj: Run) -> dict[str, Any]:
        return {"id": obj.environment_id, "name": obj.environment_name}

    def get_request(self, obj: Run) -> dict[str, Any]:
        view = {
            "body": bodies.body_value(obj.request_body, obj.request_content_type),
            "content_type": obj.request_content_type,
            "headers": obj.request_headers,
        }
        return bodies.with_note(view, bodies.body_note(obj.request_body, obj.request_content_type))

    def get_response(self, obj: Run) -> dict[str, Any]:
        return bodies.response_view(
            status_code=obj.response_status,
            content_type=obj.response_content_type,
            body=obj.response_body,
            encoding=obj.response_encoding,
            size=obj.response_size,
            truncated=obj.response_truncated,
        )


class RunSummarySerializer(RunOutputSerializer):
    """A list row: no steps, no bodies (fetch the run for those)."""

    class Meta(RunOutputSerializer.Meta):
        fields = [f for f in RunOutputSerializer.Meta.fields if f not in ("steps", "config")]

    def get_request(self, obj: Run) -> dict[str, Any]:
        return {"content_type": obj.request_content_type}

    def get_response(self, obj: Run) -> dict[str, Any]:
        return {"status_code": obj.response_status, "content_type": obj.response_content_type}


class TestCaseOutputSerializer(serializers.ModelSerializer):
    graph = serializers.CharField(source="graph.name")
    created_by = serializers.CharField(source="created_by.username")
    document = serializers.JSONField(
        help_text="The case as written (request, seed, environment, expectations)"
    )

    class Meta:
        model = TestCase
        fields = ["id", "graph", "name", "description", "document", "created_by", "created_at", "updated_at"]


class RunEventSerializer(serializers.Serializer):
    """One stored event, exactly as an SSE ``data:`` line carries it (``seq`` is the SSE id)."""

    run = serializers.UUIDField()
    seq = serializers.IntegerField()
    type = serializers.ChoiceField(
        choices=RUN_EVENT_TYPES, help_text="the event type, declared in execution/eventschema.py"
    )
    created_at = serializers.DateTimeField(allow_null=True)
    # DRF takes declared fields off the class, so this does not hide Serializer.data (mypy cannot know)
    data = serializers.JSONField()  # type: ignore[assignment]


class RunEventLogSerializer(serializers.Serializer):
    """``GET /api/runs/{id}/events/?format=json``: the stored events in order, and whether the
    run's terminal event is among them."""

    run = serializers.UUIDField()
    finished = serializers.BooleanField(help_text="whether the run's terminal event is stored")
    events = RunEventSerializer(many=True)
