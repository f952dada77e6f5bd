"""The output serializers of the execution app: what the API answers for environments, runs, their
steps and saved test cases. Input serializers stay with the API that reads them."""

from __future__ import annotations

import json
from typing import Any

from rest_framework import serializers

from config.nesting import MAX_JSON_DEPTH, nesting_exceeds, too_deep_message
from execution.models import Environment, Run, RunStep
from execution.services import environments
from execution.testcases.models import TestCase


class EnvironmentOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)

    class Meta:
        model = Environment
        fields = ["id", *environments.ENVIRONMENT_FIELDS, "owner", "system", "created_at", "updated_at"]


def body_value(text: str | None, content_type: str | None, encoding: str = "utf-8") -> Any:
    """A stored body for the API: the JSON value when it is JSON, else the text (or base64).

    JSON nested deeper than the limit stays text (see :func:`body_note`): parsing and rendering it
    would recurse past Python's limit, and a stored body must never make its run unreadable.
    """
    if text is None:
        return None
    if _is_json_type(content_type, encoding) and not nesting_exceeds(text):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def body_note(text: str | None, content_type: str | None, encoding: str = "utf-8") -> str | None:
    """Why :func:`body_value` shows a JSON body as text, or None when it does not."""
    if text is not None and _is_json_type(content_type, encoding) and nesting_exceeds(text):
        return too_deep_message("This body", MAX_JSON_DEPTH) + " It is shown as text."
    return None


def _is_json_type(content_type: str | None, encoding: str) -> bool:
    return encoding == "utf-8" and (content_type or "").split(";")[0].strip().lower().endswith("json")


def _with_note(view: dict[str, Any], note: str | None) -> dict[str, Any]:
    return {**view, "note": note} if note is not None else view


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
            "body": body_value(obj.request_body, obj.request_content_type),
            "content_type": obj.request_content_type,
            "headers": obj.request_headers,
        }
        return _with_note(view, body_note(obj.request_body, obj.request_content_type))

    def get_response(self, obj: Run) -> dict[str, Any]:
        view = {
            "status_code": obj.response_status,
            "content_type": obj.response_content_type,
            "body": body_value(obj.response_body, obj.response_content_type, obj.response_encoding),
            "encoding": obj.response_encoding,
            "size": obj.response_size,
            "truncated": obj.response_truncated,
        }
        note = body_note(obj.response_body, obj.response_content_type, obj.response_encoding)
        return _with_note(view, note)


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
