"""Manifests in and out as files: a version exported (past its test gate, or forced through it with
a reason) and manifests imported as graphs or new versions."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest
from config.params import VersionRef
from config.parsers import RawTextParser
from config.types import AuthedRequest as Request
from graphs import selectors, services
from graphs.apis.common import (
    base_version_from,
    refuse_unknown,
    release_field,
    release_of,
    stale_response,
    text_param,
)
from graphs.errors import StaleVersion
from graphs.imports import graph_import
from graphs.language import issue_dict
from graphs.language.releases import Release
from graphs.serializers import ImportResultSerializer

_EXPORT_FORMAT_HELP = "yaml (default) or json"


def _exported(graph: Any, version: Any, fmt: str, release: Release | None = None) -> HttpResponse:
    text, content_type = services.version_export(graph=graph, version=version, fmt=fmt, release=release)
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'inline; filename="{graph.name}-v{version.number}.{fmt}"'
    return response


class GraphVersionExportApi(APIView):
    class ExportQuery(serializers.Serializer):
        format = serializers.ChoiceField(
            choices=["yaml", "json"], default="yaml", required=False, help_text=_EXPORT_FORMAT_HELP
        )
        kserve_version = release_field()

    class ExportInput(serializers.Serializer):
        format = serializers.ChoiceField(
            choices=["yaml", "json"], default="yaml", required=False, help_text=_EXPORT_FORMAT_HELP
        )
        force = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Export although the test gate is closed: the owner and editors, with a reason",
        )
        reason = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            trim_whitespace=False,
            max_length=5000,
            help_text=f"Why the gate is forced (at least {services.REASON_MIN_VISIBLE} visible characters); "
            "the audit log keeps it",
        )
        kserve_version = release_field()

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            # A misspelt field ("forced") must not export as if it were not there.
            refuse_unknown(self, "not a field of an export (format, force, reason, kserve_version)")
            return attrs

    _responses: Any = {
        (200, "application/yaml"): OpenApiTypes.STR,
        (200, "application/json"): OpenApiTypes.OBJECT,
    }

    @extend_schema(operation_id="graphs_versions_export", parameters=[ExportQuery], responses=_responses)
    def get(self, request: Request, name: str, number: VersionRef) -> HttpResponse:
        """The version as a deployable InferenceGraph, YAML (default) or JSON, ready for `kubectl
        apply`. A version with errors KServe would reject answers 422 with its issues. When the
        graph requires passing tests, a version without a passing suite run the gate trusts (on
        the current cases, in an environment the graph trusts, started by its owner or an editor)
        answers 409 (`code: tests_required`). A GET never writes: forcing the gate is a POST.
        """
        if "force" in request.query_params or "reason" in request.query_params:
            raise BadRequest(
                "Forcing an export past its test gate is a POST to this URL with "
                '{"force": true, "reason": "..."} (it writes to the audit log; a GET never writes).',
                issues=[issue_dict("export.force-needs-post", "force with POST", path="force")],
            )  # fmt: skip
        query = self.ExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        version = selectors.version_get(graph=graph, number=number)
        services.export_gate(graph=graph, version=version)
        release = release_of(query.validated_data.get("kserve_version"))
        return _exported(graph, version, query.validated_data["format"], release)

    @extend_schema(
        operation_id="graphs_versions_export_create",
        request=ExportInput,
        responses=_responses,
        examples=[
            OpenApiExample(
                "Force past the test gate",
                value={"format": "yaml", "force": True, "reason": "hotfix for the outage in eu-west"},
            )
        ],
    )
    def post(self, request: Request, name: str, number: VersionRef) -> HttpResponse:
        """Export as GET does, recording the gate's decision in the audit log: a gated version
        that a trusted passing suite run opens (`version.export`, with that suite run), or, with
        `force` and a `reason` of at least 8 visible characters, one the gate refuses
        (`version.export_forced`; the owner and editors only, 403 otherwise). Session requests need
        their CSRF token.
        """
        data = self.ExportInput(data=request.data)
        data.is_valid(raise_exception=True)
        release = release_of(data.validated_data.get("kserve_version"))
        graph = selectors.graph_get(name=name, user=request.user)
        version = selectors.version_get(graph=graph, number=number)
        services.export_recorded(
            graph=graph,
            version=version,
            actor=request.user,
            force=data.validated_data["force"],
            reason=data.validated_data["reason"],
        )
        return _exported(graph, version, data.validated_data["format"], release)


class GraphImportApi(APIView):
    parser_classes = [RawTextParser]

    class ImportQuery(serializers.Serializer):
        graph = text_param(None, "Add the manifest as a new version of this graph")
        name = text_param(None, "Create the graph under this name")
        message = text_param("", "The message of the new versions")

    @extend_schema(
        operation_id="graphs_import",
        request={"application/yaml": OpenApiTypes.STR, "application/json": OpenApiTypes.OBJECT},
        parameters=[ImportQuery, OpenApiParameter("If-Match", str, OpenApiParameter.HEADER)],
        responses={201: ImportResultSerializer},
    )
    def post(self, request: Request) -> Response:
        """Import one or more InferenceGraph manifests (a YAML stream or JSON). Each document
        becomes a graph, or with `?graph=` a new version of that graph. Every field is kept;
        problems come back as issues with their line and column. At most a bounded number of
        documents per request (413 beyond).
        """
        query = self.ImportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        raw = request.data if isinstance(request.data, bytes) else b""
        target = query.validated_data["graph"]
        try:
            result = graph_import(
                source=raw,
                owner=request.user,
                graph_name=target,
                name=query.validated_data["name"],
                message=query.validated_data["message"],
                base_version=base_version_from(request, None) if target else None,
            )
        except StaleVersion as stale:
            return stale_response(stale)
        return Response(ImportResultSerializer(result).data, status=status.HTTP_201_CREATED)
