"""The output serializers of the execution app: what the API answers for environments, runs, their
steps and saved test cases. Input serializers stay with the API that reads them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from execution import bodies, selectors
from execution.cases import secrets
from execution.cases.models import GraphCase
from execution.eventschema import RUN_EVENT_TYPES
from execution.models import Environment, Run, RunStep
from execution.services import environments


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
    steps = serializers.SerializerMethodField(
        help_text="The first RUN_DETAIL_STEPS steps in trace order (all of them for most runs); "
        "`steps_truncated` says whether more exist, `steps_url` pages through all"
    )
    steps_total = serializers.SerializerMethodField(help_text="How many steps the run stored")
    steps_truncated = serializers.SerializerMethodField(help_text="Whether `steps` holds only the first ones")
    step_counts = serializers.SerializerMethodField(
        help_text="How many steps ended each way (outcome -> count)"
    )
    steps_url = serializers.SerializerMethodField(help_text="Every step, paged")
    events_total = serializers.IntegerField(
        source="event_seq", help_text="How many events the run stored (the `seq` of the last one)"
    )

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
            "steps_total",
            "steps_truncated",
            "step_counts",
            "steps_url",
            "events_total",
        ]

    def _steps(self, obj: Run) -> tuple[list[RunStep], dict[str, int]]:
        """The first steps and the counts by outcome, as ``selectors.run_get`` read them (read
        here, in the same bounded way, for a run that came from elsewhere)."""
        if not hasattr(obj, "first_steps"):
            selectors.with_first_steps(obj)
        return obj.first_steps, obj.step_counts  # type: ignore[attr-defined]

    @extend_schema_field(RunStepOutputSerializer(many=True))
    def get_steps(self, obj: Run) -> list[dict[str, Any]]:
        return RunStepOutputSerializer(self._steps(obj)[0], many=True).data  # type: ignore[return-value]

    def get_steps_total(self, obj: Run) -> int:
        return sum(self._steps(obj)[1].values())

    def get_steps_truncated(self, obj: Run) -> bool:
        first, counts = self._steps(obj)
        return len(first) < sum(counts.values())

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_step_counts(self, obj: Run) -> dict[str, int]:
        return self._steps(obj)[1]

    def get_steps_url(self, obj: Run) -> str:
        return f"/api/runs/{obj.pk}/steps/"

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
        fields = [
            f
            for f in RunOutputSerializer.Meta.fields
            if f not in ("steps", "config", "steps_total", "steps_truncated", "step_counts", "steps_url")
        ]

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

    def to_representation(self, instance: GraphCase) -> dict[str, Any]:
        # The document redacted with the secret names of today (a name marked secret after the
        # case was saved is not shown in clear), read once per answer however many cases it holds.
        data: dict[str, Any] = super().to_representation(instance)
        root = self.root
        names = getattr(root, "_secret_header_names", None)
        if names is None:
            names = secrets.secret_header_names()
            setattr(root, "_secret_header_names", names)  # noqa: B010 (not a declared attribute)
        data["document"] = secrets.redacted_document(data["document"], names)
        return data

    class Meta:
        model = GraphCase
        fields = [
            "id",
            "graph",
            "name",
            "description",
            "document",
            "created_by",
            "created_at",
            "updated_at",
            "revision",
        ]


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
    """``GET /api/runs/{id}/events/?format=json``: a page of the stored events in order, whether
    the run's terminal event is stored, how many events are stored and the next page."""

    run = serializers.UUIDField()
    finished = serializers.BooleanField(help_text="whether the run's terminal event is stored")
    events = RunEventSerializer(many=True)
    total = serializers.IntegerField(help_text="how many events the run has stored (the last seq)")
    next = serializers.CharField(
        allow_null=True, help_text="the next page (the events after this page's last), null on the last page"
    )
