"""The graph store's REST API: one thin view per path; services write, selectors read."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound
from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, parse_db_int
from config.parsers import RawTextParser
from config.types import AuthedRequest as Request
from graphs import selectors, services, spec
from graphs.errors import StaleVersion
from graphs.imports import graph_import
from graphs.models import GraphMember
from graphs.serializers import (
    AuditEventOutputSerializer,
    GraphListItemSerializer,
    GraphOutputSerializer,
    ImportResultSerializer,
    IssueSerializer,
    MemberOutputSerializer,
    VersionOutputSerializer,
    VersionSummarySerializer,
)

_IF_MATCH = re.compile(r'^\s*(?:W/)?"?v?([0-9]+)"?\s*$')


def etag(graph_version_number: int | None) -> str:
    return f'"v{graph_version_number or 0}"'


def base_version_from(request: Request, body_value: int | None) -> int | None:
    """The version a save was edited from: ``If-Match: "v{n}"`` or ``base_version`` in the body."""
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return body_value
    match = _IF_MATCH.match(header)
    number = parse_db_int(match.group(1)) if match is not None else None
    if number is None:
        raise BadRequest(f'If-Match must look like "v3" (the ETag of the graph), got {header[:80]!r}.')
    if body_value is not None and body_value != number:
        raise BadRequest(f"If-Match says version {number} but base_version says {body_value}.")
    return number


class _ObjectField(serializers.JSONField):
    """A JSON object (dict); anything else is refused with a clear message."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError(f"Must be a JSON object, not {type(value).__name__}.")
        return value


class _TruncatedCharField(serializers.CharField):
    """Text cut to ``max_chars`` characters rather than refused (a search box's query)."""

    def __init__(self, *, max_chars: int, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, trim_whitespace=False, **kwargs)
        self.max_chars = max_chars

    def to_internal_value(self, data: Any) -> str:
        return str(super().to_internal_value(data))[: self.max_chars]


class _FlagField(serializers.BooleanField):
    """A yes/no query parameter (true/false, 1/0, yes/no, on/off); empty (``?mine=``) means no."""

    def to_internal_value(self, data: Any) -> bool:
        return False if data == "" else bool(super().to_internal_value(data))


def _text_param(default: str | None, help_text: str) -> serializers.CharField:
    """An optional text query parameter, taken as sent (blank allowed, spaces kept)."""
    return serializers.CharField(
        required=False, default=default, allow_blank=True, trim_whitespace=False, help_text=help_text
    )


def _saved(result: services.SaveResult) -> Response:
    """201 with a new version, 200 with the identical latest one; its ETag is the next precondition."""
    response = Response(
        VersionOutputSerializer(result.version).data,
        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
    )
    response["ETag"] = etag(result.version.number)
    return response


def _stale(stale: StaleVersion) -> Response:
    """409 for a save from an old base: the latest number, the latest version and the diff to it."""
    body = stale.body()
    body["latest"] = VersionOutputSerializer(stale.latest).data if stale.latest else None
    return Response(body, status=status.HTTP_409_CONFLICT)


