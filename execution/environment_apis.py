"""The environments API: where runs go (service URLs, headers, deadline, KServe release), each
environment's Test connection, and the catalogue of services the graphs call."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.pagination import paginate, paginated
from config.types import AuthedRequest as Request
from execution import selectors
from execution.models import Environment
from execution.serializers import (
    EnvironmentOutputSerializer,
)
from execution.services import environments, probes
from graphs.language.releases import DEFAULT_RELEASE, release_names


class _StringMapField(serializers.DictField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.CharField(max_length=2000), **kwargs)


class EnvironmentInput(serializers.Serializer):
    name = serializers.RegexField(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$", max_length=63)
    description = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    service_urls = _StringMapField(required=False)
    url_template = serializers.CharField(required=False, max_length=500)
    namespace = serializers.CharField(required=False, allow_blank=True, max_length=63)
    # Blank entries pass here so that the service explains why it refuses them.
    propagate_headers = serializers.ListField(
        child=serializers.CharField(max_length=500, allow_blank=True, trim_whitespace=False),
        required=False,
        max_length=100,
    )
    step_timeout = serializers.FloatField(required=False, min_value=0.001)
    deadline = serializers.FloatField(required=False, min_value=0.001)
    kserve_version = serializers.CharField(
        required=False,
        max_length=16,
        help_text="The KServe release whose router runs reproduce: "
        + ", ".join(release_names())
        + f" (aliases name the release with the same router; default {DEFAULT_RELEASE.name})",
    )
    allow_hosts = serializers.ListField(
        child=serializers.CharField(max_length=253), required=False, max_length=100
    )
    allow_networks = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=100
    )
    allow_loopback = serializers.BooleanField(required=False)
    allow_private = serializers.BooleanField(required=False)
    trace_propagation = serializers.BooleanField(
        required=False,
        help_text="Send a W3C traceparent to every step (default true); false sends none",
    )
    visibility = serializers.ChoiceField(
        choices=Environment.Visibility.choices,
        required=False,
        help_text="private (default): only you (and staff) see and use it; shared (staff only): everyone",
    )
    secret_headers = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, max_length=100
    )

    def validate_secret_headers(self, value: list[str]) -> list[str]:
        return [name.lower() for name in value]  # HTTP header names are case-insensitive


class EnvironmentListCreateApi(APIView):
    @extend_schema(operation_id="environments_list", responses=paginated(EnvironmentOutputSerializer))
    def get(self, request: Request) -> Response:
        """The environments you may use for test runs: yours, the shared ones and the system's
        default (`local`).
        """
        return paginate(
            request, self, selectors.environment_list(user=request.user), EnvironmentOutputSerializer
        )

    @extend_schema(
        operation_id="environments_create",
        request=EnvironmentInput,
        responses={201: EnvironmentOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        """Create an environment: where test runs send their step calls (service map, URL template),
        which client headers they propagate, their timeouts, and the private or loopback networks
        they may reach. Private to you unless staff shares it.
        """
        data = EnvironmentInput(data=request.data)
        data.is_valid(raise_exception=True)
        environment = environments.environment_create(owner=request.user, **data.validated_data)
        return Response(EnvironmentOutputSerializer(environment).data, status=status.HTTP_201_CREATED)


class EnvironmentDetailApi(APIView):
    @extend_schema(operation_id="environments_retrieve", responses=EnvironmentOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """One environment you may use, with its service map, header patterns, timeouts and networks."""
        return Response(EnvironmentOutputSerializer(selectors.environment_get(pk=pk, user=request.user)).data)

    @extend_schema(
        operation_id="environments_update",
        request=EnvironmentInput(partial=True),
        responses=EnvironmentOutputSerializer,
    )
    def patch(self, request: Request, pk: int) -> Response:
        """Change an environment. The owner (while private) or staff; every change is audited."""
        data = EnvironmentInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        environment = selectors.environment_get(pk=pk, user=request.user)
        environment = environments.environment_update(
            environment=environment, actor=request.user, **data.validated_data
        )
        return Response(EnvironmentOutputSerializer(environment).data)

    @extend_schema(operation_id="environments_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        """Delete an environment. The owner (while private) or staff; the system's default cannot be
        deleted.
        """
        environment = selectors.environment_get(pk=pk, user=request.user)
        environments.environment_delete(environment=environment, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProbeTensor(serializers.Serializer):
    name = serializers.CharField()
    datatype = serializers.CharField(allow_null=True)
    shape = serializers.ListField(child=serializers.IntegerField(), allow_null=True)


class ProbeError(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=[
            "blocked",
            "refused",
            "unresolved",
            "timeout",
            "too-large",
            "not-a-model-server",
            "transport",
            "bad-url",
        ]
    )
    message = serializers.CharField()


class ProbeServiceResult(serializers.Serializer):
    service = serializers.CharField(help_text="The serviceName")
    url = serializers.CharField(help_text="The URL a step calling it would POST to")
    protocol = serializers.ChoiceField(choices=["v1", "v2", "unknown"])
    model = serializers.CharField(allow_null=True, help_text="The model name in the URL (else the service's)")
    ready = serializers.BooleanField()
    platform = serializers.CharField(allow_null=True)
    versions = serializers.ListField(child=serializers.CharField(), allow_null=True)
    inputs = ProbeTensor(many=True, allow_null=True, help_text="v2 metadata's inputs")
    outputs = ProbeTensor(many=True, allow_null=True, help_text="v2 metadata's outputs")
    latency_ms = serializers.FloatField(allow_null=True, help_text="The whole probe of this service")
    error = ProbeError(allow_null=True, help_text="Null when the server answered as a model server")
    checked = serializers.ListField(
        child=serializers.DictField(), help_text="Each request made: url, and status or error"
    )


class EnvironmentProbeApi(APIView):
    class Output(serializers.Serializer):
        environment = serializers.CharField()
        services = ProbeServiceResult(many=True)

    @extend_schema(
        operation_id="environments_probe",
        parameters=[
            OpenApiParameter(
                "service",
                str,
                description="Probe only this serviceName (mapped, or through the URL template)",
            )
        ],
        responses=Output,
    )
    def get(self, request: Request, pk: int) -> Response:
        """Test connection: readiness, protocol (v1/v2) and v2 metadata of each service the
        environment maps, through its URL guard, in parallel with short timeouts. Every server's
        failure (refused, blocked, timed out, not a model server) is in its result."""
        environment = selectors.environment_get(pk=pk, user=request.user)
        service = request.query_params.get("service") or None
        return Response(self.Output(probes.environment_probe(environment=environment, service=service)).data)


class ServiceCatalogEntry(serializers.Serializer):
    name = serializers.CharField(help_text="A serviceName")
    graph_count = serializers.IntegerField(
        help_text="How many graphs (not archived) call it in their latest version"
    )
    environments = serializers.ListField(
        child=serializers.CharField(), help_text="The environments you may use that map it to a URL"
    )


class ServiceCatalogOutput(serializers.Serializer):
    services = ServiceCatalogEntry(many=True, help_text="The most used first, then by name")
    truncated = serializers.BooleanField(
        help_text=f"More names are known than the {selectors.SERVICE_CATALOG_LIMIT} answered"
    )


SERVICE_CATALOG_EXAMPLE = {
    "services": [
        {"name": "classifier", "graph_count": 3, "environments": ["staging"]},
        {"name": "summarizer", "graph_count": 1, "environments": []},
        {"name": "translator", "graph_count": 0, "environments": ["staging"]},
    ],
    "truncated": False,
}


class ServiceCatalogApi(APIView):
    @extend_schema(
        operation_id="services_list",
        responses=ServiceCatalogOutput,
        examples=[OpenApiExample("Three services", value=SERVICE_CATALOG_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        """The services the studio knows, for the editor's palette: the serviceNames the latest
        versions of the graphs (not archived) call, with how many graphs call each, and those mapped
        in the service maps of the environments you may use, with which environments map each. The
        most used first, at most 500.
        """
        catalog = selectors.service_catalog(user=request.user)
        return Response(ServiceCatalogOutput(catalog).data)
