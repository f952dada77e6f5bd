"""A graph itself: list, create, read, change its settings, archive and restore."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.pagination import paginate, paginated
from config.types import AuthedRequest as Request
from graphs import selectors, services
from graphs.apis.common import FlagField, ObjectField, TruncatedCharField, etag, refuse_unknown
from graphs.serializers import GraphListItemSerializer, GraphOutputSerializer


class GraphListCreateApi(APIView):
    class GraphCreateInput(serializers.Serializer):
        name = serializers.CharField(required=False, allow_blank=False, max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)
        manifest = ObjectField(required=False)
        layout = ObjectField(required=False, default=dict)
        message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    class GraphListFilter(serializers.Serializer):
        search = TruncatedCharField(
            required=False, default="", max_chars=200, help_text="Substring of the name or description"
        )
        archived = FlagField(required=False, default=False, help_text="List archived graphs instead")
        mine = FlagField(required=False, default=False, help_text="Only graphs I own or edit")

    @extend_schema(
        operation_id="graphs_list", parameters=[GraphListFilter], responses=paginated(GraphListItemSerializer)
    )
    def get(self, request: Request) -> Response:
        """The graphs, by name, each with a summary of its latest version (never the manifest)."""
        filters = self.GraphListFilter(data=request.query_params)
        filters.is_valid(raise_exception=True)
        qs = selectors.graph_list(user=request.user, **filters.validated_data)
        return paginate(request, self, qs, GraphListItemSerializer)

    @extend_schema(
        operation_id="graphs_create", request=GraphCreateInput, responses={201: GraphOutputSerializer}
    )
    def post(self, request: Request) -> Response:
        """Create a graph from a manifest (its first version). The name comes from `name` or the
        manifest's `metadata.name` and must be a KServe name; a manifest KServe would reject is
        saved with `valid: false` and its issues.
        """
        data = self.GraphCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = services.graph_create(owner=request.user, **data.validated_data)
        graph = selectors.graph_get(name=graph.name, user=request.user)
        response = Response(GraphOutputSerializer(graph).data, status=status.HTTP_201_CREATED)
        response["ETag"] = etag(graph.latest_version.number if graph.latest_version else None)
        response["Location"] = f"/api/graphs/{graph.name}/"
        return response


class GraphDetailApi(APIView):
    @extend_schema(operation_id="graphs_retrieve", responses=GraphOutputSerializer)
    def get(self, request: Request, name: str) -> Response:
        """The graph with its latest version (manifest, layout, validity, issues). The `ETag` header
        (`"v{n}"`) is the precondition for the next save.
        """
        graph = selectors.graph_get(name=name, user=request.user)
        response = Response(GraphOutputSerializer(graph).data)
        response["ETag"] = etag(graph.latest_version.number if graph.latest_version else None)
        return response

    class GraphSettingsInput(serializers.Serializer):
        require_passing_tests = serializers.BooleanField(
            required=False,
            help_text="Export a version only once a suite run of it passed on the current test cases",
        )
        gate_environments = serializers.ListField(
            child=serializers.CharField(max_length=63),
            required=False,
            max_length=100,
            help_text="The shared environments whose suite verdicts open the export gate, by name; "
            "[]: the system's default environment",
        )
        latency_budgets = serializers.JSONField(
            required=False,
            help_text="p95 budgets in ms that load tests and suite runs judge: "
            "{graph_p95_ms, steps: {'node/step name or index': ms}}; {} for none",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            # A misspelt setting must not look saved: name what cannot be changed here.
            refuse_unknown(
                self,
                "not a setting of the graph (settable: require_passing_tests, gate_environments, latency_budgets)",
            )
            return attrs

    @extend_schema(
        operation_id="graphs_update",
        request=GraphSettingsInput,
        responses=GraphOutputSerializer,
        examples=[
            OpenApiExample(
                "Gate exports on tests",
                value={"require_passing_tests": True, "gate_environments": ["staging"]},
            ),
            OpenApiExample(
                "Latency budgets",
                value={"latency_budgets": {"graph_p95_ms": 250, "steps": {"root/detect": 120}}},
            ),
        ],
    )
    def patch(self, request: Request, name: str) -> Response:
        """Change the graph's settings: `require_passing_tests` (export only versions whose suite
        passed on the current test cases), `gate_environments` (the shared environments whose
        verdicts count; default: the system's) and `latency_budgets` (p95 of the graph and per
        step, in ms, judged by load tests and suite runs). Only verdicts of suite runs started by the owner
        or an editor count. The owner and editors; audited."""
        data = self.GraphSettingsInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        services.graph_settings_update(graph=graph, actor=request.user, **data.validated_data)
        return Response(GraphOutputSerializer(selectors.graph_get(name=name, user=request.user)).data)

    @extend_schema(operation_id="graphs_archive", responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        """Archive the graph: it leaves the list, its versions and runs stay readable."""
        graph = selectors.graph_get(name=name, user=request.user)
        services.graph_archive(graph=graph, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GraphRestoreApi(APIView):
    @extend_schema(operation_id="graphs_restore", request=None, responses=GraphOutputSerializer)
    def post(self, request: Request, name: str) -> Response:
        """Bring an archived graph back into the list. Owner only."""
        graph = selectors.graph_get(name=name, user=request.user)
        graph = services.graph_restore(graph=graph, actor=request.user)
        return Response(GraphOutputSerializer(selectors.graph_get(name=name, user=request.user)).data)