class GraphListCreateApi(APIView):
    class GraphCreateInput(serializers.Serializer):
        name = serializers.CharField(required=False, allow_blank=False, max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)
        manifest = _ObjectField(required=False)
        layout = _ObjectField(required=False, default=dict)
        message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    class GraphListFilter(serializers.Serializer):
        search = _TruncatedCharField(
            required=False, default="", max_chars=200, help_text="Substring of the name or description"
        )
        archived = _FlagField(required=False, default=False, help_text="List archived graphs instead")
        mine = _FlagField(required=False, default=False, help_text="Only graphs I own or edit")

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

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            # A misspelt setting must not look saved: name what cannot be changed here.
            unknown = (
                sorted(set(self.initial_data) - set(self.fields))
                if isinstance(self.initial_data, dict)
                else []
            )
            if unknown:
                raise serializers.ValidationError(
                    {key: "not a setting of the graph (settable: require_passing_tests)" for key in unknown}
                )
            return attrs

    @extend_schema(
        operation_id="graphs_update",
        request=GraphSettingsInput,
        responses=GraphOutputSerializer,
        examples=[OpenApiExample("Gate exports on tests", value={"require_passing_tests": True})],
    )
    def patch(self, request: Request, name: str) -> Response:
        """Change the graph's settings: `require_passing_tests` (export only versions whose suite
        passed on the current test cases). The owner and editors; audited."""
        data = self.GraphSettingsInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        services.graph_settings_update(graph=graph, actor=request.user, **data.validated_data)
        return Response(GraphOutputSerializer(selectors.graph_get(name=name, user=request.user)).data)

    @extend_schema(operation_id="graphs_archive", responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        """Archive the graph: it leaves the list, its versions and runs stay readable."""
        graph = selectors.graph_get(name=name, user=request.user)
        services.ensure_owner(graph, request.user)
        services.graph_archive(graph=graph, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GraphRestoreApi(APIView):
    @extend_schema(operation_id="graphs_restore", request=None, responses=GraphOutputSerializer)
    def post(self, request: Request, name: str) -> Response:
        """Bring an archived graph back into the list. Owner only."""
        graph = selectors.graph_get(name=name, user=request.user)
        services.ensure_owner(graph, request.user)
        graph = services.graph_restore(graph=graph, actor=request.user)
        return Response(GraphOutputSerializer(selectors.graph_get(name=name, user=request.user)).data)


class GraphVersionListCreateApi(APIView):
    class VersionSaveInput(serializers.Serializer):
        manifest = _ObjectField()
        layout = _ObjectField(required=False, default=dict)
        message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
        base_version = serializers.IntegerField(
            required=False, allow_null=True, min_value=0, max_value=MAX_DB_INT, default=None
        )

    @extend_schema(operation_id="graphs_versions_list", responses=paginated(VersionSummarySerializer))
    def get(self, request: Request, name: str) -> Response:
        """The graph's versions, newest first, as summaries (no manifests)."""
        graph = selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        return paginate(request, self, selectors.version_list(graph=graph), VersionSummarySerializer)

    @extend_schema(
        operation_id="graphs_versions_create",
        request=VersionSaveInput,
        parameters=[
            OpenApiParameter(
                "If-Match",
                str,
                OpenApiParameter.HEADER,
                description='The ETag ("v{n}") of the version the edit started from',
            )
        ],
        responses={201: VersionOutputSerializer, 200: VersionOutputSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        """Save a new immutable version. Send the version the edit started from (`If-Match: "v{n}"`
        or `base_version`): a stale base answers 409 with the latest number and the diff, and
        nothing is saved. Saving a manifest and layout identical to the latest returns that
        version (200) instead of a new one (201). Editors and the owner only.
        """
        data = self.VersionSaveInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        services.ensure_can_write(graph, request.user)
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
            return _stale(stale)
        return _saved(result)


class GraphVersionDetailApi(APIView):
    @extend_schema(operation_id="graphs_versions_retrieve", responses=VersionOutputSerializer)
    def get(self, request: Request, name: str, number: int) -> Response:
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
    def post(self, request: Request, name: str, number: int) -> Response:
        """Create a new version whose manifest and layout equal version `number`'s. Takes the same
        precondition as a save (409 with the diff when stale). Editors and the owner only.
        """
        data = self.RollbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        services.ensure_can_write(graph, request.user)
        try:
            result = services.graph_version_rollback(
                graph=graph,
                number=number,
                author=request.user,
                base_version=base_version_from(request, data.validated_data["base_version"]),
            )
        except StaleVersion as stale:
            return _stale(stale)
        return _saved(result)


# ``from`` is a Python keyword, so this filter's fields are given by name.
_DiffQuery = type(
    "DiffQuery",
    (serializers.Serializer,),
    {
        "from": DbIntegerField(help_text="The version the diff starts from"),
        "to": DbIntegerField(help_text="The version the diff ends at"),
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
        changes = spec.diff(spec.manifest_from_document(a.manifest), spec.manifest_from_document(b.manifest))
        return Response({"from": a.number, "to": b.number, **changes.to_dict()})


class GraphVersionExportApi(APIView):
    class ExportQuery(serializers.Serializer):
        format = serializers.ChoiceField(choices=["yaml", "json"], default="yaml", required=False)
        force = serializers.BooleanField(
            required=False, default=False, help_text="Export although the test gate is closed (needs reason)"
        )
        reason = _text_param("", "Why the test gate is forced; the audit log keeps it")

    @extend_schema(
        operation_id="graphs_versions_export",
        parameters=[ExportQuery],
        responses={
            (200, "application/yaml"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    def get(self, request: Request, name: str, number: int) -> HttpResponse:
        """The version as a deployable InferenceGraph, YAML (default) or JSON, ready for `kubectl
        apply`. A version with errors KServe would reject answers 422 with its issues. When the
        graph requires passing tests, a version without a passing suite run on the current cases
        answers 409 (`code: tests_required`) unless `force=1&reason=...` (audited).
        """
        query = self.ExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["format"]
        graph = selectors.graph_get(name=name, user=request.user)
        version = selectors.version_get(graph=graph, number=number)
        services.export_gate(
            graph=graph,
            version=version,
            actor=request.user,
            force=query.validated_data["force"],
            reason=query.validated_data["reason"],
        )
        text, content_type = services.version_export(graph=graph, version=version, fmt=fmt)
        response = HttpResponse(text, content_type=content_type)
        response["Content-Disposition"] = f'inline; filename="{graph.name}-v{version.number}.{fmt}"'
        return response


class GraphImportApi(APIView):
    parser_classes = [RawTextParser]

    class ImportQuery(serializers.Serializer):
        graph = _text_param(None, "Add the manifest as a new version of this graph")
        name = _text_param(None, "Create the graph under this name")
        message = _text_param("", "The message of the new versions")

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
            return _stale(stale)
        return Response(ImportResultSerializer(result).data, status=status.HTTP_201_CREATED)


class ValidateApi(APIView):
    class ValidateInput(serializers.Serializer):
        manifest = _ObjectField()

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
        misbehave on.
        """
        data = self.ValidateInput(data=request.data)
        data.is_valid(raise_exception=True)
        issues = [
            i.to_dict() for i in spec.validate(spec.manifest_from_document(data.validated_data["manifest"]))
        ]
        return Response({"valid": not any(i["severity"] == "error" for i in issues), "issues": issues})


class GraphMemberListCreateApi(APIView):
    class MemberAddInput(serializers.Serializer):
        user = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(
            choices=GraphMember.Role.choices,
            default=GraphMember.Role.EDITOR,
            help_text="viewer: reads and runs; editor (default): also saves and rolls back",
        )

    @extend_schema(operation_id="graphs_members_list", responses=MemberOutputSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        """The graph's members and their roles (`viewer` reads and runs, `editor` also saves and
        rolls back).
        """
        graph = selectors.graph_get(name=name, user=request.user)
        return Response(MemberOutputSerializer(graph.members.select_related("user"), many=True).data)

    @extend_schema(
        operation_id="graphs_members_create", request=MemberAddInput, responses={201: MemberOutputSerializer}
    )
    def post(self, request: Request, name: str) -> Response:
        """Add a member, or change a member's role. Owner only; an unknown role is 400."""
        data = self.MemberAddInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        user = get_user_model().objects.filter(username=data.validated_data["user"]).first()
        if user is None:
            raise BadRequest(f"There is no user named {data.validated_data['user']!r}.")
        member = services.graph_member_add(
            graph=graph, user=user, actor=request.user, role=data.validated_data["role"]
        )
        return Response(MemberOutputSerializer(member).data, status=status.HTTP_201_CREATED)


class GraphMemberDeleteApi(APIView):
    @extend_schema(operation_id="graphs_members_destroy", responses={204: None})
    def delete(self, request: Request, name: str, username: str) -> Response:
        """Remove a member from the graph (they keep read access, as every signed-in user). Owner only."""
        graph = selectors.graph_get(name=name, user=request.user)
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise NotFound(f"There is no user named {username!r}.")
        services.graph_member_remove(graph=graph, user=user, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GraphAuditListApi(APIView):
    @extend_schema(operation_id="graphs_audit_list", responses=paginated(AuditEventOutputSerializer))
    def get(self, request: Request, name: str) -> Response:
        """The graph's audit log, newest first: who created, saved, rolled back, archived and shared
        it.
        """
        graph = selectors.graph_get(name=name, user=request.user)
        return paginate(request, self, selectors.audit_list(graph=graph), AuditEventOutputSerializer)
