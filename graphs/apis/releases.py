"""What KServe makes of a manifest: validation without saving, and the report of what changes
between two KServe releases for a saved version."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.params import VersionRef
from config.types import AuthedRequest as Request
from graphs import language, selectors
from graphs.apis.common import ObjectField, release_field, release_of
from graphs.language.release_rules import release_issues, upgrade_changes
from graphs.language.releases import DEFAULT_RELEASE, releases_between
from graphs.serializers import IssueSerializer


class GraphVersionUpgradeReportApi(APIView):
    class ReportQuery(serializers.Serializer):
        # ``from`` is a Python keyword: the field is declared under another name and renamed below.
        from_ = serializers.CharField(max_length=16, help_text="The release the cluster runs now")
        to = serializers.CharField(
            max_length=16, help_text="The release it would run (default: the newest)", required=False
        )

        def get_fields(self) -> dict[str, Any]:
            fields = super().get_fields()
            fields["from"] = fields.pop("from_")
            return fields

    @extend_schema(
        operation_id="graphs_versions_upgrade_report",
        parameters=[
            OpenApiParameter(
                "from", str, required=True, description="The release the cluster runs now (e.g. v0.14.1)"
            ),
            OpenApiParameter("to", str, description="The release it would run (default: the newest)"),
        ],
        responses=inline_serializer(
            "UpgradeReport",
            {
                "graph": serializers.CharField(),
                "version": serializers.IntegerField(),
                "from": serializers.DictField(),
                "to": serializers.DictField(),
                "same_router": serializers.BooleanField(),
                "releases": serializers.ListField(child=serializers.CharField()),
                "changes": serializers.ListField(child=serializers.DictField()),
                "issues": serializers.DictField(),
            },
        ),
    )
    def get(self, request: Request, name: str, number: VersionRef) -> Response:
        """Every behaviour of this version that changes between KServe release `from` and `to`, as
        the release rules know them (each with the release where it changed and what either
        release does), and what validation says of the version on each release. What the rules do
        not tell, the graph's test suite does: start a comparison of this version with itself,
        `kserve_version_a`/`kserve_version_b` set (`POST /api/graphs/{name}/suite-runs/compare/`).
        """
        query = self.ReportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        old = release_of(query.validated_data["from"])
        new = release_of(query.validated_data.get("to")) or DEFAULT_RELEASE
        assert old is not None  # a required field
        graph = selectors.graph_get(name=name, user=request.user)
        version = selectors.version_get(graph=graph, number=number)
        manifest = language.manifest_from_document(version.manifest)
        low, high = (old, new) if old.order <= new.order else (new, old)
        return Response(
            {
                "graph": graph.name,
                "version": version.number,
                "from": {"name": old.name, "label": old.label},
                "to": {"name": new.name, "label": new.label},
                "same_router": old is new,
                "releases": [r.name for r in releases_between(low, high)],
                "changes": [c.to_dict() for c in upgrade_changes(manifest, old, new)],
                "issues": {
                    side.name: [i.to_dict() for i in release_issues(manifest, side)] for side in (old, new)
                },
            }
        )


class ValidateApi(APIView):
    class ServiceContractInput(serializers.Serializer):
        protocol = serializers.ChoiceField(choices=["v1", "v2", "unknown"])
        inputs = serializers.ListField(child=ObjectField(), required=False, allow_null=True, max_length=1000)
        outputs = serializers.ListField(child=ObjectField(), required=False, allow_null=True, max_length=1000)

    class ValidateInput(serializers.Serializer):
        manifest = ObjectField()
        services = serializers.DictField(
            child=serializers.DictField(),
            required=False,
            help_text="What is known of the services (a Test connection's results): serviceName or "
            "serviceUrl -> {protocol, inputs, outputs}; edge-contract warnings use it",
        )
        kserve_version = release_field()

        def validate_services(self, value: dict[str, Any]) -> dict[str, Any]:
            if len(value) > 1000:
                raise serializers.ValidationError("At most 1000 services.")
            out = {}
            for name, entry in value.items():
                contract = ValidateApi.ServiceContractInput(data=entry)
                if not contract.is_valid():
                    raise serializers.ValidationError({name: contract.errors})
                out[name] = contract.validated_data
            return out

    @extend_schema(
        operation_id="validate",
        request=ValidateInput,
        responses=inline_serializer(
            "ValidateResult",
            {
                "valid": serializers.BooleanField(),
                "issues": IssueSerializer(many=True),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        """Validate a manifest without saving it: every issue at once, each pinned to its node, step
        and field. Errors are what KServe would reject; warnings are what KServe accepts but will
        misbehave on, edge contracts among them (``contract.*``: a Sequence step fed an answer it
        cannot take), more precise when ``services`` says what a Test connection found.
        """
        data = self.ValidateInput(data=request.data)
        data.is_valid(raise_exception=True)
        manifest = language.manifest_from_document(data.validated_data["manifest"])
        services = data.validated_data.get("services")
        release = release_of(data.validated_data.get("kserve_version"))
        issues = [i.to_dict() for i in language.issues_with_contracts(manifest, services)]
        if release is not None:
            issues += [i.to_dict() for i in release_issues(manifest, release)]
        return Response({"valid": not any(i["severity"] == "error" for i in issues), "issues": issues})
