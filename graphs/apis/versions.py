"""A graph's versions: list, save (JSON or YAML), read, roll back, and the diff between two."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, VersionRef, VersionRefField
from config.parsers import YAML_PARSERS, StrictJSONParser
from config.types import AuthedRequest as Request
from graphs import language, selectors, services
from graphs.apis.common import ObjectField, base_version_from, saved_response, stale_response
from graphs.errors import StaleVersion
from graphs.imports import graph_version_from_text
from graphs.serializers import VersionOutputSerializer, VersionSummarySerializer


class GraphVersionListCreateApi(APIView):
    parser_classes = [StrictJSONParser, *YAML_PARSERS]

    class VersionSaveInput(serializers.Serializer):
        manifest = ObjectField()
        layout = ObjectField(required=False, default=dict)
        message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
        base_version = serializers.IntegerField(
            required=False, allow_null=True, min_value=0, max_value=MAX_DB_INT, default=None
        )

    @extend_schema(operation_id="graphs_versions_list", responses=paginated(VersionSummarySerializer))
    def get(self, request: Request, name: str) -> Response:
        """The graph's versions, newest first, as summaries (no manifests)."""
        graph = selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        return paginate(request, self, selectors.version_list(graph=graph), VersionSummarySerializer)

    class YamlSaveQuery(serializers.Serializer):
        message = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=500,
            help_text="With a YAML body: the version's message",
        )
        base_version = DbIntegerField(
            required=False,
            default=None,
            help_text="With a YAML body: the version the edit started from (or If-Match)",
        )

    @extend_schema(
        operation_id="graphs_versions_create",
        request={"application/json": VersionSaveInput, "application/yaml": OpenApiTypes.STR},
        parameters=[
            YamlSaveQuery,
            OpenApiParameter(
                "If-Match",
                str,
                OpenApiParameter.HEADER,
                description='The ETag ("v{n}") of the version the edit started from',
            ),
        ],
        responses={201: VersionOutputSerializer, 200: VersionOutputSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        """Save a new immutable version. Send the version the edit started from (`If-Match: "v{n}"`
        or `base_version`): a stale base answers 409 with the latest number and the diff, and
        nothing is saved. Saving a manifest and layout identical to the latest returns that
        version (200) instead of a new one (201). Editors and the owner only.

        With `Content-Type: application/yaml` the body is the manifest itself (a file as
        `kubectl` takes it); `?message=` and `?base_version=` (or `If-Match`) say the rest, the
        latest version's canvas layout is kept, and YAML errors come back with line and column.
        """
        if isinstance(request.data, bytes):
            return self._save_yaml(request, name, request.data)
        data = self.VersionSaveInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        try:
            result = services.graph_version_create(
                graph=graph,
                manifest=data.validated_data["manifest"],
                layout=data.validated_data["layout"],
                author=request.user,
                message=data.validated_data["message"],
                base_version=base_version_from(request, data.validated_data["base_version"]),
            )
        except StaleVersion as stale:
            return stale_response(stale)
        return saved_response(result)

    def _save_yaml(self, request: Request, name: str, body: bytes) -> Response:
        query = self.YamlSaveQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        try:
            result = graph_version_from_text(
                graph=graph,
                source=body,
                author=request.user,
                message=query.validated_data["message"],
                base_version=base_version_from(request, query.validated_data["base_version"]),
            )
        except StaleVersion as stale:
            return stale_response(stale)
        return saved_response(result)


class GraphVersionDetailApi(APIView):
    @extend_schema(operation_id="graphs_versions_retrieve", responses=VersionOutputSerializer)
    def get(self, request: Request, name: str, number: VersionRef) -> Response:
        """One version: its manifest, layout, hash, validity and issues."""
        graph = selectors.graph_get(name=name, user=request.user)
        return Response(VersionOutputSerializer(selectors.version_get(graph=graph, number=number)).data)


class GraphVersionRollbackApi(APIView):
    class RollbackInput(serializers.Serializer):
        base_version = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=MAX_DB_INT,
            default=None,
            help_text="The latest version the client saw (or If-Match); 409 if someone saved since",
        )

    @extend_schema(
        operation_id="graphs_versions_rollback",
        request=RollbackInput,
        parameters=[
            OpenApiParameter(
                "If-Match",
                str,
                OpenApiParameter.HEADER,
                description='The ETag ("v{n}") of the latest version the client saw',
            )
        ],
        responses={201: VersionOutputSerializer, 200: VersionOutputSerializer},
    )
    def post(self, request: Request, name: str, number: VersionRef) -> Response:
        """Create a new version whose manifest and layout equal version `number`'s. Takes the same
        precondition as a save (409 with the diff when stale). Editors and the owner only.
        """
        data = self.RollbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        try:
            result = services.graph_version_rollback(
                graph=graph,
                number=selectors.version_number(graph=graph, number=number),
                author=request.user,
                base_version=base_version_from(request, data.validated_data["base_version"]),
            )
        except StaleVersion as stale:
            return stale_response(stale)
        return saved_response(result)


# ``from`` is a Python keyword, so this filter's fields are given by name.
_DiffQuery = type(
    "DiffQuery",
    (serializers.Serializer,),
    {
        "from": VersionRefField(help_text="The version the diff starts from (a number or `latest`)"),
        "to": VersionRefField(help_text="The version the diff ends at (a number or `latest`)"),
    },
)


class GraphDiffApi(APIView):
    @extend_schema(operation_id="graphs_diff", parameters=[_DiffQuery], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, name: str) -> Response:
        """The semantic diff between versions `from` and `to`: nodes, steps and fields added,
        removed and changed.
        """
        query = _DiffQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        a, b = (
            selectors.version_get(graph=graph, number=query.validated_data[key]) for key in ("from", "to")
        )
        changes = language.diff(
            language.manifest_from_document(a.manifest), language.manifest_from_document(b.manifest)
        )
        return Response({"from": a.number, "to": b.number, **changes.to_dict()})
