"""REST API of test runs, environments and the condition evaluator."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from execution.engine.conditions import evaluate_condition


class ConditionEvaluateApi(APIView):
    """Evaluate a GJSON condition against a document exactly as KServe's router does."""

    class Input(serializers.Serializer):
        document = serializers.JSONField(
            help_text="The JSON document; a string is taken as the raw request text (it may be invalid JSON)"
        )
        condition = serializers.CharField(allow_blank=True, max_length=10_000, trim_whitespace=False)

    @extend_schema(operation_id="conditions_evaluate", request=Input, responses=inline_serializer(
        "ConditionResult", {
            "matches": serializers.BooleanField(),
            "value": serializers.JSONField(allow_null=True),
            "raw": serializers.CharField(allow_null=True),
            "reason": serializers.CharField(allow_null=True),
        }))
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        document: Any = data.validated_data["document"]
        if isinstance(document, str):
            text = document  # already text: evaluate it as sent (it may be invalid JSON on purpose)
        else:
            text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
        result = evaluate_condition(text, data.validated_data["condition"])
        return Response({"matches": result.matches, "value": result.value, "raw": result.raw,
                         "reason": result.reason})
