"""The graph store's REST API: one thin view per path; services write, selectors read."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound
from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, VersionRef, VersionRefField, parse_db_int
from config.parsers import YAML_PARSERS, RawTextParser, StrictJSONParser
from config.types import AuthedRequest as Request
from graphs import selectors, services, spec, tokens
from graphs.errors import StaleVersion
from graphs.imports import graph_import, graph_version_from_text
from graphs.models import GraphMember
from graphs.serializers import (
    ApiTokenCreatedSerializer,
    ApiTokenOutputSerializer,
    AuditEventOutputSerializer,
    GraphListItemSerializer,
    GraphOutputSerializer,
    ImportResultSerializer,
    IssueSerializer,
    MemberOutputSerializer,
    VersionOutputSerializer,
    VersionSummarySerializer,
)
from graphs.spec import issue_dict
from graphs.spec.release_rules import release_issues, upgrade_changes
from graphs.spec.releases import (
    DEFAULT_RELEASE,
    Release,
    UnknownRelease,
    get_release,
    release_names,
    releases_between,
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


def _refuse_unknown(serializer: serializers.Serializer, message: str) -> None:
    """Raise a ValidationError naming every key of the body that is not one of ``serializer``'s fields."""
    data = serializer.initial_data
    unknown = sorted(set(data) - set(serializer.fields)) if isinstance(data, dict) else []
    if unknown:
        raise serializers.ValidationError({key: message for key in unknown})


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
            _refuse_unknown(
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


class GraphVersionListCreateApi(APIView):
    parser_classes = [StrictJSONParser, *YAML_PARSERS]

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
            return _stale(stale)
        return _saved(result)

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
            return _stale(stale)
        return _saved(result)


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
            return _stale(stale)
        return _saved(result)


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
        changes = spec.diff(spec.manifest_from_document(a.manifest), spec.manifest_from_document(b.manifest))
        return Response({"from": a.number, "to": b.number, **changes.to_dict()})


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
        old = _release_of(query.validated_data["from"])
        new = _release_of(query.validated_data.get("to")) or DEFAULT_RELEASE
        assert old is not None  # a required field
        graph = selectors.graph_get(name=name, user=request.user)
        version = selectors.version_get(graph=graph, number=number)
        manifest = spec.manifest_from_document(version.manifest)
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


_EXPORT_FORMAT_HELP = "yaml (default) or json"


def _release_field() -> serializers.CharField:
    return serializers.CharField(
        required=False,
        max_length=16,
        help_text="A KServe release (" + ", ".join(release_names()) + "): check and write the manifest for "
        "its CRD (default: the newest)",
    )


def _release_of(value: str | None) -> Release | None:
    if not value:
        return None
    try:
        return get_release(value)
    except UnknownRelease as exc:
        raise BadRequest(
            str(exc), issues=[{"severity": "error", "code": "release.unknown", "path": "kserve_version",
                               "message": str(exc)}]
        ) from None  # fmt: skip


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
        kserve_version = _release_field()

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
        kserve_version = _release_field()

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            # A misspelt field ("forced") must not export as if it were not there.
            _refuse_unknown(self, "not a field of an export (format, force, reason, kserve_version)")
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
        release = _release_of(query.validated_data.get("kserve_version"))
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
        release = _release_of(data.validated_data.get("kserve_version"))
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
    class ServiceContractInput(serializers.Serializer):
        protocol = serializers.ChoiceField(choices=["v1", "v2", "unknown"])
        inputs = serializers.ListField(child=_ObjectField(), required=False, allow_null=True, max_length=1000)
        outputs = serializers.ListField(
            child=_ObjectField(), required=False, allow_null=True, max_length=1000
        )

    class ValidateInput(serializers.Serializer):
        manifest = _ObjectField()
        services = serializers.DictField(
            child=serializers.DictField(),
            required=False,
            help_text="What is known of the services (a Test connection's results): serviceName or "
            "serviceUrl -> {protocol, inputs, outputs}; edge-contract warnings use it",
        )
        kserve_version = _release_field()

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
        manifest = spec.manifest_from_document(data.validated_data["manifest"])
        services = data.validated_data.get("services")
        release = _release_of(data.validated_data.get("kserve_version"))
        issues = [i.to_dict() for i in spec.issues_with_contracts(manifest, services)]
        if release is not None:
            issues += [i.to_dict() for i in release_issues(manifest, release)]
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
        return Response(MemberOutputSerializer(selectors.member_list(graph=graph), many=True).data)

    @extend_schema(
        operation_id="graphs_members_create", request=MemberAddInput, responses={201: MemberOutputSerializer}
    )
    def post(self, request: Request, name: str) -> Response:
        """Add a member, or change a member's role. Owner only; an unknown role is 400."""
        data = self.MemberAddInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        user = selectors.user_by_name(data.validated_data["user"])
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
        user = selectors.user_by_name(username)
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


class ApiTokenListCreateApi(APIView):
    class TokenCreateInput(serializers.Serializer):
        name = serializers.CharField(
            max_length=100, help_text="What the token is for, e.g. the script or machine"
        )
        expires_at = serializers.DateTimeField(
            required=False, allow_null=True, help_text="When it stops working; none (the default) for never"
        )

    @extend_schema(operation_id="tokens_list", responses=paginated(ApiTokenOutputSerializer))
    def get(self, request: Request) -> Response:
        """Your personal API tokens, newest first, without their keys."""
        return paginate(request, self, tokens.api_token_list(user=request.user), ApiTokenOutputSerializer)

    @extend_schema(
        operation_id="tokens_create",
        request=TokenCreateInput,
        responses={201: ApiTokenCreatedSerializer},
        examples=[
            OpenApiExample(
                "A token for CI that expires",
                value={"name": "ci-pipeline", "expires_at": "2030-01-01T00:00:00Z"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        """Create a personal API token. The answer carries its `key`, the only time it is shown:
        send it as `Authorization: Token <key>`. An expiry in the past is 400."""
        data = self.TokenCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        created = tokens.api_token_create(
            user=request.user,
            name=data.validated_data["name"],
            expires_at=data.validated_data.get("expires_at"),
        )
        body = {**ApiTokenOutputSerializer(created.token).data, "key": created.key}
        # The one answer with the key in it: no cache or proxy may keep a copy.
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})


class ApiTokenDeleteApi(APIView):
    @extend_schema(operation_id="tokens_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        """Revoke one of your API tokens: the next request with its key is 401. Another user's
        token is 404."""
        tokens.api_token_revoke(user=request.user, token_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
